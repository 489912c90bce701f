// CLI overhead and memory benchmark: `pxl pdist` of N PCFs (default 2,000 of 100 breakpoints,
// float64, square .npy) end to end, against the pdist call it makes and a single-thread loop, all
// in the same run on the same machine. Issue 16's goals: the command costs at most 15% more than
// the call (reading, computing and writing overlap), is at least 8.5x the loop, and its peak
// resident memory (maxRSS) stays at most 100 MiB.
//   npm run bench:cli                 (builds first; PXL_BENCH_N=2000 PXL_BENCH_REPEATS=5)
//
// - call: pdist(set, { out, layout: 'square' }) in this process on the set already read, after a
//   warm-up, so its worker threads are running: what the command adds is start-up, loading,
//   reading the JSON input, starting the workers, and whatever of the writing does not overlap.
// - command: `bin/pxl.js pdist in.json -o out.npy -q` as a fresh process, run as an executable
//   through its first line as a shell runs it, with this node first on
//   PATH; wall time, and its peak RSS from /usr/bin/time -f %M where that exists (else null). Every
//   command runs with PXL_TIMELINE=1 (src/cli/timeline.ts): `stages` are the medians of the
//   milliseconds since its start at which it reached each stage.
// - loop: every pair once on one thread, the plain way (issue 16's straightforward loop,
//   bench/lib/loops.mjs); pairKernelLoop: the same through pxl's branch-free JS pair kernels, the
//   stricter baseline.
// Samples interleave call and command, so load on the shared machine hits both alike.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { destroyDefaultContext, pdist } from 'pxl';
import { pairKernelLoop, plainLoop } from './lib/loops.mjs';
import { median, printJson, sig } from './lib/stats.mjs';

const N = Number(process.env.PXL_BENCH_N ?? 2000);
const POINTS = 100;
const REPEATS = Number(process.env.PXL_BENCH_REPEATS ?? 5);
const LOOP_REPEATS = Number(process.env.PXL_BENCH_LOOP_REPEATS ?? 2);
const pxl = fileURLToPath(new URL('../bin/pxl.js', import.meta.url));
const TIME = '/usr/bin/time';

// Windows runs no first lines: there the command is node with the script.
const command = process.platform === 'win32' ? [process.execPath, pxl] : [pxl];
const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`, PXL_TIMELINE: '1' };

function runPxl(args) {
  const withTime = existsSync(TIME);
  const argv = withTime ? [TIME, ['-f', '%M', ...command, ...args]] : [command[0], [...command.slice(1), ...args]];
  const t0 = performance.now();
  const r = spawnSync(argv[0], argv[1], { encoding: 'utf8', env });
  const seconds = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`pxl ${args.join(' ')} exited with ${r.status}: ${r.stderr}`);
  const kib = withTime ? Number(/(\d+)\s*$/.exec(r.stderr)?.[1]) : NaN;
  const stages = {};
  for (const m of r.stderr.matchAll(/^pxl timeline: ([\d.]+) ms ([a-z ]+),/gm)) stages[m[2]] = Number(m[1]);
  return { seconds, maxRssMiB: Number.isFinite(kib) ? kib / 1024 : null, stages };
}

const dir = mkdtempSync(join(os.tmpdir(), 'pxl-bench-cli-'));
try {
  const input = join(dir, 'pcfs.json');
  runPxl(['random-pcfs', '--n', String(N), '--points', String(POINTS), '--seed', '1', '-o', input, '-q']);
  const { readPcfFile } = await import('pxl');
  const set = await readPcfFile(input);
  const callOut = join(dir, 'call.npy');
  const cmdOut = join(dir, 'command.npy');
  await pdist(set, { out: callOut, layout: 'square' });
  runPxl(['pdist', input, '-o', cmdOut, '-q']);
  const call = [];
  const command = [];
  const rss = [];
  const stages = [];
  for (let r = 0; r < REPEATS; r++) {
    const t0 = performance.now();
    await pdist(set, { out: callOut, layout: 'square' });
    call.push((performance.now() - t0) / 1000);
    const c = runPxl(['pdist', input, '-o', cmdOut, '-q']);
    command.push(c.seconds);
    if (c.maxRssMiB !== null) rss.push(c.maxRssMiB);
    stages.push(c.stages);
  }
  await destroyDefaultContext();
  const loop = [];
  const kernelLoop = [];
  for (let r = 0; r < LOOP_REPEATS; r++) {
    for (const [runs, fn] of [[loop, plainLoop], [kernelLoop, pairKernelLoop]]) {
      const t0 = performance.now();
      fn(set, 1);
      runs.push((performance.now() - t0) / 1000);
    }
  }
  const m = { call: median(call), command: median(command), loop: median(loop), pairKernelLoop: median(kernelLoop) };
  const peak = rss.length > 0 ? median(rss) : null;
  printJson({
    bench: 'cli', date: new Date().toISOString(), node: process.version, cpus: os.availableParallelism(),
    loadAverage: os.loadavg().map((x) => sig(x, 3)), n: N, points: POINTS, output: 'square float64 .npy', repeats: REPEATS,
    seconds: { call: sig(m.call, 3), command: sig(m.command, 3), loop: sig(m.loop, 3), pairKernelLoop: sig(m.pairKernelLoop, 3) },
    samples: { call: call.map((x) => sig(x, 3)), command: command.map((x) => sig(x, 3)), loop: loop.map((x) => sig(x, 3)), pairKernelLoop: kernelLoop.map((x) => sig(x, 3)) },
    ratios: {
      commandOverCall: sig(m.command / m.call, 3),
      loopOverCommand: sig(m.loop / m.command, 3),
      loopOverCall: sig(m.loop / m.call, 3),
      pairKernelLoopOverCommand: sig(m.pairKernelLoop / m.command, 3),
      pairKernelLoopOverCall: sig(m.pairKernelLoop / m.call, 3),
    },
    commandMaxRssMiB: peak === null ? null : { median: sig(peak, 4), samples: rss.map((x) => sig(x, 4)) },
    stagesMs: Object.fromEntries(Object.keys(stages[0] ?? {}).map((k) => [k, sig(median(stages.map((s) => s[k])), 3)])),
    goals: {
      commandAtMost1_15xCall: m.command / m.call <= 1.15,
      commandAtLeast8_5xLoop: m.loop / m.command >= 8.5,
      maxRssAtMost100MiB: peak === null ? null : peak <= 100,
    },
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}

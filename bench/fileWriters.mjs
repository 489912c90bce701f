// The file writers in the call: `pdist(set, { out, layout: 'square' })` in a warm process,
// PXL_FILE_WRITER=main, =thread (tiles written as they complete) and =file-order (blocks held until
// their stretch of the file is complete, written front to back), samples interleaved (main,
// thread, file-order, then the other way round, ...) so load on the shared machine hits all alike. Per sample: wall time, CPU time of the whole
// process (all threads), the event loop's longest stall (monitorEventLoopDelay at 1 ms resolution).
//   npm run bench:fileWriters          (builds first)
//   PXL_BENCH_SIZES=2000x20,2800x20,2000x100,5000x20 (N x breakpoints)  PXL_BENCH_REPEATS=7
// Prints one JSON document: per size and writer the medians and ranges, main / thread and
// thread / file-order.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { destroyDefaultContext, pdist, randomPcfs } from 'pxl';
import { median, printJson, sig } from './lib/stats.mjs';

const SIZES = (process.env.PXL_BENCH_SIZES ?? '2000x20,2800x20,2000x100,5000x20').split(',').map((s) => s.split('x').map(Number));
const REPEATS = Number(process.env.PXL_BENCH_REPEATS ?? 7);
const WRITERS = ['main', 'thread', 'file-order'];

async function sample(set, out, writer) {
  process.env.PXL_FILE_WRITER = writer;
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await pdist(set, { out, layout: 'square' });
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  delay.disable();
  return { seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, stallMs: delay.max / 1e6 };
}

const summary = (xs) => ({ median: sig(median(xs)), min: sig(Math.min(...xs)), max: sig(Math.max(...xs)) });

const dir = mkdtempSync(join(os.tmpdir(), 'pxl-bench-writers-'));
try {
  const sizes = [];
  for (const [n, points] of SIZES) {
    const set = randomPcfs({ n, points, seed: 1 });
    const out = join(dir, `d${n}x${points}.npy`);
    for (const writer of WRITERS) await sample(set, out, writer);
    const samples = Object.fromEntries(WRITERS.map((w) => [w, []]));
    const load = [];
    for (let r = 0; r < REPEATS; r++) {
      load.push(os.loadavg()[0]);
      for (const writer of r % 2 === 0 ? WRITERS : [...WRITERS].reverse()) samples[writer].push(await sample(set, out, writer));
    }
    const of = (writer, key) => samples[writer].map((s) => s[key]);
    const writers = {};
    for (const writer of WRITERS) {
      writers[writer] = { seconds: summary(of(writer, 'seconds')), cpuSeconds: summary(of(writer, 'cpuSeconds')), stallMs: summary(of(writer, 'stallMs')), samples: of(writer, 'seconds').map((s) => sig(s)) };
    }
    sizes.push({ n, points, fileMiB: sig((128 + n * n * 8) / 2 ** 20), load: load.map((l) => sig(l, 3)), mainOverThread: sig(median(of('main', 'seconds')) / median(of('thread', 'seconds'))), threadOverFileOrder: sig(median(of('thread', 'seconds')) / median(of('file-order', 'seconds'))), ...writers });
  }
  printJson({ node: process.version, cpus: os.cpus().length, repeats: REPEATS, sizes });
} finally {
  delete process.env.PXL_FILE_WRITER;
  await destroyDefaultContext();
  rmSync(dir, { recursive: true, force: true });
}

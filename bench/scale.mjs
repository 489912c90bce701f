// pdist at scale, to an .npy file: for N = 5,000, 10,000 and 20,000 PCFs of 20 breakpoints (and
// 40,000 with --big), the square float64 result streamed to disk against the same computation held
// in memory, with the disk's own sequential write speed measured in the same run as the baseline.
// Each run is its own child process, so peak RSS is that run's alone. Each size runs --reps times
// (default 2), the in-memory and the file run taking turns, and the medians are reported with every
// run's numbers and the load average around them: on a shared machine one run says little. Prints JSON.
//
//   npm run bench:scale                 # 5k, 10k, 20k
//   npm run bench:scale -- --big        # adds 40k (a 12.8 GB file)
//   node bench/scale.mjs --sizes 2000,4000 --reps 3 --dir /mnt/fast
//   node bench/scale.mjs --help
import { spawnSync } from 'node:child_process';
import { openSync, writeSync, fdatasyncSync, closeSync, rmSync, mkdtempSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { growthPerDoubling } from './lib/stats.mjs';

const POINTS = 20;
/** The event-loop delay monitor's timer, in ms (monitorEventLoopDelay's resolution). */
const STALL_RESOLUTION_MS = 10;
/** Issue 14: the event loop never stalls for more than this. */
const STALL_GOAL_MS = 50;
const arg = (name) => {
  const k = process.argv.indexOf(name);
  return k < 0 ? undefined : process.argv[k + 1];
};

const USAGE = `Usage: node bench/scale.mjs [--sizes N,N,...] [--reps R] [--dir DIR] [--big]

pdist of N PCFs (20 breakpoints) to a square float64 .npy file in DIR (default: the system's
temporary directory) against the same pdist held in memory and the disk's sequential write speed,
each size R times (default 2). Sizes default to 5000,10000,20000; --big adds 40000 (a 12.8 GB
file). Prints one JSON document: per size pairsPerSecond, wallOverMemory, peakRssMiB,
maxEventLoopStallMs (beyond the monitor's 10 ms timer), diskMBps, withinTimeGoal, withinStallGoal
and withinGoal (both); growthPerDoubling between consecutive sizes
(each ratio taken per doubling of N, whatever the step between them).
`;

if (process.argv[2] !== '--child') {
  // A mistyped flag must not start minutes of runs and gigabytes of files with the defaults.
  const valued = new Set(['--sizes', '--reps', '--dir']);
  const args = process.argv.slice(2);
  for (let k = 0; k < args.length; k++) {
    if (args[k] === '--help' || args[k] === '-h') {
      process.stdout.write(USAGE);
      process.exit(0);
    }
    if (valued.has(args[k]) && args[k + 1] !== undefined) k++;
    else if (args[k] !== '--big') {
      process.stderr.write(`bench/scale: unknown or incomplete argument '${args[k]}'\n\n${USAGE}`);
      process.exit(2);
    }
  }
  const sizes = (args[args.indexOf('--sizes') + 1] ?? '').split(',');
  if (args.includes('--sizes') && !sizes.every((n) => /^\d+$/.test(n) && Number(n) >= 2)) {
    process.stderr.write(`bench/scale: --sizes takes whole numbers of at least 2, separated by commas, got '${sizes.join(',')}'\n`);
    process.exit(2);
  }
  // Number('abc') would run no repetition at all and print nulls; 1.5 would run two.
  const reps = args[args.indexOf('--reps') + 1] ?? '';
  if (args.includes('--reps') && !(/^\d+$/.test(reps) && Number(reps) >= 1)) {
    process.stderr.write(`bench/scale: --reps takes a whole number of at least 1, got '${reps}'\n`);
    process.exit(2);
  }
}

if (process.argv[2] === '--child') {
  // One measured run: node bench/scale.mjs --child <memory|file> <n> <path>
  const [, , , mode, nText, path] = process.argv;
  const { pdist, randomPcfs, destroyDefaultContext } = await import('../dist/index.js');
  const X = randomPcfs({ n: Number(nText), points: POINTS, seed: 1 });
  await pdist(X.count > 500 ? randomPcfs({ n: 500, points: POINTS, seed: 2 }) : X); // warm-up: workers, kernels
  const rssBefore = process.memoryUsage.rss();
  const delay = monitorEventLoopDelay({ resolution: STALL_RESOLUTION_MS });
  delay.enable();
  const cpu = process.cpuUsage();
  const started = performance.now();
  if (mode === 'file') await pdist(X, { out: path });
  else await pdist(X);
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  delay.disable();
  await destroyDefaultContext();
  process.stdout.write(JSON.stringify({
    seconds,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
    rssBeforeMiB: rssBefore / 2 ** 20,
    // The histogram holds the whole gap between two ticks of its timer: a loop that never stalls
    // reads the resolution itself, so the stall is what lies beyond it.
    maxEventLoopStallMs: Math.max(0, delay.max / 1e6 - STALL_RESOLUTION_MS),
    // CPU seconds of every thread of the process during the call: what the run costs, whatever the load.
    userSeconds: used.user / 1e6,
    systemSeconds: used.system / 1e6,
  }));
  process.exit(0);
}

const sizes = (arg('--sizes') ?? (process.argv.includes('--big') ? '5000,10000,20000,40000' : '5000,10000,20000')).split(',').map(Number);
const dir = mkdtempSync(join(arg('--dir') ?? tmpdir(), 'pxl-scale-'));

/**
 * Sequential write speed of the disk under `dir`: `bytes` in 1 MiB writes, then fdatasync. (8 MiB
 * writes, used before, cost the kernel's copy several times more per byte on the development
 * machine, the source no longer in cache: they made the disk look slower than it is.)
 */
function diskWrite(bytes) {
  const path = join(dir, 'disk-speed.bin');
  const chunk = new Uint8Array(1 << 20).fill(1);
  const fd = openSync(path, 'w');
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let done = 0; done < bytes; done += chunk.length) writeSync(fd, chunk);
  fdatasyncSync(fd);
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  closeSync(fd);
  rmSync(path);
  // The CPU seconds of this process while it wrote: the kernel's copy into the page cache and the
  // writeback fdatasync did itself (the flusher threads' share is nobody's).
  return { MBps: bytes / seconds / 1e6, userSeconds: used.user / 1e6, systemSeconds: used.system / 1e6 };
}

function child(mode, n) {
  const path = join(dir, `d${n}.npy`);
  const r = spawnSync(process.execPath, [new URL(import.meta.url).pathname, '--child', mode, String(n), path], { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (r.status !== 0) throw new Error(`the ${mode} run of N = ${n} failed: ${r.stderr}`);
  rmSync(path, { force: true });
  return JSON.parse(r.stdout);
}

const reps = Math.max(1, Number(arg('--reps') ?? 2));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const r3 = (x) => +x.toFixed(3);
const load = () => loadavg().map((x) => +x.toFixed(2));

const runs = [];
try {
  for (const n of sizes) {
    const pairs = (n * (n - 1)) / 2;
    const fileBytes = 128 + n * n * 8;
    const loadBefore = load();
    const memory = [];
    const file = [];
    const disk = [];
    for (let k = 0; k < reps; k++) {
      memory.push(child('memory', n));
      file.push(child('file', n));
      // The baseline: writing as many bytes as the result straight to the same disk. All of them:
      // a few GB fit in the page cache and its dirty-page allowance, so a shorter write measures
      // memory, not the disk (4 GB gave 1.3 GB/s here, where 12.8 GB run into writeback).
      disk.push(diskWrite(fileBytes));
    }
    const memorySeconds = median(memory.map((r) => r.seconds));
    const fileSeconds = median(file.map((r) => r.seconds));
    const diskMBps = median(disk.map((d) => d.MBps));
    const diskSeconds = fileBytes / 1e6 / diskMBps;
    const goalSeconds = Math.max(1.3 * memorySeconds, 1.1 * diskSeconds);
    runs.push({
      n,
      pairs,
      fileBytes,
      reps,
      memorySeconds: r3(memorySeconds),
      fileSeconds: r3(fileSeconds),
      pairsPerSecond: Math.round(pairs / fileSeconds),
      wallOverMemory: r3(fileSeconds / memorySeconds),
      diskMBps: +diskMBps.toFixed(1),
      diskSeconds: r3(diskSeconds),
      // Both goals of issue 14: the wall time, and no stall of any file run over 50 ms.
      withinTimeGoal: fileSeconds <= goalSeconds,
      withinStallGoal: file.every((r) => r.maxEventLoopStallMs <= STALL_GOAL_MS),
      withinGoal: fileSeconds <= goalSeconds && file.every((r) => r.maxEventLoopStallMs <= STALL_GOAL_MS),
      peakRssMiB: { file: Math.round(Math.max(...file.map((r) => r.peakRssMiB))), memory: Math.round(Math.max(...memory.map((r) => r.peakRssMiB))) },
      // The same computation held in memory, as the baseline of the stall: what the file adds is the difference.
      maxEventLoopStallMs: { file: +median(file.map((r) => r.maxEventLoopStallMs)).toFixed(1), memory: +median(memory.map((r) => r.maxEventLoopStallMs)).toFixed(1) },
      // CPU seconds of the file run over the in-memory run's: on a loaded machine the wall-time
      // ratio follows the load of the moment, this one the work.
      cpuOverMemory: r3(median(file.map((r) => r.userSeconds + r.systemSeconds)) / median(memory.map((r) => r.userSeconds + r.systemSeconds))),
      cpuSeconds: {
        file: { user: r3(median(file.map((r) => r.userSeconds))), system: r3(median(file.map((r) => r.systemSeconds))) },
        memory: { user: r3(median(memory.map((r) => r.userSeconds))), system: r3(median(memory.map((r) => r.systemSeconds))) },
        disk: { user: r3(median(disk.map((d) => d.userSeconds))), system: r3(median(disk.map((d) => d.systemSeconds))) },
      },
      each: {
        memorySeconds: memory.map((r) => r3(r.seconds)),
        fileSeconds: file.map((r) => r3(r.seconds)),
        diskMBps: disk.map((d) => +d.MBps.toFixed(1)),
        maxEventLoopStallMs: { file: file.map((r) => +r.maxEventLoopStallMs.toFixed(1)), memory: memory.map((r) => +r.maxEventLoopStallMs.toFixed(1)) },
      },
      loadAverage: { before: loadBefore, after: load() },
    });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
// Per doubling of N (4 times the pairs): the file run's wall time, its CPU seconds (the cost
// whatever the load), and the in-memory run's wall time, which says how far the computation itself
// grows by less than 4 (larger blocks cost less per pair) and so what the file run can follow.
const cpuOf = (r) => r.cpuSeconds.file.user + r.cpuSeconds.file.system;
// Sizes that are not one doubling apart (--sizes 5000,20000) give the ratio per doubling, not over
// the whole step.
const growth = runs.slice(1).map((r, k) => {
  const per = (from, to) => +growthPerDoubling(runs[k].n, from, r.n, to).toFixed(2);
  return {
    from: runs[k].n,
    to: r.n,
    doublings: +Math.log2(r.n / runs[k].n).toFixed(3),
    fileSecondsRatio: per(runs[k].fileSeconds, r.fileSeconds),
    fileCpuSecondsRatio: per(cpuOf(runs[k]), cpuOf(r)),
    memorySecondsRatio: per(runs[k].memorySeconds, r.memorySeconds),
  };
});
console.log(JSON.stringify({ bench: 'scale', points: POINTS, cpus: cpus().length, layout: 'square', dtype: 'float64', runs, growthPerDoubling: growth }, null, 2));

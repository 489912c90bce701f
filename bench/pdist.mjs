// pdist benchmark: pxl on all cores against single-thread loops in the same run.
// N PCFs of 100 breakpoints (t0 = 0, other times sorted uniform on [0, 10), values uniform on
// [0, 1), last value 0), p = 1 and p = 2 in float64, and p = 1 in float32 (computed in float32 by the
// float32 row kernels). Prints one JSON document.
//   npm run bench:pdist              (builds first; PXL_BENCH_SIZES=1000,2000 to pick sizes)
//
// Two single-thread baselines (bench/lib/loops.mjs), each over every pair once in the same run:
// the plain loop (issue 16's "straightforward single-thread JavaScript loop": `loop*` fields and
// `speedup`) and pxl's own branch-free JS pair kernels (`pairKernelLoop*` fields), the stricter of
// the two. Every entry of pxl's float64 result is compared with both (`maxAbsDiffFromLoops`).
//
// masspcf is a third baseline, measured in the same run where `python3 -c "import masspcf"`
// succeeds (bench/lib/masspcf.mjs): its pdist of the same PCFs, p = 1 and p = 2 in float64, on the
// CPU, each call timed in its own Python process and its result compared with pxl's. Elsewhere
// `masspcf.measured` is false with the reason, and no masspcf figure is printed.
//
// Cycles per merge step: a pair (i, j) walks len_i + len_j breakpoints, so a pdist makes
// (N - 1) * (all breakpoints) merge steps. `cyclesPerStepWall` charges every core for the whole
// wall time (cores x clock x seconds / steps); `cyclesPerStepCpu` charges the CPU time the process
// actually got (all its threads, from process.cpuUsage), which stays meaningful when other work
// shares the machine. The clock is /proc/cpuinfo's "cpu MHz" (null where there is none).
// `targets` are issue 16's, judged at N = 2,000 (the issue's size) where it was run, else at the
// largest N. Every figure printed is measured in this run.
import fs from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { createContext, pdist, randomPcfs } from 'pxl';
import { pairKernelLoop, plainLoop } from './lib/loops.mjs';
import { compareWithMasspcf, masspcfPdist, probeMasspcf } from './lib/masspcf.mjs';
import { median, printJson, sig } from './lib/stats.mjs';

const sizes = (process.env.PXL_BENCH_SIZES ?? '1000,2000,4000').split(',').map(Number);
const POINTS = 100;

function clockMHz() {
  try {
    const m = /^cpu MHz\s*:\s*([\d.]+)/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'));
    return m === null ? null : Number(m[1]);
  } catch {
    return null;
  }
}

/** The largest difference between pxl's result and a loop's (rows i > j at i(i-1)/2 + j). */
function maxAbsDiff(matrix, loop, n) {
  let worst = 0;
  let k = 0;
  for (let i = 1; i < n; i++) {
    for (let j = 0; j < i; j++) {
      const d = Math.abs(matrix.get(i, j) - loop[k++]);
      worst = d > worst || Number.isNaN(d) ? d : worst;
    }
  }
  return worst;
}

/** Wall seconds and CPU seconds (all threads of this process) of `fn`. */
async function timed(fn) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await fn();
  const wall = (performance.now() - t0) / 1e3;
  const c = process.cpuUsage(c0);
  return { value, wall, cpu: (c.user + c.system) / 1e6 };
}

const mhz = clockMHz();
let masspcf = probeMasspcf();
const MASSPCF_FIELDS = ['masspcfPairsPerSec', 'speedupOverMasspcf', 'masspcfMaxRelDiff', 'masspcfIdentical'];
const ctx = await createContext({ topology: { subs: os.availableParallelism(), clustersPerSub: 1, coresPerCluster: 1 } });
const cores = ctx.getAttribute('coreCount');
const report = {
  bench: 'pdist', date: new Date().toISOString(), node: process.version, cores, cpu: os.cpus()[0]?.model ?? null,
  clockMHz: mhz, loadAverage: os.loadavg().map((x) => sig(x, 3)), points: POINTS,
  masspcf: masspcf.available ? { measured: true, version: masspcf.version } : { measured: false, reason: masspcf.reason },
  results: [],
};
const perStep = (seconds, threads, steps) => (mhz === null ? null : sig((threads * seconds * mhz * 1e6) / steps, 3));
try {
  for (const n of sizes) {
    const sets = { float64: randomPcfs({ n, points: POINTS, seed: 1 }), float32: randomPcfs({ n, points: POINTS, seed: 1, dtype: 'float32' }) };
    const pairs = (n * (n - 1)) / 2;
    const steps = (n - 1) * sets.float64.offsets[n];
    const row = { n, pairs, mergeSteps: steps };
    const repeats = n <= 1000 ? 5 : n <= 2000 ? 3 : 1;
    for (const [key, dtype, p] of [['p1', 'float64', 1], ['p2', 'float64', 2], ['p1float32', 'float32', 1]]) {
      const set = sets[dtype];
      await pdist(randomPcfs({ n: 200, points: POINTS, seed: 2, dtype }), { context: ctx, p });
      const ours = [];
      const plain = [];
      const kernels = [];
      let diff = 0;
      for (let r = 0; r < repeats; r++) {
        const d = await timed(() => pdist(set, { context: ctx, p }));
        ours.push(d);
        if (dtype === 'float64') {
          for (const [runs, loop] of [[plain, plainLoop], [kernels, pairKernelLoop]]) {
            const ref = await timed(() => loop(set, p));
            runs.push({ wall: ref.wall, cpu: ref.cpu });
            diff = Math.max(diff, maxAbsDiff(d.value, ref.value, n));
          }
        }
      }
      const wall = median(ours.map((x) => x.wall));
      const cpu = median(ours.map((x) => x.cpu));
      let theirs;
      if (masspcf.available && dtype === 'float64') {
        try {
          const m = await masspcfPdist(set, p, repeats);
          const { maxRelDiff, identical } = compareWithMasspcf(ours.at(-1).value, m.dense);
          const mWall = median(m.seconds);
          theirs = { masspcfPairsPerSec: sig(pairs / mWall), speedupOverMasspcf: sig(mWall / wall, 3), masspcfMaxRelDiff: maxRelDiff, masspcfIdentical: identical };
        } catch (error) {
          // An installed masspcf whose API the harness does not know: the report says so, and the
          // figures of earlier sizes are dropped too, so that no size has them and another not.
          masspcf = { available: false, reason: `masspcf ${masspcf.version ?? ''} imports, but its pdist could not be run: ${error.message}` };
          report.masspcf = { measured: false, reason: masspcf.reason };
          for (const done of report.results) for (const k of ['p1', 'p2']) for (const f of MASSPCF_FIELDS) delete done[k][f];
          for (const k of ['p1', 'p2']) if (row[k] !== undefined) for (const f of MASSPCF_FIELDS) delete row[k][f];
        }
      }
      const entry = {
        pxlPairsPerSec: sig(pairs / wall),
        cyclesPerStepWall: perStep(wall, cores, steps),
        cyclesPerStepCpu: perStep(cpu, 1, steps),
      };
      if (plain.length > 0) {
        const loopWall = median(plain.map((x) => x.wall));
        const loopCpu = median(plain.map((x) => x.cpu));
        const kernelWall = median(kernels.map((x) => x.wall));
        const kernelCpu = median(kernels.map((x) => x.cpu));
        Object.assign(entry, {
          loopPairsPerSec: sig(pairs / loopWall),
          loopCyclesPerStepCpu: perStep(loopCpu, 1, steps),
          speedup: sig(loopWall / wall, 3),
          speedupPerCpuSecond: sig(loopCpu / cpu, 3),
          pairKernelLoopPairsPerSec: sig(pairs / kernelWall),
          pairKernelLoopCyclesPerStepCpu: perStep(kernelCpu, 1, steps),
          speedupOverPairKernelLoop: sig(kernelWall / wall, 3),
          speedupOverPairKernelLoopPerCpuSecond: sig(kernelCpu / cpu, 3),
          maxAbsDiffFromLoops: diff,
        });
      }
      if (theirs !== undefined) Object.assign(entry, theirs);
      row[key] = entry;
    }
    row.p2OverP1Time = sig(row.p1.pxlPairsPerSec / row.p2.pxlPairsPerSec, 3);
    // float32 over float64 from calls in turns (float64, float32, float64, ...), the median of the
    // ratios of each turn: the calls above ran minutes apart, so load from other work skewed
    // their ratio one way or the other.
    const turns = [];
    for (let r = 0; r < 2 * repeats + 1; r++) {
      const wide = await timed(() => pdist(sets.float64, { context: ctx }));
      const narrow = await timed(() => pdist(sets.float32, { context: ctx }));
      turns.push(wide.wall / narrow.wall);
    }
    row.float32OverFloat64 = sig(median(turns), 3);
    // The same ratio per CPU second of the process: what load from other work disturbs least.
    if (mhz !== null) row.float32OverFloat64PerCpuSecond = sig(row.p1.cyclesPerStepCpu / row.p1float32.cyclesPerStepCpu, 3);
    report.results.push(row);
  }
  const judged = report.results.find((r) => r.n === 2000) ?? report.results.at(-1);
  report.targets = {
    n: judged.n,
    p1AtLeast10xLoop: judged.p1.speedup >= 10,
    p2AtLeast10xLoop: judged.p2.speedup >= 10,
    float32AtLeast1_4xFloat64: judged.float32OverFloat64 >= 1.4,
    p1IdenticalToLoops: judged.p1.maxAbsDiffFromLoops === 0,
  };
  printJson(report);
} finally {
  await ctx.destroy();
}

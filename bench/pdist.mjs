// pdist benchmark: pxl on all cores against a straightforward single-thread loop in the same run.
// N PCFs of 100 breakpoints (t0 = 0, other times sorted uniform on [0, 10), values uniform on
// [0, 1), last value 0), float64, p = 1 and p = 2. Prints one JSON document.
//   npm run bench:pdist              (builds first; PXL_BENCH_SIZES=1000,2000 to pick sizes)
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { createContext, pdist, randomPcfs, integrationLimit } from 'pxl';
import { l1Pair, l2Pair } from '../dist/pcf/pairKernels.js';
import { median, printJson, sig } from './lib/stats.mjs';

const sizes = (process.env.PXL_BENCH_SIZES ?? '1000,2000,4000').split(',').map(Number);
const POINTS = 100;
const MASSPCF_CPU_P1_PAIRS_PER_SEC = 1.55e6; // masspcf's C++ CPU engine, N = 4000, this 2-core machine

/** The plain loop: every pair once, one thread, the same pair kernels pxl's cores run. */
function singleThread(set, p) {
  const { times, values, offsets, count } = set;
  const pair = p === 1 ? l1Pair : l2Pair;
  const upper = integrationLimit('float64');
  const out = new Float64Array((count * (count - 1)) / 2);
  let k = 0;
  for (let i = 1; i < count; i++) {
    for (let j = 0; j < i; j++) out[k++] = pair(times, values, offsets[i], offsets[i + 1], times, values, offsets[j], offsets[j + 1], upper);
  }
  return out;
}

const ctx = await createContext({ topology: { subs: os.availableParallelism(), clustersPerSub: 1, coresPerCluster: 1 } });
const report = { bench: 'pdist', date: new Date().toISOString(), node: process.version, cores: ctx.getAttribute('coreCount'), points: POINTS, results: [] };
try {
  for (const n of sizes) {
    const set = randomPcfs({ n, points: POINTS, seed: 1 });
    const pairs = (n * (n - 1)) / 2;
    const row = { n, pairs };
    for (const p of [1, 2]) {
      await pdist(randomPcfs({ n: 200, points: POINTS, seed: 2 }), { context: ctx, p });
      const repeats = n <= 1000 ? 5 : n <= 2000 ? 3 : 1;
      const ours = [];
      const base = [];
      let check = 0;
      for (let r = 0; r < repeats; r++) {
        let t0 = performance.now();
        const d = await pdist(set, { context: ctx, p });
        ours.push(pairs / ((performance.now() - t0) / 1e3));
        t0 = performance.now();
        const ref = singleThread(set, p);
        base.push(pairs / ((performance.now() - t0) / 1e3));
        check = Math.max(check, Math.abs(d.get(n - 1, 0) - ref[((n - 1) * (n - 2)) / 2]));
      }
      row[`p${p}`] = { pxlPairsPerSec: sig(median(ours)), singleThreadPairsPerSec: sig(median(base)), speedup: sig(median(ours) / median(base), 3), maxAbsDiffSpotCheck: check };
    }
    row.p2OverP1Time = sig(row.p1.pxlPairsPerSec / row.p2.pxlPairsPerSec, 3);
    report.results.push(row);
  }
  const largest = report.results.at(-1);
  report.reference = { masspcfCpuP1PairsPerSec: MASSPCF_CPU_P1_PAIRS_PER_SEC, masspcfP2SlowdownVsP1: 2.3 };
  report.targets = {
    fasterThanMasspcfP1: largest.p1.pxlPairsPerSec > MASSPCF_CPU_P1_PAIRS_PER_SEC,
    fasterThanMasspcfP2: largest.p2.pxlPairsPerSec > MASSPCF_CPU_P1_PAIRS_PER_SEC / 2.3,
    p2Within1_2xOfP1: largest.p2OverP1Time <= 1.2,
  };
  printJson(report);
} finally {
  await ctx.destroy();
}

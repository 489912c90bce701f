// The WebAssembly row kernel alone, float32 against float64: one thread, every pair of the lower
// triangle of N random PCFs (100 breakpoints, as bench/pdist.mjs), the two precisions alternating
// run by run in one process so that load from other work falls on both alike. Prints one JSON
// document with CPU-time medians and cycles per merge step (clock: /proc/cpuinfo's cpu MHz).
//   npm run bench:rowKernel          (builds first; PXL_BENCH_N, PXL_BENCH_RUNS to change N = 600, 9 runs)
import fs from 'node:fs';
import { randomPcfs, integrationLimit } from 'pxl';
import { WasmRows } from '../dist/pcf/wasm/wasmRows.js';
import { median, printJson, sig } from './lib/stats.mjs';

const n = Number(process.env.PXL_BENCH_N ?? 600);
const runs = Number(process.env.PXL_BENCH_RUNS ?? 9);
const POINTS = 100;
const mhz = Number(/^cpu MHz\s*:\s*([\d.]+)/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? NaN);

/** CPU seconds of one pass over the lower triangle, op 0 (L1) or 1 (L2). */
function pass(w, set, op, out) {
  const c0 = process.cpuUsage();
  for (let i = 1; i < set.count; i++) w.row(op, set, i, 0, i, out, 0);
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1e6;
}

const kinds = ['float64', 'float32'].map((dtype) => {
  const set = randomPcfs({ n, points: POINTS, seed: 1, dtype });
  const w = new WasmRows(dtype);
  w.setColumns(set, 0, n, POINTS, integrationLimit(dtype));
  return { dtype, set, w, out: dtype === 'float32' ? new Float32Array(n) : new Float64Array(n), seconds: [[], []] };
});
// Merge steps of the lower triangle: pair (i, j) walks len_i + len_j breakpoints.
const steps = (n - 1) * kinds[0].set.offsets[n];
for (const k of kinds) for (const op of [0, 1]) pass(k.w, k.set, op, k.out); // warm up
for (let r = 0; r < runs; r++) for (const op of [0, 1]) for (const k of kinds) k.seconds[op].push(pass(k.w, k.set, op, k.out));
const report = { bench: 'rowKernel', date: new Date().toISOString(), node: process.version, clockMHz: mhz, n, points: POINTS, runs, mergeSteps: steps, results: {} };
for (const k of kinds) {
  report.results[k.dtype] = Object.fromEntries(['L1', 'L2'].map((name, op) => [name, { cpuSeconds: sig(median(k.seconds[op]), 4), cyclesPerStep: sig((median(k.seconds[op]) * mhz * 1e6) / steps, 3) }]));
}
report.float32OverFloat64 = Object.fromEntries(['L1', 'L2'].map((name, op) => [name, sig(median(kinds[0].seconds[op]) / median(kinds[1].seconds[op]), 3)]));
printJson(report);

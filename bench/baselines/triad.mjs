// Baseline: STREAM-style triad y = a*x + y over float64 arrays of 16 Mi elements (128 MiB
// each), reported in GB/s counting 3 x 8 bytes per element (read x, read y, write y).
//
// The loop is built by `makeTriadKernel`, which binds the arrays and the bounds as
// closure-captured constants. It compiles a fresh function each time so that every kernel
// is the only closure of its code: V8 then specialises the optimised code to the captured
// values, which is worth about 2x over passing the arrays as arguments.

import { performance } from 'node:perf_hooks';
import { isMainThread, workerData } from 'node:worker_threads';
import { measure, waitUntil } from '../lib/stats.mjs';
import { isEntryModule, serveLaunches, startWorkers } from '../lib/workers.mjs';

const ROLE = 'pxl-bench-triad';
export const TRIAD_ELEMENTS = 16 * 1024 * 1024;
const A = 3;
const BYTES_PER_ELEMENT = 3 * 8;

const LINE = 16; // Int32 slots per 64-byte line
const GEN = 0 * LINE;
const DONE = 1 * LINE;
const READY = 2 * LINE;
const PARAMS = 3 * LINE; // [passes, stop]

// One sweep per call: wrapping the sweep in a second (passes) loop inside the same function
// makes V8 emit much slower code for the inner loop, so callers loop over calls instead.
const KERNEL_BODY = `
  return function triad() {
    for (let i = lo; i < hi; i++) y[i] = a * x[i] + y[i];
  };`;

let kernelSerial = 0;

/** A function `() => void` running one triad sweep over [lo, hi). */
export function makeTriadKernel(x, y, a, lo = 0, hi = x.length) {
  // The serial makes every source text distinct, so V8's cache for compiled eval/Function
  // code cannot hand back shared code (whose inner closure would then have many instances).
  const source = `${KERNEL_BODY}\n// kernel ${++kernelSerial}`;
  // eslint-disable-next-line no-new-func
  return new Function('x', 'y', 'a', 'lo', 'hi', source)(x, y, a, lo, hi);
}

const gbPerSec = (elements, passes, ms) => (elements * passes * BYTES_PER_ELEMENT) / 1e9 / (ms / 1e3);

/**
 * Triad on the main thread with closure-captured arrays. Each sample runs `passes` sweeps;
 * returns the median GB/s over `repeats` samples after `warmup` ones.
 */
export async function triadSingleThread({
  elements = TRIAD_ELEMENTS,
  passes = 3,
  repeats = 7,
  warmup = 2,
} = {}) {
  const x = new Float64Array(elements).fill(1);
  const y = new Float64Array(elements).fill(2);
  const kernel = makeTriadKernel(x, y, A);
  const r = await measure(
    () => {
      const t0 = performance.now();
      for (let p = 0; p < passes; p++) kernel();
      return gbPerSec(elements, passes, performance.now() - t0);
    },
    { repeats, warmup, result: true },
  );
  return r.median;
}

function workerMain() {
  const { ctlSab, xSab, ySab, lo, hi, a, threads } = workerData;
  const ctl = new Int32Array(ctlSab);
  const kernel = makeTriadKernel(new Float64Array(xSab), new Float64Array(ySab), a, lo, hi);
  serveLaunches(ctl, GEN, READY, () => {
    if (ctl[PARAMS + 1] !== 0) return false;
    const passes = ctl[PARAMS];
    for (let p = 0; p < passes; p++) kernel();
    if (Atomics.add(ctl, DONE, 1) + 1 === threads) Atomics.notify(ctl, DONE);
    return true;
  });
}

/**
 * Triad on `threads` raw workers, each sweeping a contiguous part of SharedArrayBuffer-backed
 * arrays. A sample is one Atomics launch (bump + notify a generation word, then
 * Atomics.waitAsync until every worker has done `passes` sweeps), timed on the main thread.
 * Returns the median GB/s over `repeats` samples after `warmup` ones.
 */
export async function triadTwoWorkers({
  threads = 2,
  elements = TRIAD_ELEMENTS,
  passes = 3,
  repeats = 7,
  warmup = 2,
} = {}) {
  const ctlSab = new SharedArrayBuffer((PARAMS + LINE) * 4);
  const ctl = new Int32Array(ctlSab);
  const xSab = new SharedArrayBuffer(elements * 8);
  const ySab = new SharedArrayBuffer(elements * 8);
  new Float64Array(xSab).fill(1);
  new Float64Array(ySab).fill(2);
  const group = startWorkers(
    new URL(import.meta.url),
    threads,
    (t) => ({
      role: ROLE,
      ctlSab,
      xSab,
      ySab,
      lo: Math.floor((elements * t) / threads),
      hi: Math.floor((elements * (t + 1)) / threads),
      a: A,
      threads,
    }),
    () => {
      Atomics.notify(ctl, READY);
      Atomics.notify(ctl, DONE);
    },
  );
  const failed = () => group.failure() !== null;
  try {
    await waitUntil(ctl, READY, threads, (v) => v >= threads || failed());
    if (failed()) throw group.failure();
    const r = await measure(
      async () => {
        ctl[PARAMS] = passes;
        Atomics.store(ctl, DONE, 0);
        const t0 = performance.now();
        Atomics.add(ctl, GEN, 1);
        Atomics.notify(ctl, GEN);
        await waitUntil(ctl, DONE, threads, (v) => v >= threads || failed());
        const ms = performance.now() - t0;
        if (failed()) throw group.failure();
        return gbPerSec(elements, passes, ms);
      },
      { repeats, warmup, result: true },
    );
    return r.median;
  } finally {
    await group.terminate(() => {
      ctl[PARAMS + 1] = 1;
      Atomics.add(ctl, GEN, 1);
      Atomics.notify(ctl, GEN);
    });
  }
}

if (!isMainThread && workerData?.role === ROLE) {
  workerMain();
} else if (isMainThread && isEntryModule(import.meta.url)) {
  console.log({
    singleThreadGBs: await triadSingleThread(),
    twoWorkersGBs: await triadTwoWorkers(),
  });
}

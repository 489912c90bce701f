// Small statistics and output helpers shared by the benchmarks under bench/.

import { performance } from 'node:perf_hooks';

/** Median of a list of numbers (mean of the two middle values for even lengths). */
export function median(xs) {
  if (xs.length === 0) throw new RangeError('median() of an empty list');
  const s = Array.from(xs).sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/**
 * Run `fn` `warmup` times (discarded), then `repeats` times, and summarise the samples.
 *
 * By default a sample is `fn`'s wall time in milliseconds. With `result: true` a sample is
 * the finite number `fn` returns (or resolves to) instead, e.g. a rate it timed itself.
 * `fn` may be sync or async; it receives the repeat index (negative while warming up).
 *
 * @param {(i:number) => unknown} fn
 * @param {{ repeats?: number, warmup?: number, result?: boolean }} [options]
 * @returns {Promise<{median:number, min:number, max:number, samples:number[]}>}
 */
export async function measure(fn, { repeats = 7, warmup = 2, result = false } = {}) {
  if (!(repeats >= 1)) throw new RangeError('measure(): repeats must be >= 1');
  const once = async (i) => {
    const t0 = performance.now();
    const r = await fn(i);
    const ms = performance.now() - t0;
    if (!result) return ms;
    if (typeof r !== 'number' || !Number.isFinite(r))
      throw new TypeError(`measure(): with result: true, fn must return a finite number (got ${r})`);
    return r;
  };
  for (let i = 0; i < warmup; i++) await once(i - warmup);
  const samples = [];
  for (let i = 0; i < repeats; i++) samples.push(await once(i));
  return { median: median(samples), min: Math.min(...samples), max: Math.max(...samples), samples };
}

/**
 * A cost's growth per doubling of N between sizes `fromN` and `toN`: the ratio of the costs taken to
 * the power 1 / log2(toN / fromN). The plain ratio is the growth per doubling only when `toN` is
 * twice `fromN`; between 5,000 and 20,000 it is the growth over two doublings (16, not 4, for work
 * that grows with N^2). NaN for equal sizes, which say nothing about growth.
 */
export function growthPerDoubling(fromN, fromCost, toN, toCost) {
  if (fromN === toN) return NaN;
  return (toCost / fromCost) ** (1 / Math.log2(toN / fromN));
}

/** Round to `digits` significant digits (for readable JSON). */
export function sig(x, digits = 4) {
  if (!Number.isFinite(x) || x === 0) return x;
  return Number(x.toPrecision(digits));
}

/** Print one JSON document to stdout (pretty by default). */
export function printJson(value, { pretty = true } = {}) {
  process.stdout.write(JSON.stringify(value, null, pretty ? 2 : 0) + '\n');
}

/** A promise together with its resolve/reject functions (Node 20 has no Promise.withResolvers). */
export function deferred() {
  let resolve, reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Resolve once `Atomics.load(i32, index)` satisfies `pred` (default: equals `target`),
 * sleeping with Atomics.waitAsync between changes; the calling thread never blocks.
 */
export async function waitUntil(i32, index, target, pred = (v) => v === target) {
  for (;;) {
    const v = Atomics.load(i32, index);
    if (pred(v)) return v;
    const r = Atomics.waitAsync(i32, index, v);
    if (r.async) await r.value;
  }
}

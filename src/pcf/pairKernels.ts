/**
 * The hot loops: integrals of one pair of PCFs, one specialised function per operation.
 *
 * Each function walks PCF a (breakpoints `aStart..aEnd` of `aTimes`/`aValues`) and PCF b
 * (`bStart..bEnd` of `bTimes`/`bValues`) in time order and sums, over every rectangle
 * [l, r) x (fv, gv) of the merged walk, `(r - l) * op(fv, gv)`; the last rectangle ends at `upper`
 * (the dtype's largest finite float). Rectangles are visited and summed in the same order and with
 * the same expressions as masspcf's rectangle walk (`val += (r - l) * op(rect)`).
 *
 * How the loop is shaped, and why (measured on V8 11 / Node 20):
 * - The merge step is branch-free. Which PCF advances is data-dependent and mispredicts about half
 *   the time, so instead each step turns the comparisons into 0/1 numbers (`+(ta <= tb)`, which
 *   TurboFan compiles to a compare-and-set instead of a jump), advances both indices by them
 *   (equal times advance both) and picks the rectangle's right edge as `ta * ai + tb * (1 - ai)`,
 *   exact for finite times. This runs 1.5 to 2 times as fast as an if/else merge on random
 *   breakpoints. (Two interleaved merges over the halves of the time range were slower still: the
 *   loop is bound by instruction count, not by the index dependency.)
 * - The current values are `aValues[i - 1]` and `bValues[j - 1]`, reloaded every step rather than
 *   updated behind a branch.
 * - Once one PCF runs out, a plain loop finishes the other.
 * - Arguments are Float64Array only: one element kind keeps every load monomorphic (mixing
 *   Float32Array in would make each load a map dispatch, ~40% slower). float32 data is widened
 *   before it gets here (see integrate.ts); L1, L2 and the inner product of float32 data go to
 *   the float32 kernels (pairKernels32.ts), other exponents come here and are rounded once.
 * - No allocation, no closures, no Math.pow per rectangle except for non-integer or large p.
 *
 * Contract for every function: `aStart < aEnd`, `bStart < bEnd`, both PCFs valid (first time 0,
 * strictly increasing times), indices inside the arrays. Nothing is checked here.
 *
 * Range: |f - g|^p overflows for large differences and underflows for small ones once p is large
 * (0.4^1000 is 0 in float64). The Lp kernels check their sum once per pair ({@link lostRange}) and
 * recompute the few pairs that fail with {@link lpScaledPair}; the result is Infinity only when
 * the distance itself exceeds the largest float.
 */

/**
 * L1 distance: the integral of |f - g| over [0, upper).
 *
 * @example l1Pair(ft, fv, 0, ft.length, gt, gv, 0, gt.length, Number.MAX_VALUE)
 */
export function l1Pair(
  aTimes: Float64Array, aValues: Float64Array, aStart: number, aEnd: number,
  bTimes: Float64Array, bValues: Float64Array, bStart: number, bEnd: number, upper: number,
): number {
  let i = aStart + 1;
  let j = bStart + 1;
  let t = 0;
  let sum = 0;
  while (i < aEnd && j < bEnd) {
    const ta = aTimes[i]!;
    const tb = bTimes[j]!;
    const ai = +(ta <= tb);
    const bi = +(tb <= ta);
    const tn = ta * ai + tb * (1 - ai);
    sum += (tn - t) * Math.abs(aValues[i - 1]! - bValues[j - 1]!);
    t = tn;
    i += ai;
    j += bi;
  }
  let fv = aValues[i - 1]!;
  let gv = bValues[j - 1]!;
  for (; i < aEnd; i++) { const r = aTimes[i]!; sum += (r - t) * Math.abs(fv - gv); t = r; fv = aValues[i]!; }
  for (; j < bEnd; j++) { const r = bTimes[j]!; sum += (r - t) * Math.abs(fv - gv); t = r; gv = bValues[j]!; }
  return sum + (upper - t) * Math.abs(fv - gv);
}

/** L2 distance: sqrt of the integral of (f - g)^2 over [0, upper). Same contract as {@link l1Pair}. */
export function l2Pair(
  aTimes: Float64Array, aValues: Float64Array, aStart: number, aEnd: number,
  bTimes: Float64Array, bValues: Float64Array, bStart: number, bEnd: number, upper: number,
): number {
  let i = aStart + 1;
  let j = bStart + 1;
  let t = 0;
  let sum = 0;
  while (i < aEnd && j < bEnd) {
    const ta = aTimes[i]!;
    const tb = bTimes[j]!;
    const ai = +(ta <= tb);
    const bi = +(tb <= ta);
    const tn = ta * ai + tb * (1 - ai);
    const d = aValues[i - 1]! - bValues[j - 1]!;
    sum += (tn - t) * (d * d);
    t = tn;
    i += ai;
    j += bi;
  }
  let fv = aValues[i - 1]!;
  let gv = bValues[j - 1]!;
  for (; i < aEnd; i++) { const r = aTimes[i]!; const d = fv - gv; sum += (r - t) * (d * d); t = r; fv = aValues[i]!; }
  for (; j < bEnd; j++) { const r = bTimes[j]!; const d = fv - gv; sum += (r - t) * (d * d); t = r; gv = bValues[j]!; }
  const d = fv - gv;
  const total = sum + (upper - t) * (d * d);
  if (lostRange(total, d * d, d)) return lpScaledPair(aTimes, aValues, aStart, aEnd, bTimes, bValues, bStart, bEnd, upper, 2);
  return Math.sqrt(total);
}

/** |d|^p for an integer p >= 2 by repeated multiplication. */
function powInt(d: number, p: number): number {
  let w = d;
  for (let k = 1; k < p; k++) w *= d;
  return w;
}

/**
 * Lp distance for an integer p >= 2: (integral of |f - g|^p)^(1/p), with |f - g|^p by repeated
 * multiplication. Same contract as {@link l1Pair}.
 */
export function lpIntPair(
  aTimes: Float64Array, aValues: Float64Array, aStart: number, aEnd: number,
  bTimes: Float64Array, bValues: Float64Array, bStart: number, bEnd: number, upper: number, p: number,
): number {
  let i = aStart + 1;
  let j = bStart + 1;
  let t = 0;
  let sum = 0;
  while (i < aEnd && j < bEnd) {
    const ta = aTimes[i]!;
    const tb = bTimes[j]!;
    const ai = +(ta <= tb);
    const bi = +(tb <= ta);
    const tn = ta * ai + tb * (1 - ai);
    sum += (tn - t) * powInt(Math.abs(aValues[i - 1]! - bValues[j - 1]!), p);
    t = tn;
    i += ai;
    j += bi;
  }
  let fv = aValues[i - 1]!;
  let gv = bValues[j - 1]!;
  for (; i < aEnd; i++) { const r = aTimes[i]!; sum += (r - t) * powInt(Math.abs(fv - gv), p); t = r; fv = aValues[i]!; }
  for (; j < bEnd; j++) { const r = bTimes[j]!; sum += (r - t) * powInt(Math.abs(fv - gv), p); t = r; gv = bValues[j]!; }
  const last = powInt(Math.abs(fv - gv), p);
  const total = sum + (upper - t) * last;
  if (lostRange(total, last, fv - gv)) return lpScaledPair(aTimes, aValues, aStart, aEnd, bTimes, bValues, bStart, bEnd, upper, p);
  return Math.pow(total, 1 / p);
}

/** Lp distance for any real p >= 1, with `Math.pow` per rectangle. Same contract as {@link l1Pair}. */
export function lpRealPair(
  aTimes: Float64Array, aValues: Float64Array, aStart: number, aEnd: number,
  bTimes: Float64Array, bValues: Float64Array, bStart: number, bEnd: number, upper: number, p: number,
): number {
  let i = aStart + 1;
  let j = bStart + 1;
  let t = 0;
  let sum = 0;
  while (i < aEnd && j < bEnd) {
    const ta = aTimes[i]!;
    const tb = bTimes[j]!;
    const ai = +(ta <= tb);
    const bi = +(tb <= ta);
    const tn = ta * ai + tb * (1 - ai);
    sum += (tn - t) * Math.pow(Math.abs(aValues[i - 1]! - bValues[j - 1]!), p);
    t = tn;
    i += ai;
    j += bi;
  }
  let fv = aValues[i - 1]!;
  let gv = bValues[j - 1]!;
  for (; i < aEnd; i++) { const r = aTimes[i]!; sum += (r - t) * Math.pow(Math.abs(fv - gv), p); t = r; fv = aValues[i]!; }
  for (; j < bEnd; j++) { const r = bTimes[j]!; sum += (r - t) * Math.pow(Math.abs(fv - gv), p); t = r; gv = bValues[j]!; }
  const last = Math.pow(Math.abs(fv - gv), p);
  const total = sum + (upper - t) * last;
  if (lostRange(total, last, fv - gv)) return lpScaledPair(aTimes, aValues, aStart, aEnd, bTimes, bValues, bStart, bEnd, upper, p);
  return Math.pow(total, 1 / p);
}

/**
 * The smallest sum of |f - g|^p terms trusted as computed: 2^53 times the smallest normal double.
 * Below it, terms that fell into the subnormal range (or to 0) may carry much of the true sum.
 */
export const LP_SAFE_SUM_MIN = 2 ** -969;

/**
 * Whether an Lp sum computed term by term may be wrong for want of range: it overflowed (a
 * |d|^p or the sum is infinite, though the distance itself may be representable), it is 0 or so
 * small that underflowed terms may dominate it (every |d| < 1 with a large p gives 0: the wrong
 * zeros of `p = 1000`), or the last rectangle's |d|^p underflowed while its width (up to the
 * largest float) would have made it count. Then {@link lpScaledPair} computes the distance.
 * Sums that pass are used as they are, so ordinary results stay bit for bit what they were.
 * `min` is the smallest sum trusted: {@link LP_SAFE_SUM_MIN} (default) for float64 sums.
 */
export function lostRange(total: number, lastPow: number, lastDiff: number, min: number = LP_SAFE_SUM_MIN): boolean {
  return !(total >= min && total < Infinity) || (lastDiff !== 0 && lastPow < min);
}

/**
 * Lp distance for any p >= 1 without overflow or underflow, as robust Lp norms are computed:
 * m = the largest |f - g| over the rectangles, then m * (integral of (|f - g| / m)^p)^(1/p). Every
 * ratio is at most 1, so no power overflows, and the largest rectangle contributes its whole width,
 * so the terms that underflow are negligible beside it. About twice the work of the plain kernels
 * (two walks and a Math.pow per rectangle); used only where {@link lostRange} says they fail.
 * Same contract as {@link l1Pair}.
 *
 * @example lpScaledPair(ft, fv, 0, ft.length, gt, gv, 0, gt.length, Number.MAX_VALUE, 1e6) // about max |f - g|
 */
export function lpScaledPair(
  aTimes: Float64Array, aValues: Float64Array, aStart: number, aEnd: number,
  bTimes: Float64Array, bValues: Float64Array, bStart: number, bEnd: number, upper: number, p: number,
): number {
  let m = 0;
  walkRectangles(aTimes, aValues, aStart, aEnd, bTimes, bValues, bStart, bEnd, upper, (w, d) => {
    if (w > 0 && d > m) m = d;
  });
  if (m === 0) return 0;
  // The scaled sum is at most the total width (upper); only its rounding can overflow, and then
  // half widths keep it finite at the cost of one extra walk.
  let scale = 1;
  for (;;) {
    let sum = 0;
    walkRectangles(aTimes, aValues, aStart, aEnd, bTimes, bValues, bStart, bEnd, upper, (w, d) => {
      if (d !== 0) sum += w * scale * Math.pow(d / m, p);
    });
    if (sum < Infinity) return m * Math.pow(sum, 1 / p) * Math.pow(1 / scale, 1 / p);
    scale /= 2;
  }
}

/** Calls `visit(width, |f - g|)` for every rectangle of the merged walk, the last one ending at `upper`. */
function walkRectangles(
  aTimes: Float64Array, aValues: Float64Array, aStart: number, aEnd: number,
  bTimes: Float64Array, bValues: Float64Array, bStart: number, bEnd: number, upper: number,
  visit: (width: number, diff: number) => void,
): void {
  let i = aStart + 1;
  let j = bStart + 1;
  let t = 0;
  while (i < aEnd && j < bEnd) {
    const ta = aTimes[i]!;
    const tb = bTimes[j]!;
    const tn = ta <= tb ? ta : tb;
    visit(tn - t, Math.abs(aValues[i - 1]! - bValues[j - 1]!));
    t = tn;
    if (ta <= tb) i++;
    if (tb <= ta) j++;
  }
  let fv = aValues[i - 1]!;
  let gv = bValues[j - 1]!;
  for (; i < aEnd; i++) { const r = aTimes[i]!; visit(r - t, Math.abs(fv - gv)); t = r; fv = aValues[i]!; }
  for (; j < bEnd; j++) { const r = bTimes[j]!; visit(r - t, Math.abs(fv - gv)); t = r; gv = bValues[j]!; }
  visit(upper - t, Math.abs(fv - gv));
}

/** L2 inner product: the integral of f * g over [0, upper). Same contract as {@link l1Pair}. */
export function l2InnerPair(
  aTimes: Float64Array, aValues: Float64Array, aStart: number, aEnd: number,
  bTimes: Float64Array, bValues: Float64Array, bStart: number, bEnd: number, upper: number,
): number {
  let i = aStart + 1;
  let j = bStart + 1;
  let t = 0;
  let sum = 0;
  while (i < aEnd && j < bEnd) {
    const ta = aTimes[i]!;
    const tb = bTimes[j]!;
    const ai = +(ta <= tb);
    const bi = +(tb <= ta);
    const tn = ta * ai + tb * (1 - ai);
    sum += (tn - t) * (aValues[i - 1]! * bValues[j - 1]!);
    t = tn;
    i += ai;
    j += bi;
  }
  let fv = aValues[i - 1]!;
  let gv = bValues[j - 1]!;
  for (; i < aEnd; i++) { const r = aTimes[i]!; sum += (r - t) * (fv * gv); t = r; fv = aValues[i]!; }
  for (; j < bEnd; j++) { const r = bTimes[j]!; sum += (r - t) * (fv * gv); t = r; gv = bValues[j]!; }
  return sum + (upper - t) * (fv * gv);
}

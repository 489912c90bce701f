/**
 * The float32 pair kernels: L1 distance, L2 distance and L2 inner product of PCFs stored as
 * float32, computed in float32 arithmetic. They are the reference of the float32 WebAssembly row
 * kernels (wasm/rowCode.ts) and the JS path of float32 pdist/cdist/l2Kernel, so a float32 result
 * is the same whichever path computed it.
 *
 * Every operation is one float64 operation on float32 operands, rounded with Math.fround: a
 * single add, subtract, multiply or square root of float32 values computed in float64 and then
 * rounded is the correctly rounded float32 result, so this is float32 arithmetic exactly. The
 * rectangles are summed in the wasm kernels' order: the merged walk of pairKernels.ts (written
 * out once per integrand, as there: one walk given the three integrands as functions would call
 * through a polymorphic site at every step), `sum += (r - l) * op(f, g)` in float32, and the last
 * rectangle `(upper - t) * op(f, g)` only while
 * t < upper (a PCF with a breakpoint at `upper` ends the walk there: the wasm walk stops at the
 * first step that reaches `upper`).
 *
 * Range: where float32 loses the result (a sum that overflows, or a NaN; for L2 also a sum too
 * small to trust, see lostRange; for the inner product also a last product that underflowed, see
 * innerLostRange), the pair is computed in float64 by the kernels of
 * pairKernels.ts and rounded to float32 once, which is what float32 results were before they were
 * computed in float32. Same contract as those kernels: Float64Array data (holding float32 values),
 * valid PCFs, `upper` the largest finite float32.
 */
import { l1Pair, l2InnerPair, l2Pair, lostRange } from './pairKernels.js';

const f = Math.fround;

/**
 * The smallest float32 sum of squares trusted as computed: 2^24 times the smallest normal
 * float32 (the float32 counterpart of LP_SAFE_SUM_MIN).
 */
export const LP32_SAFE_SUM_MIN = 2 ** -102;

/**
 * L1 distance in float32: the integral of |f - g| over [0, upper).
 *
 * @example l1Pair32(ft, fv, 0, ft.length, gt, gv, 0, gt.length, FLOAT32_MAX)
 */
export function l1Pair32(
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
    sum = f(sum + f(f(tn - t) * Math.abs(f(aValues[i - 1]! - bValues[j - 1]!))));
    t = tn;
    i += ai;
    j += bi;
  }
  let fv = aValues[i - 1]!;
  let gv = bValues[j - 1]!;
  for (; i < aEnd; i++) { const r = aTimes[i]!; sum = f(sum + f(f(r - t) * Math.abs(f(fv - gv)))); t = r; fv = aValues[i]!; }
  for (; j < bEnd; j++) { const r = bTimes[j]!; sum = f(sum + f(f(r - t) * Math.abs(f(fv - gv)))); t = r; gv = bValues[j]!; }
  if (t < upper) sum = f(sum + f(f(upper - t) * Math.abs(f(fv - gv))));
  return Math.abs(sum) < Infinity ? sum : f(l1Pair(aTimes, aValues, aStart, aEnd, bTimes, bValues, bStart, bEnd, upper));
}

/** L2 distance in float32: sqrt of the integral of (f - g)^2 over [0, upper). Same contract as {@link l1Pair32}. */
export function l2Pair32(
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
    const d = f(aValues[i - 1]! - bValues[j - 1]!);
    sum = f(sum + f(f(tn - t) * f(d * d)));
    t = tn;
    i += ai;
    j += bi;
  }
  let fv = aValues[i - 1]!;
  let gv = bValues[j - 1]!;
  for (; i < aEnd; i++) { const r = aTimes[i]!; const d = f(fv - gv); sum = f(sum + f(f(r - t) * f(d * d))); t = r; fv = aValues[i]!; }
  for (; j < bEnd; j++) { const r = bTimes[j]!; const d = f(fv - gv); sum = f(sum + f(f(r - t) * f(d * d))); t = r; gv = bValues[j]!; }
  const d = f(fv - gv);
  if (t < upper) sum = f(sum + f(f(upper - t) * f(d * d)));
  if (lostRange(sum, f(d * d), d, LP32_SAFE_SUM_MIN)) return f(l2Pair(aTimes, aValues, aStart, aEnd, bTimes, bValues, bStart, bEnd, upper));
  return f(Math.sqrt(sum));
}

/** L2 inner product in float32: the integral of f * g over [0, upper). Same contract as {@link l1Pair32}. */
export function l2InnerPair32(
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
    sum = f(sum + f(f(tn - t) * f(aValues[i - 1]! * bValues[j - 1]!)));
    t = tn;
    i += ai;
    j += bi;
  }
  let fv = aValues[i - 1]!;
  let gv = bValues[j - 1]!;
  for (; i < aEnd; i++) { const r = aTimes[i]!; sum = f(sum + f(f(r - t) * f(fv * gv))); t = r; fv = aValues[i]!; }
  for (; j < bEnd; j++) { const r = bTimes[j]!; sum = f(sum + f(f(r - t) * f(fv * gv))); t = r; gv = bValues[j]!; }
  if (t < upper) sum = f(sum + f(f(upper - t) * f(fv * gv)));
  if (innerLostRange(sum, fv, gv)) return f(l2InnerPair(aTimes, aValues, aStart, aEnd, bTimes, bValues, bStart, bEnd, upper));
  return sum;
}

/**
 * Whether a float32 inner-product sum may be wrong for want of range: not finite, or the last
 * values' product (exact in float64) below {@link LP32_SAFE_SUM_MIN} in float32, where the last
 * rectangle, up to the largest float32 wide, would make its lost bits count (1e-23 times 1e-23 is
 * 0 in float32, 3.4e-8 over that width).
 */
export function innerLostRange(sum: number, lastF: number, lastG: number): boolean {
  const last = lastF * lastG;
  return !(Math.abs(sum) < Infinity) || (last !== 0 && Math.abs(f(last)) < LP32_SAFE_SUM_MIN);
}

/**
 * float32 range for the GPU L1 and inner-product kernels (wgslBlockKernels.ts): a pair whose plain
 * float32 sum is not finite is summed again with each term's exponent kept apart, the GPU's
 * counterpart of the CPU cores computing such a pair in float64 (pairKernels32.ts).
 *
 * Why: a term can overflow float32 while the integral does not. |f - g| of 3e38 and -3e38 is
 * infinite, yet over a width of 0.25 the L1 distance is 1.5e38; 2e19 * 2e19 overflows, yet over a
 * width of 0.5 the inner product is 2e38; and an inner product whose terms overflow both ways sums
 * Infinity - Infinity, a NaN where the integral is 0.
 *
 * Each term w * x * y (L1: x = |f - g| and y = 1 where f and g have one sign, so the difference
 * cannot overflow, and otherwise the two terms w |f| and w |g|, never forming f - g, which a
 * compiler may compute from halves it has factored out again; the inner product: x = f, y = g)
 * is split by frexp into fractions, whose product lies in
 * [1/8, 1), and an exponent. A first walk finds the largest exponent E, a second sums the
 * fractions' products scaled by 2^(e - E), so no term overflows and each keeps its float32
 * precision; the sum times 2^E is judged in the exponent: Infinity (with the sum's sign) only where
 * the integral itself exceeds the largest float32. As in wgslLpRange.ts, nothing compares with
 * Infinity: WGSL lets an implementation assume no value is infinite or NaN.
 */
import { pairWalk } from './wgslPairWalk.js';

/** The integrands with this rescue. */
export type GpuSumIntegrand = 'l1' | 'l2inner';

/**
 * The body of `pcf_sum_step`, which adds the terms of one rectangle w wide to `acc` through
 * `pcf_sum_term(phase, acc, w, x, y, e_max)`.
 */
const TERMS: Record<GpuSumIntegrand, string> = {
  l1: `if ((f >= 0.0) == (g >= 0.0)) { return pcf_sum_term(phase, acc, w, abs(f - g), 1.0, e_max); }
  return pcf_sum_term(phase, pcf_sum_term(phase, acc, w, abs(f), 1.0, e_max), w, abs(g), 1.0, e_max);`,
  l2inner: 'return pcf_sum_term(phase, acc, w, f, g, e_max);',
};

/** Below every exponent a term can have (about -450): no term seen yet. */
const NO_TERM = -10000;

/**
 * WGSL declarations for the L1 or inner-product kernel: `pcf_sum_lost(sum)` and
 * `pcf_sum_apart(i, j, upper)`, which read the kernel's storage bindings (rowTimes, ...,
 * colOffsets), so they belong to the block kernels' module.
 *
 * @example declarations += sumRangeDeclarations('l1'); // then: if (pcf_sum_lost(sum)) { return pcf_sum_apart(i, j, upper); }
 */
export function sumRangeDeclarations(kind: GpuSumIntegrand): string {
  return /* wgsl */ `
// Whether the plain sum is infinite or NaN, judged on its bits.
fn pcf_sum_lost(sum: f32) -> bool {
  return (bitcast<u32>(sum) & 0x7fffffffu) >= 0x7f800000u;
}

// Phase 0: the largest exponent of a nonzero term so far (acc); phase 1: acc plus the term's
// fraction scaled by 2^(its exponent - e_max).
fn pcf_sum_term(phase: u32, acc: f32, w: f32, x: f32, y: f32, e_max: f32) -> f32 {
  if (w <= 0.0 || x == 0.0 || y == 0.0) { return acc; }
  let fw = frexp(w);
  let fx = frexp(x);
  let fy = frexp(y);
  let e = fw.exp + fx.exp + fy.exp;
  if (phase == 0u) { return max(acc, f32(e)); }
  return acc + ldexp(fw.fract * fx.fract * fy.fract, e - i32(e_max));
}

// The terms of a rectangle w wide with values f and g, added to acc as pcf_sum_term does.
fn pcf_sum_step(phase: u32, acc: f32, w: f32, f: f32, g: f32, e_max: f32) -> f32 {
  ${TERMS[kind]}
}

// One walk of pair (i, j) in the order of the kernel body.
${pairWalk('pcf_sum_walk', 'phase: u32, e_max: f32', `select(0.0, ${NO_TERM}.0, phase == 0u)`, (w, f, g) => `pcf_sum_step(phase, acc, ${w}, ${f}, ${g}, e_max)`)}
// The integral of pair (i, j) with each term's exponent apart; see wgslSumRange.ts.
fn pcf_sum_apart(i: u32, j: u32, upper: f32) -> f32 {
  let e_max = pcf_sum_walk(i, j, upper, 0u, 0.0);
  if (e_max <= ${NO_TERM}.0) { return 0.0; }
  let s = pcf_sum_walk(i, j, upper, 1u, e_max);
  if (s == 0.0) { return 0.0; }
  let fs = frexp(s);
  let e = fs.exp + i32(e_max);
  if (e > 128) { return bitcast<f32>(select(0x7f800000u, 0xff800000u, s < 0.0)); }
  return ldexp(fs.fract, e);
}
`;
}

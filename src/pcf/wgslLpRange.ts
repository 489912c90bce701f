/**
 * float32 range for the GPU Lp kernels (wgslBlockKernels.ts): the WGSL that judges whether a pair's
 * sum of w * |f - g|^p lost range, and the scaled form that recomputes such a pair, the float32
 * counterpart of `lostRange` and `lpScaledPair` in pairKernels.ts.
 *
 * Why float32 needs its own rule: the last rectangle is up to 2^128 wide (the largest float32), so
 * a last difference of 2 already overflows the L2 sum, and for large p every |f - g| below 1
 * underflows (0.93^1000 is below the smallest float32), which gave Infinity and wrong zeros.
 *
 * WGSL lets an implementation assume that no value is infinite or NaN, so nothing here compares
 * with Infinity: range is judged on the bits of the sum (positive floats order as their bits do,
 * and every infinity, NaN or negative value has bits at or above 0x7f800000), and the scaled form
 * never forms an infinite value; an overflowing distance is written as the bits of Infinity.
 */
import { pairWalk } from './wgslPairWalk.js';

/**
 * The smallest sum of w * |f - g|^p terms a GPU kernel keeps, per unit of width before the last
 * rectangle: 2^24 times the smallest normal float32. A term that underflowed (or was flushed to
 * zero, which WGSL allows for subnormals) lost at most 2^-126 times its width, and the widths
 * before the last rectangle add up to the last breakpoint time, so a sum at least 2^-102 times
 * max(1, that time) has lost under one part in 2^24.
 */
export const GPU_LP_SAFE_SUM = 2 ** -102;

/**
 * Exponents above this run on the GPU as this: beyond 2^32, (sum of w (|d| / m)^p)^(1/p), whose
 * sum lies between 2^-149 and 2^128, differs from 1 by under 2.5e-8, so the distance is m to
 * within one float32 ulp for every such p, and p stays a float32 (a p above the largest float32
 * would not).
 */
export const GPU_LP_MAX_P = 2 ** 32;

/**
 * WGSL declarations for an Lp kernel: `pcf_lost_range` and `pcf_scaled`. `root(x)` gives the WGSL
 * expression of x^(1/p) the kernel uses (`sqrt(x)` for L2, which is more accurate than pow).
 * They read the kernel's storage bindings (rowTimes, ..., colOffsets), so they belong to the
 * block kernels' module.
 */
export function lpRangeDeclarations(root: (x: string) => string): string {
  return /* wgsl */ `
const PCF_SAFE_SUM: f32 = 0x1p${Math.log2(GPU_LP_SAFE_SUM)}f;

// Whether the plain sum may be wrong for want of range: it is infinite, NaN or too small for the
// terms that underflowed to be negligible (see GPU_LP_SAFE_SUM), or the last rectangle's
// |f - g|^p underflowed while its width (up to 2^128) would have made it count.
fn pcf_lost_range(sum: f32, last: f32, last_differs: bool, at: f32) -> bool {
  let s = bitcast<u32>(sum);
  let lowest = bitcast<u32>(PCF_SAFE_SUM * max(1.0, at));
  return s < lowest || s >= 0x7f800000u || (last_differs && bitcast<u32>(last) < bitcast<u32>(PCF_SAFE_SUM));
}

// A value with the given bits, formed at run time: a constant Infinity would not compile.
fn pcf_from_bits(bits: u32) -> f32 {
  return bitcast<f32>(bits);
}

// h / m for 0 < h < m, with m's exponent taken out first: a GPU may divide by multiplying with
// 1 / m, which for m above 2^126 is below the normal range and flushed to 0 (an NVIDIA GPU did).
fn pcf_ratio(h: f32, m: f32) -> f32 {
  let mm = frexp(m);
  return ldexp(h, -mm.exp) / mm.fract;
}

// w * (h / m)^p for a half width w, a half difference h and the largest one m: at most w. Where
// (h / m)^p alone is below the normal range, the product is formed in the exponent, since w may be
// as large as 2^127 and such a term may still count.
fn pcf_scaled_term(w: f32, h: f32, m: f32, p: f32) -> f32 {
  if (h == 0.0 || w <= 0.0) { return 0.0; }
  if (h >= m) { return w; }
  // L2: w (h / m)^2 as (w r) r, three roundings, wherever it stays in the normal range (r^2 alone
  // may not: a difference 2^-65 of the largest over a width of 2^127). The exponent form below
  // carries log2's error of the width's exponent, 2.5e-6 of such a distance on llvmpipe.
  if (p == 2.0 && h >= m * 0x1p-100f) {
    let r = pcf_ratio(h, m);
    let t = (w * r) * r;
    if (t >= 0x1p-126f) { return t; }
  }
  var l: f32;
  if (h >= m * 0x1p-100f) { l = log2(pcf_ratio(h, m)); } else { l = log2(h) - log2(m); }
  // log2 near 1 may come out slightly positive; the true value is negative.
  l = min(l, 0.0);
  if (l >= -126.0 / p) { return w * exp2(p * l); }
  if (l < -400.0 / p) { return 0.0; }
  return exp2(log2(w) + p * l);
}

// One walk of pair (i, j) in the order of the kernel body. Phase 0 returns the largest half
// difference |f / 2 - g / 2| over rectangles of positive width (halves, so it cannot overflow);
// phase 1 returns the sum of pcf_scaled_term over half widths (halves, so it stays below 2^127).
${pairWalk('pcf_scaled_walk', 'phase: u32, m: f32, p: f32', '0.0', (w, f, g) => `pcf_scaled_step(phase, acc, ${w}, ${f}, ${g}, m, p)`)}
fn pcf_scaled_step(phase: u32, acc: f32, w: f32, f: f32, g: f32, m: f32, p: f32) -> f32 {
  let h = abs(0.5 * f - 0.5 * g);
  if (phase == 0u) { return select(acc, max(acc, h), w > 0.0); }
  return acc + pcf_scaled_term(0.5 * w, h, m, p);
}

// The Lp distance of pair (i, j) as 2 m (2 s)^(1/p), m the largest half difference and s the sum
// of half widths times (h / m)^p: no power overflows, and the largest rectangle keeps its whole
// width, so the terms that underflow are negligible beside it. The product of m, s^(1/p) (at most
// 2^127) and 2 * 2^(1/p) (in (2, 4]) is judged in the exponent first: Infinity only where the
// distance itself exceeds the largest float32 (log2's error of about 1e-5 stays inside the 1/64
// margin), and otherwise the product is formed with m's exponent apart: a compiler may reorder a
// plain product of the three (llvmpipe formed m * c first, Infinity for an L2 distance of 1.5e38).
fn pcf_scaled(i: u32, j: u32, p: f32, upper: f32) -> f32 {
  let m = pcf_scaled_walk(i, j, upper, 0u, 0.0, p);
  if (m == 0.0) { return 0.0; }
  let s = pcf_scaled_walk(i, j, upper, 1u, m, p);
  let b = ${root('s')};
  let c = 2.0 * ${root('2.0')};
  if (log2(m) + log2(b) + log2(c) > 128.015625) { return pcf_from_bits(0x7f800000u); }
  let mm = frexp(m);
  return ldexp(mm.fract * (b * c), mm.exp);
}
`;
}

/**
 * Decimal significand and exponent to the nearest double (ties to even), the conversion
 * `Number(text)` and `JSON.parse` make, without building a string.
 *
 * Two exact methods:
 *
 * - Clinger's fast path: a significand below 2^53 times 10^q with |q| <= 22 is one IEEE operation
 *   on two exact doubles, hence correctly rounded.
 * - Eisel-Lemire: the significand w (up to 19 digits, below 2^64), normalized, times a 128-bit
 *   truncation of 5^q gives the leading bits of w * 10^q; the truncation error is provably too small
 *   to change the rounding (Mushtak and Lemire, "Fast number parsing without fallback", 2023) once
 *   the second 64 bits of 5^q are added in when the first product's low bits are all ones.
 *
 * JavaScript has no 64-bit integer multiply (BigInt allocates), so the 64 x 128-bit product is built
 * from 32 x 32-bit products: `Math.imul` gives the low word exactly, and the double product, off
 * by at most 2^11, then pins the high word. A significand of more than 19 digits is not handled:
 * the caller converts those through `Number` (JSON written by a program prints at most 17).
 */
import { LARGEST_Q, SMALLEST_Q, powersOfFive } from './powersOfFive.js';

/** Most significant digits {@link decimalToDouble} takes: 10^19 - 1 is below 2^64. */
export const MAX_SIGNIFICAND_DIGITS = 19;

const TWO32 = 2 ** 32;
const INV32 = 2 ** -32;
const TWO53 = 2 ** 53;
// Exact powers of ten: 10^22 is the largest that a double holds exactly.
const POW10 = Float64Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));
// 5^k for k <= 13, below 2^32: 10^k = 5^k * 2^k splits a power of ten into a word and a shift.
const POW5 = Float64Array.from({ length: 14 }, (_, k) => 5 ** k);

/** 128-bit approximations of 5^q (powersOfFive.ts), decoded at the first number that needs them. */
let fives: Uint32Array | undefined;
let twos: Float64Array | undefined;

/** 2^e for e in [-1074, 971], made from its bits (index e + 1074). */
function powersOfTwo(): Float64Array {
  const out = new Float64Array(1074 + 972);
  const words = new Uint32Array(out.buffer);
  const LOW = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 0 : 1;
  for (let e = -1074; e <= 971; e++) {
    const i = (e + 1074) * 2;
    if (e >= -1022) {
      words[i + 1 - LOW] = (e + 1023) << 20;
    } else {
      // A subnormal: the single mantissa bit at position e + 1074.
      const bit = e + 1074;
      if (bit >= 32) words[i + 1 - LOW] = 1 << (bit - 32);
      else words[i + LOW] = (1 << bit) >>> 0;
    }
  }
  return out;
}

/** floor((hi * 2^32 + lo) / 2^k) for 0 < k < 64; exact while the result is below 2^53. */
function shiftRight(hi: number, lo: number, k: number): number {
  if (k >= 32) return k - 32 >= 32 ? 0 : hi >>> (k - 32);
  return (hi >>> k) * TWO32 + (((hi << (32 - k)) | (lo >>> k)) >>> 0);
}

/** Bit k (0 <= k < 64) of hi * 2^32 + lo. */
function bitAt(hi: number, lo: number, k: number): number {
  return k >= 32 ? (hi >>> (k - 32)) & 1 : (lo >>> k) & 1;
}

/**
 * The high word of the 64-bit product of two 32-bit words, given its low word: the double product
 * is within 2^11 of the exact one, the low word's removal keeps it within 2^12 of a multiple of
 * 2^32, so rounding the quotient finds the high word.
 */
function mulHigh(a: number, b: number, low: number): number {
  return Math.round((a * b - low) * INV32);
}

/**
 * The double nearest to w * 10^q, for the significand w = high * 10^lowDigits + low of at most
 * {@link MAX_SIGNIFICAND_DIGITS} decimal digits (high below 2^32, lowDigits <= 13, low below
 * 10^lowDigits), rounding ties to even: the value `Number` gives for the decimal text. The sign is
 * the caller's.
 *
 * @returns the value, or NaN when w is 2^64 or more, or in a case the method leaves undecided
 *   (none is known); the caller then converts the text with `Number`.
 * @example decimalToDouble(483227894, 46785286, 8, -17) // 0.48322789446785286
 */
export function decimalToDouble(high: number, low: number, lowDigits: number, q: number): number {
  if (q >= -22 && q <= 22) {
    // Clinger: w below 2^53 and 10^|q| are exact doubles; one division or product rounds once.
    // (When w is 2^53 or more, its rounded product here is too: the test cannot pass wrongly.)
    const w = high * POW10[lowDigits]! + low;
    if (w < TWO53) return q < 0 ? w / POW10[-q]! : w * POW10[q]!;
  }
  eiselLemire(high, low, lowDigits, q);
  return result[0]!;
}

/**
 * Where {@link eiselLemire} leaves its value. Why not return it: a double returned from a call
 * that is not inlined is boxed in a fresh heap object, one per number of a large file, while
 * the small {@link decimalToDouble} above is inlined into its caller and reads the slot unboxed.
 */
const result = new Float64Array(1);

/** The method of Eisel and Lemire for {@link decimalToDouble}'s arguments; the value goes to `result[0]`. */
function eiselLemire(high: number, low: number, lowDigits: number, q: number): void {
  // w = high * 5^k * 2^k + low in two 32-bit words (wHi, wLo): high * 5^k as one 64-bit product.
  const five = POW5[lowDigits]!;
  let wLo = Math.imul(high, five) >>> 0;
  let wHi = mulHigh(high, five, wLo);
  if (lowDigits > 0) {
    const k = lowDigits;
    if (wHi >>> (32 - k) !== 0) {
      result[0] = NaN;
      return;
    }
    wHi = ((wHi << k) | (wLo >>> (32 - k))) >>> 0;
    wLo = (wLo << k) >>> 0;
    // low < 10^13 < 2^44: add it as two words.
    const lowHi = Math.floor(low * INV32);
    const sum = wLo + (low - lowHi * TWO32);
    wLo = sum >>> 0;
    wHi += lowHi + (sum - wLo) * INV32;
    if (wHi >= TWO32) {
      result[0] = NaN;
      return;
    }
  }
  if (wHi === 0 && wLo === 0) {
    result[0] = 0;
    return;
  }
  if (q < SMALLEST_Q) {
    result[0] = 0;
    return;
  }
  if (q > LARGEST_Q) {
    result[0] = Infinity;
    return;
  }
  // Normalize: the most significant bit of w at bit 63.
  const lz = wHi !== 0 ? Math.clz32(wHi) : 32 + Math.clz32(wLo);
  if (lz >= 32) {
    wHi = (wLo << (lz - 32)) >>> 0;
    wLo = 0;
  } else if (lz > 0) {
    wHi = ((wHi << lz) | (wLo >>> (32 - lz))) >>> 0;
    wLo = (wLo << lz) >>> 0;
  }
  const t = (fives ??= powersOfFive());
  const at = (q - SMALLEST_Q) * 4;
  // (z3 z2 z1 z0) = w * (t0 t1), the high 64 bits of 5^q, from four word products.
  let a = t[at]!;
  let b = t[at + 1]!;
  const llLo = Math.imul(wLo, b) >>> 0;
  const llHi = mulHigh(wLo, b, llLo);
  const lhLo = Math.imul(wLo, a) >>> 0;
  const lhHi = mulHigh(wLo, a, lhLo);
  const hlLo = Math.imul(wHi, b) >>> 0;
  const hlHi = mulHigh(wHi, b, hlLo);
  const hhLo = Math.imul(wHi, a) >>> 0;
  const hhHi = mulHigh(wHi, a, hhLo);
  let z0 = llLo;
  let s = llHi + lhLo + hlLo;
  let z1 = s >>> 0;
  s = (s - z1) * INV32 + lhHi + hlHi + hhLo;
  let z2 = s >>> 0;
  let z3 = (s - z2) * INV32 + hhHi;
  // 55 bits are kept (53, a rounding bit, and the top bit's position): when the bits below them in
  // the high half are all ones, a carry from the lower half of 5^q could still reach them.
  if ((z2 & 0x1ff) === 0x1ff) {
    // The high 64 bits of w times the low half of 5^q add to (z1 z0).
    a = t[at + 2]!;
    b = t[at + 3]!;
    const ll = mulHigh(wLo, b, Math.imul(wLo, b) >>> 0);
    const lhL = Math.imul(wLo, a) >>> 0;
    const lhH = mulHigh(wLo, a, lhL);
    const hlL = Math.imul(wHi, b) >>> 0;
    const hlH = mulHigh(wHi, b, hlL);
    const hhL = Math.imul(wHi, a) >>> 0;
    const hhH = mulHigh(wHi, a, hhL);
    s = ll + lhL + hlL;
    s = (s - (s >>> 0)) * INV32 + lhH + hlH + hhL;
    const y2 = s >>> 0;
    const y3 = (s - y2) * INV32 + hhH;
    s = z0 + y2;
    z0 = s >>> 0;
    s = (s - z0) * INV32 + z1 + y3;
    z1 = s >>> 0;
    s = (s - z1) * INV32 + z2;
    z2 = s >>> 0;
    z3 += (s - z2) * INV32;
    // All ones below the kept bits and in the low half: within the bound's margin. Never seen in
    // testing; deferring to Number keeps it correct regardless.
    if ((z2 & 0x1ff) === 0x1ff && z1 === 0xffffffff && z0 === 0xffffffff) {
      result[0] = NaN;
      return;
    }
  }
  const upper = z3 >>> 31;
  const shift = upper + 9;
  // The 54-bit truncated significand m = (z3 z2) >> shift, kept as two words.
  const mHi = z3 >>> shift;
  const mLo = ((z3 << (32 - shift)) | (z2 >>> shift)) >>> 0;
  // Binary exponent, biased: floor(q * log2(10)) by a fixed-point multiply exact over the range.
  const power2 = ((217706 * q) >> 16) + 63 + upper - lz + 1023;
  const pow2 = (twos ??= powersOfTwo());
  if (power2 <= 0) {
    // A subnormal (or zero): no decimal with 19 digits lies exactly halfway here, so round up.
    const k = 1 - power2;
    if (k >= 64) {
      result[0] = 0;
      return;
    }
    result[0] = (shiftRight(mHi, mLo, k + 1) + bitAt(mHi, mLo, k)) * pow2[0]!;
    return;
  }
  let round = mLo & 1;
  // A tie is possible only for small |q|; then round to even when the discarded bits are exactly
  // one half (nothing below the rounding bit, in the high or the low half of the product).
  if (round === 1 && (mLo & 2) === 0 && q >= -4 && q <= 23 && z1 === 0 && z0 <= 1 && (z2 & ((1 << shift) - 1)) === 0) round = 0;
  if (power2 >= 2047) {
    result[0] = Infinity;
    return;
  }
  // m / 2 + round <= 2^53; when it reaches 2^53 the result is the next power of two, or infinity.
  result[0] = (shiftRight(mHi, mLo, 1) + round) * pow2[power2 - 1]!;
}

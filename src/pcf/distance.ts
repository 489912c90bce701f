import { ArgumentError, OptionError } from '../core/errors.js';
import { describe } from '../core/validate.js';
import { integratePair, L2_INNER, pcfOp } from './integrate.js';
import type { PcfOp } from './integrate.js';
import { lostRange } from './pairKernels.js';
import { integrationLimit, Pcf } from './pcf.js';
import type { PcfArray, PcfDtype } from './pcf.js';

/**
 * Distances and inner products of single PCFs, and brute-force reference matrices that tests use
 * to cross-check the fast kernels.
 */

function checkPcf(op: string, name: string, x: unknown): void {
  if (!(x instanceof Pcf)) throw new ArgumentError(`${op}: ${name} must be a Pcf (Pcf.from([[t, v], ...]), or pcfAt(set, i)), got ${describe(x)}`);
}

function sameDtype(f: Pcf, g: Pcf): PcfDtype {
  if (f.dtype !== g.dtype) throw new OptionError(`f and g must have the same dtype, got '${f.dtype}' and '${g.dtype}'`);
  return f.dtype;
}

function asFloat64(a: PcfArray): Float64Array {
  return a instanceof Float64Array ? a : new Float64Array(a);
}

function integrate(op: PcfOp, f: Pcf, g: Pcf): number {
  const dtype = sameDtype(f, g);
  const value = integratePair(
    op,
    asFloat64(f.times), asFloat64(f.values), 0, f.size,
    asFloat64(g.times), asFloat64(g.values), 0, g.size,
    integrationLimit(dtype), dtype,
  );
  return dtype === 'float32' ? Math.fround(value) : value;
}

/**
 * The Lp distance (integral over [0, M) of |f - g|^p)^(1/p), M the dtype's largest finite float.
 * float32 PCFs give float32 results: computed in float32 for p = 1 and 2 (as pdist computes them),
 * in float64 and rounded for other p.
 *
 * @param p a finite number >= 1. Default 1.
 * @throws OptionError for a bad p or when f and g have different dtypes.
 * @example lpDistance(Pcf.from([[0, 6], [3, 0]]), Pcf.from([[0, 2], [1, 4], [2, 0]])) // 12
 */
export function lpDistance(f: Pcf, g: Pcf, p: number = 1): number {
  checkPcf('lpDistance', 'f', f);
  checkPcf('lpDistance', 'g', g);
  return integrate(pcfOp(p), f, g);
}

/**
 * The Lp norm of f: its distance to the zero function. A PCF whose last value is not 0 has an
 * enormous norm (the integral runs to the largest finite float).
 *
 * @param p a finite number >= 1. Default 1.
 * @throws OptionError for a bad p.
 * @example lpNorm(Pcf.from([[0, 1]])) // 1.7976931348623157e308
 */
export function lpNorm(f: Pcf, p: number = 1): number {
  checkPcf('lpNorm', 'f', f);
  return integrate(pcfOp(p), f, Pcf.from([[0, 0]], { dtype: f.dtype }));
}

/**
 * The L2 inner product: the integral over [0, M) of f * g.
 *
 * @throws OptionError when f and g have different dtypes.
 * @example l2InnerProduct(Pcf.from([[0, 4], [3, 0]]), Pcf.from([[0, 2], [3, 0]])) // 24
 */
export function l2InnerProduct(f: Pcf, g: Pcf): number {
  checkPcf('l2InnerProduct', 'f', f);
  checkPcf('l2InnerProduct', 'g', g);
  return integrate(L2_INNER, f, g);
}

/**
 * The integral of `rect(f(l), g(l)) * (r - l)` over the pieces between consecutive breakpoints of
 * both PCFs, evaluating each PCF at every piece's left end. Slow and obvious on purpose.
 */
function referenceIntegral(op: PcfOp, f: Pcf, g: Pcf): number {
  const dtype = sameDtype(f, g);
  const upper = integrationLimit(dtype);
  const cuts = [...new Set([...f.times, ...g.times])].sort((x, y) => x - y);
  const pieces = cuts.map((left, k) => ({ width: (k + 1 < cuts.length ? cuts[k + 1]! : upper) - left, fv: f.evaluate(left), gv: g.evaluate(left) }));
  let sum = 0;
  for (const { width, fv, gv } of pieces) {
    let y: number;
    if (op.kind === 'l1') y = Math.abs(fv - gv);
    else if (op.kind === 'lp') y = Math.pow(Math.abs(fv - gv), op.p);
    else y = fv * gv;
    sum += width * y;
  }
  let value = op.kind === 'lp' ? Math.pow(sum, 1 / op.p) : sum;
  if (op.kind === 'lp') {
    // The same rule as the fast kernels: a sum that lost range is replaced by the scaled form
    // m * (sum of width * (|d| / m)^p)^(1/p), m the largest |d| over pieces of positive width.
    const last = pieces[pieces.length - 1]!;
    const lastDiff = last.fv - last.gv;
    if (lostRange(sum, Math.pow(Math.abs(lastDiff), op.p), lastDiff)) {
      const m = Math.max(0, ...pieces.filter((q) => q.width > 0).map((q) => Math.abs(q.fv - q.gv)));
      const scaled = pieces.reduce((acc, q) => acc + (q.fv === q.gv ? 0 : q.width * Math.pow(Math.abs(q.fv - q.gv) / m, op.p)), 0);
      value = m === 0 ? 0 : m * Math.pow(scaled, 1 / op.p);
    }
  }
  return dtype === 'float32' ? Math.fround(value) : value;
}

function toOp(opOrP: number | PcfOp): PcfOp {
  return typeof opOrP === 'number' ? pcfOp(opOrP) : opOrP;
}

/**
 * Reference pdist: the full symmetric n x n matrix of Lp distances (zero diagonal), computed pair
 * by pair with the brute-force integral. For tests only.
 *
 * @throws OptionError for a bad p or mixed dtypes.
 */
export function referencePdist(pcfs: readonly Pcf[], p: number = 1): number[][] {
  const op = pcfOp(p);
  const n = pcfs.length;
  const out = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < i; j++) {
      const d = referenceIntegral(op, pcfs[i]!, pcfs[j]!);
      out[i]![j] = d;
      out[j]![i] = d;
    }
  }
  return out;
}

/**
 * Reference cdist: the dense xs.length x ys.length matrix of `op` (an Lp exponent or an op such as
 * {@link L2_INNER}) between every x and every y. For tests only.
 *
 * @throws OptionError for a bad p or mixed dtypes.
 */
export function referenceCdist(xs: readonly Pcf[], ys: readonly Pcf[], op: number | PcfOp = 1): number[][] {
  const resolved = toOp(op);
  return xs.map((x) => ys.map((y) => referenceIntegral(resolved, x, y)));
}

/**
 * Reference l2Kernel: the full symmetric n x n matrix of L2 inner products, diagonal included.
 * For tests only.
 *
 * @throws OptionError for mixed dtypes.
 */
export function referenceL2Kernel(pcfs: readonly Pcf[]): number[][] {
  const n = pcfs.length;
  const out = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      const v = referenceIntegral(L2_INNER, pcfs[i]!, pcfs[j]!);
      out[i]![j] = v;
      out[j]![i] = v;
    }
  }
  return out;
}

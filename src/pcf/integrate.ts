import { OptionError } from '../core/errors.js';
import { describe } from '../core/validate.js';
import { l1Pair, l2InnerPair, l2Pair, lpIntPair, lpRealPair } from './pairKernels.js';
import { l1Pair32, l2InnerPair32, l2Pair32 } from './pairKernels32.js';
import type { PcfDtype } from './pcf.js';
import type { PcfData } from './pcfSet.js';

export { l1Pair, l2InnerPair, l2Pair, lpIntPair, lpRealPair } from './pairKernels.js';

/**
 * Row-level integration: one row of a block of a distance or kernel matrix, i.e. one PCF of set A
 * against a range of PCFs of set B, with the specialised pair kernel chosen once per row.
 *
 * float32 sets compute in float32 where a float32 kernel exists (L1, L2 and the L2 inner product,
 * pairKernels32.ts, as the WebAssembly and GPU kernels do); other exponents integrate the widened
 * float32 values in float64 and round each result once.
 */

/** What is integrated over each rectangle: |f-g| (L1), |f-g|^p (Lp), or f*g (L2 inner product). */
export type PcfOp = { readonly kind: 'l1' } | { readonly kind: 'lp'; readonly p: number } | { readonly kind: 'l2inner' };

/**
 * Whether float32 data of `op` is summed in float32 arithmetic: L1, L2 and the inner product
 * (pairKernels32.ts and the float32 row kernels). Other exponents sum it in float64 and round once.
 */
export function sumsInFloat32(op: PcfOp): boolean {
  return op.kind !== 'lp' || op.p === 1 || op.p === 2;
}

/** The L2 inner product operation, for l2Kernel and inner-product cdist. */
export const L2_INNER: PcfOp = Object.freeze({ kind: 'l2inner' });

/**
 * Which (i, j) pairs of a row are computed, by GLOBAL row i and column j:
 * `'none'` all (cdist); `'skipDiagAndAbove'` only j < i (pdist); `'skipAbove'` only j <= i
 * (l2Kernel); `'skipDiagAndBelow'` only j > i (pdist's blocks computed transposed, whose rows are
 * the block's columns). Skipped outputs are left untouched.
 */
export type SkipRule = 'none' | 'skipDiagAndAbove' | 'skipAbove' | 'skipDiagAndBelow';

/** Integer exponents up to this use repeated multiplication; larger ones use Math.pow. */
export const MAX_MULTIPLY_P = 16;

function checkP(p: unknown): number {
  if (typeof p !== 'number' || !Number.isFinite(p) || p < 1) {
    throw new OptionError(`p must be a number >= 1, got ${describe(p)}`);
  }
  return p;
}

/**
 * The distance operation for exponent `p`: L1 for p = 1, Lp otherwise.
 *
 * @param p a finite number >= 1. Default 1.
 * @throws OptionError "p must be a number >= 1, got 0.5" for p < 1, NaN, infinite or non-numbers.
 * @example pcfOp(2) // { kind: 'lp', p: 2 }
 */
export function pcfOp(p: number = 1): PcfOp {
  return checkP(p) === 1 ? { kind: 'l1' } : { kind: 'lp', p };
}

/**
 * Integrates one pair with the kernel specialised for `op` (validated). Same contract as
 * {@link l1Pair}: both PCFs valid, Float64Array data, `upper` the dtype's largest finite float.
 *
 * @param dtype the PCFs' dtype: `'float32'` (their values then float32 numbers) computes L1, L2
 *   and the inner product in float32 (pairKernels32.ts); other exponents are integrated in float64
 *   either way and not rounded here. Default `'float64'`.
 * @throws OptionError for an Lp op with p < 1 or non-finite p.
 * @example integratePair(pcfOp(1), ft, fv, 0, ft.length, gt, gv, 0, gt.length, FLOAT32_MAX, 'float32')
 */
export function integratePair(
  op: PcfOp,
  aTimes: Float64Array, aValues: Float64Array, aStart: number, aEnd: number,
  bTimes: Float64Array, bValues: Float64Array, bStart: number, bEnd: number, upper: number,
  dtype: PcfDtype = 'float64',
): number {
  const f32 = dtype === 'float32';
  if (op.kind === 'l2inner') return (f32 ? l2InnerPair32 : l2InnerPair)(aTimes, aValues, aStart, aEnd, bTimes, bValues, bStart, bEnd, upper);
  const p = op.kind === 'l1' ? 1 : checkP(op.p);
  if (p === 1) return (f32 ? l1Pair32 : l1Pair)(aTimes, aValues, aStart, aEnd, bTimes, bValues, bStart, bEnd, upper);
  if (p === 2) return (f32 ? l2Pair32 : l2Pair)(aTimes, aValues, aStart, aEnd, bTimes, bValues, bStart, bEnd, upper);
  if (Number.isInteger(p) && p <= MAX_MULTIPLY_P) return lpIntPair(aTimes, aValues, aStart, aEnd, bTimes, bValues, bStart, bEnd, upper, p);
  return lpRealPair(aTimes, aValues, aStart, aEnd, bTimes, bValues, bStart, bEnd, upper, p);
}

/**
 * A float64 copy of `data` (times and values widened exactly; offsets shared), or `data` itself
 * when it already holds Float64Arrays. The kernels read float64 only. Note that {@link integrateRow}
 * computes a float32 set (Float32Array data) in float32, and its widened copy in float64.
 */
export function widenPcfData(data: PcfData): PcfData {
  if (data.times instanceof Float64Array && data.values instanceof Float64Array) return data;
  return { times: new Float64Array(data.times), values: new Float64Array(data.values), offsets: data.offsets };
}

// Per-thread scratch for float32 inputs. Each worker has its own module instance, and integrateRow
// runs to completion before anyone else can touch these, so one pair of buffers per side suffices.
let rowTimes: Float64Array = new Float64Array(256);
let rowValues: Float64Array = new Float64Array(256);
let colTimes: Float64Array = new Float64Array(4096);
let colValues: Float64Array = new Float64Array(4096);
let colOffsets: Uint32Array = new Uint32Array(1024);

function grown(buf: Float64Array, n: number): Float64Array {
  return buf.length >= n ? buf : new Float64Array(Math.max(n, 2 * buf.length));
}

/**
 * Computes one row of a block: PCF `row` of set `a` against PCFs `j0 .. j1 - 1` of set `b`,
 * writing the result for column j to `out[outOffset + (j - j0)]` (rounded to float32 when `out` is
 * a Float32Array). The skip rule compares GLOBAL indices i = rowIndexBase + row and
 * j = colIndexBase + j; skipped outputs are not written.
 *
 * float32 inputs (Float32Array times and values in both sets) are widened into per-thread scratch
 * first (exact), costing one copy of the row and of the column range per call, and computed in
 * float32 for L1, L2 and the inner product (results then equal the float32 WebAssembly kernels'),
 * in float64 for other exponents.
 *
 * @param op from {@link pcfOp} or {@link L2_INNER}.
 * @param upper the dtype's largest finite float: `integrationLimit(set.dtype)`.
 * @throws OptionError for an Lp op with p < 1 or non-finite p. Indices are not checked.
 * @example
 * // pdist row 5 of a whole set: columns 0..4 land in out[0..4]
 * integrateRow(pcfOp(1), set, 5, set, 0, set.count, out, 0, 'skipDiagAndAbove', 0, 0, Number.MAX_VALUE);
 */
export function integrateRow(
  op: PcfOp,
  a: PcfData, row: number,
  b: PcfData, jFirst: number, j1: number,
  out: Float64Array | Float32Array, outOffset: number,
  skip: SkipRule, rowIndexBase: number, colIndexBase: number,
  upper: number,
): void {
  let jEnd = j1;
  if (skip === 'skipDiagAndBelow') {
    // Columns after the diagonal only: the row's first kept column lands at outOffset still.
    const first = rowIndexBase + row - colIndexBase + 1;
    if (first > jFirst) {
      outOffset += first - jFirst;
      jFirst = first;
    }
  } else if (skip !== 'none') {
    const limit = rowIndexBase + row - colIndexBase + (skip === 'skipAbove' ? 1 : 0);
    if (limit < jEnd) jEnd = limit;
  }
  if (jEnd <= jFirst) return;

  const f32 = a.times instanceof Float32Array && b.times instanceof Float32Array;
  let aStart = a.offsets[row]!;
  let aEnd = a.offsets[row + 1]!;
  let at: Float64Array;
  let av: Float64Array;
  if (a.times instanceof Float64Array && a.values instanceof Float64Array) {
    at = a.times;
    av = a.values;
  } else {
    const n = aEnd - aStart;
    at = rowTimes = grown(rowTimes, n);
    av = rowValues = grown(rowValues, n);
    at.set(a.times.subarray(aStart, aEnd));
    av.set(a.values.subarray(aStart, aEnd));
    aStart = 0;
    aEnd = n;
  }

  let bo = b.offsets;
  let bt: Float64Array;
  let bv: Float64Array;
  let j0 = jFirst;
  let o = outOffset - jFirst;
  if (b.times instanceof Float64Array && b.values instanceof Float64Array) {
    bt = b.times;
    bv = b.values;
  } else {
    // Copy columns [jFirst, jEnd) into scratch with offsets rebased to 0, so the row loops below
    // read one layout either way.
    const base = bo[jFirst]!;
    const hi = bo[jEnd]!;
    bt = colTimes = grown(colTimes, hi - base);
    bv = colValues = grown(colValues, hi - base);
    bt.set(b.times.subarray(base, hi));
    bv.set(b.values.subarray(base, hi));
    const count = jEnd - jFirst;
    if (colOffsets.length < count + 1) colOffsets = new Uint32Array(Math.max(count + 1, 2 * colOffsets.length));
    for (let k = 0; k <= count; k++) colOffsets[k] = bo[jFirst + k]! - base;
    bo = colOffsets;
    j0 = 0;
    jEnd = count;
    o = outOffset;
  }

  const p = op.kind === 'lp' ? checkP(op.p) : 1;
  if (f32 && sumsInFloat32(op)) rowF32(op.kind === 'l2inner' ? l2InnerPair32 : p === 1 ? l1Pair32 : l2Pair32, at, av, aStart, aEnd, bt, bv, bo, j0, jEnd, out, o, upper);
  else if (op.kind === 'l1') rowL1(at, av, aStart, aEnd, bt, bv, bo, j0, jEnd, out, o, upper);
  else if (op.kind === 'l2inner') rowInner(at, av, aStart, aEnd, bt, bv, bo, j0, jEnd, out, o, upper);
  else {
    if (p === 1) rowL1(at, av, aStart, aEnd, bt, bv, bo, j0, jEnd, out, o, upper);
    else if (p === 2) rowL2(at, av, aStart, aEnd, bt, bv, bo, j0, jEnd, out, o, upper);
    else if (Number.isInteger(p) && p <= MAX_MULTIPLY_P) rowLpInt(at, av, aStart, aEnd, bt, bv, bo, j0, jEnd, out, o, upper, p);
    else rowLpReal(at, av, aStart, aEnd, bt, bv, bo, j0, jEnd, out, o, upper, p);
  }
}

// One loop per operation so that each calls (and can inline) exactly one pair kernel; `o` is
// outOffset - j0. Offsets go to the pair kernels exactly as loaded: arithmetic on a Uint32Array
// element (such as subtracting a base) is typed as a double, and the kernels' index arithmetic
// then runs in float64 on every step, about 20% slower (measured).

function rowL1(
  at: Float64Array, av: Float64Array, as: number, ae: number, bt: Float64Array, bv: Float64Array, bo: Uint32Array,
  j0: number, jEnd: number, out: Float64Array | Float32Array, o: number, upper: number,
): void {
  for (let j = j0; j < jEnd; j++) out[o + j] = l1Pair(at, av, as, ae, bt, bv, bo[j]!, bo[j + 1]!, upper);
}

function rowL2(
  at: Float64Array, av: Float64Array, as: number, ae: number, bt: Float64Array, bv: Float64Array, bo: Uint32Array,
  j0: number, jEnd: number, out: Float64Array | Float32Array, o: number, upper: number,
): void {
  for (let j = j0; j < jEnd; j++) out[o + j] = l2Pair(at, av, as, ae, bt, bv, bo[j]!, bo[j + 1]!, upper);
}

function rowLpInt(
  at: Float64Array, av: Float64Array, as: number, ae: number, bt: Float64Array, bv: Float64Array, bo: Uint32Array,
  j0: number, jEnd: number, out: Float64Array | Float32Array, o: number, upper: number, p: number,
): void {
  for (let j = j0; j < jEnd; j++) out[o + j] = lpIntPair(at, av, as, ae, bt, bv, bo[j]!, bo[j + 1]!, upper, p);
}

function rowLpReal(
  at: Float64Array, av: Float64Array, as: number, ae: number, bt: Float64Array, bv: Float64Array, bo: Uint32Array,
  j0: number, jEnd: number, out: Float64Array | Float32Array, o: number, upper: number, p: number,
): void {
  for (let j = j0; j < jEnd; j++) out[o + j] = lpRealPair(at, av, as, ae, bt, bv, bo[j]!, bo[j + 1]!, upper, p);
}

function rowInner(
  at: Float64Array, av: Float64Array, as: number, ae: number, bt: Float64Array, bv: Float64Array, bo: Uint32Array,
  j0: number, jEnd: number, out: Float64Array | Float32Array, o: number, upper: number,
): void {
  for (let j = j0; j < jEnd; j++) out[o + j] = l2InnerPair(at, av, as, ae, bt, bv, bo[j]!, bo[j + 1]!, upper);
}

/** The float32 kernels share one loop: they are the JS path only where WebAssembly is missing or a wasm row lost range. */
function rowF32(
  pair: typeof l1Pair32, at: Float64Array, av: Float64Array, as: number, ae: number, bt: Float64Array, bv: Float64Array, bo: Uint32Array,
  j0: number, jEnd: number, out: Float64Array | Float32Array, o: number, upper: number,
): void {
  for (let j = j0; j < jEnd; j++) out[o + j] = pair(at, av, as, ae, bt, bv, bo[j]!, bo[j + 1]!, upper);
}

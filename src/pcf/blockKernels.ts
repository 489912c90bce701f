/**
 * The kernel module the PCF block operation loads into every MU core. One task computes one row of
 * a block: PCF (rowFirst + task) against columns [colFirst, colFirst + colCount).
 *
 * L1, L2 and the L2 inner product run through the WebAssembly row kernels (wasm/wasmRows.ts) when
 * the runtime has WebAssembly with SIMD: same rectangle walk and summation order as the JS pair
 * kernels, so the same results bit for bit, at three to four times their speed per core (twelve
 * pairs merged at once; see wasm/rowCode.ts). A float32 set (Float32Array data) runs the float32
 * row kernels, equal bit for bit to the float32 pair kernels (pairKernels32.ts). Other exponents,
 * and any block the wasm memory cap refuses, use integrateRow.
 */
import type { TriangleSkipMode } from '../blocks/index.js';
import { defineKernel, type NDView } from '../mu/index.js';
import { muState } from '../mu/state.js';
import { integrateRow, L2_INNER, pcfOp, type PcfOp, type SkipRule } from './integrate.js';
import { lostRange } from './pairKernels.js';
import { innerLostRange, LP32_SAFE_SUM_MIN } from './pairKernels32.js';
import type { PcfData } from './pcfSet.js';
import { WasmRows, wasmRowsAvailable, type WasmRowOp, type WasmRowPrecision } from './wasm/wasmRows.js';

/** Constants of one block launch. `op` 0 = Lp distance with `p`, 1 = L2 inner product. */
export interface BlockParams {
  readonly rowFirst: number;
  readonly colFirst: number;
  readonly colCount: number;
  readonly op: number;
  readonly p: number;
  readonly skip: number;
  readonly upper: number;
}

/** Skip rules by their code in {@link BlockParams.skip}. */
export const SKIP_RULES: readonly SkipRule[] = ['none', 'skipDiagAndAbove', 'skipAbove', 'skipDiagAndBelow'];

/** The code of each triangle skip mode in {@link BlockParams.skip} (the GPU kernels use the same codes). */
export const SKIP_CODE: Readonly<Record<TriangleSkipMode, number>> = {
  none: SKIP_RULES.indexOf('none'),
  lowerTriangleSkipDiag: SKIP_RULES.indexOf('skipDiagAndAbove'),
  lowerTriangle: SKIP_RULES.indexOf('skipAbove'),
};

// This core's wasm row kernels by precision (each core imports its own copy of this module),
// created on first use, and the launch whose columns are loaded in each. Launches can alternate on
// a core (two Maps launched at once), and a later launch with the same arguments may find new data
// at the same pointers (device buffers are reused from call to call), so each task checks the launch.
const wasmRows = new Map<WasmRowPrecision, WasmRows | null>();
const loadedFor = new Map<WasmRows, number>();

function wasmRowsOrNull(precision: WasmRowPrecision): WasmRows | null {
  let w = wasmRows.get(precision);
  if (w === undefined) wasmRows.set(precision, w = wasmRowsAvailable(precision) ? new WasmRows(precision) : null);
  return w;
}

/** The wasm row op for `op`, or -1 when only the JS kernels handle it. */
function wasmOpFor(op: PcfOp): WasmRowOp | -1 {
  if (op.kind === 'l1') return 0;
  if (op.kind === 'l2inner') return 2;
  return op.p === 2 ? 1 : -1;
}

/**
 * Whether every L2 distance of a wasm row was computed without loss of range (see `lostRange` in
 * pairKernels.ts, here judged from the stored root). A row that fails is recomputed by the JS
 * kernels, which fall back to the scaled kernel for the pairs that need it; the others come out
 * bit for bit the same.
 */
function l2RowInRange(rows: PcfData, i: number, cols: PcfData, j0: number, jEnd: number, out: ArrayLike<number>, at: number): boolean {
  const rowLast = rows.values[rows.offsets[i + 1]! - 1]!;
  for (let j = j0; j < jEnd; j++) {
    const d = out[at + j - j0]!;
    const lastDiff = rowLast - cols.values[cols.offsets[j + 1]! - 1]!;
    if (lostRange(d * d, lastDiff * lastDiff, lastDiff)) return false;
  }
  return true;
}

/** sqrt(LP32_SAFE_SUM_MIN): a float32 root above it comes from a sum at or above LP32_SAFE_SUM_MIN. */
const ROOT32_SAFE_MIN = Math.sqrt(LP32_SAFE_SUM_MIN);

/**
 * Whether every result of a float32 wasm row is one the float32 pair kernels (pairKernels32.ts)
 * keep: finite, for L2 (`wop` 1) a sum in range, for the inner product (`wop` 2) a last product in
 * range (innerLostRange). Where they fall back to float64 the row is recomputed by them. The test
 * on the stored root flags at least every pair they flag (a root above sqrt(min) rounds from a sum
 * above min), so a row that passes is theirs bit for bit.
 */
function rowInRange32(wop: WasmRowOp, rows: PcfData, i: number, cols: PcfData, j0: number, jEnd: number, out: ArrayLike<number>, at: number): boolean {
  const rowLast = rows.values[rows.offsets[i + 1]! - 1]!;
  for (let j = j0; j < jEnd; j++) {
    const r = out[at + j - j0]!;
    if (wop === 2) {
      if (innerLostRange(r, rowLast, cols.values[cols.offsets[j + 1]! - 1]!)) return false;
      continue;
    }
    if (!(Math.abs(r) < Infinity)) return false;
    if (wop !== 1) continue;
    const lastDiff = Math.fround(rowLast - cols.values[cols.offsets[j + 1]! - 1]!);
    if (!(r > ROOT32_SAFE_MIN) || (lastDiff !== 0 && Math.fround(lastDiff * lastDiff) < LP32_SAFE_SUM_MIN)) return false;
  }
  return true;
}

export const pcf_block = defineKernel({
  bind: (
    rowTimes: NDView<Float64Array | Float32Array>, rowValues: NDView<Float64Array | Float32Array>, rowOffsets: NDView<Uint32Array>,
    colTimes: NDView<Float64Array | Float32Array>, colValues: NDView<Float64Array | Float32Array>, colOffsets: NDView<Uint32Array>,
    out: NDView<Float64Array | Float32Array>, params: BlockParams,
  ) => {
    const rows: PcfData = { times: rowTimes.data, values: rowValues.data, offsets: rowOffsets.data };
    const cols: PcfData = { times: colTimes.data, values: colValues.data, offsets: colOffsets.data };
    const op: PcfOp = params.op === 1 ? L2_INNER : pcfOp(params.p);
    const skip = SKIP_RULES[params.skip]!;
    const { rowFirst, colFirst, colCount, upper } = params;
    const output = out.data;
    const wop = wasmOpFor(op);
    const f32 = rows.times instanceof Float32Array && cols.times instanceof Float32Array;
    const wasm = wop === -1 || colCount === 0 ? null : wasmRowsOrNull(f32 ? 'float32' : 'float64');
    let useWasm = wasm !== null;
    const jsRow = (r: number): void => {
      integrateRow(op, rows, rowFirst + r, cols, colFirst, colFirst + colCount, output, r * colCount, skip, 0, 0, upper);
    };
    const wasmRow = (w: WasmRows, r: number): void => {
      if (loadedFor.get(w) !== muState.launch) {
        if (!w.setColumns(cols, colFirst, colCount, 0, upper)) { useWasm = false; jsRow(r); return; }
        loadedFor.set(w, muState.launch);
      }
      const i = rowFirst + r;
      let j0 = colFirst;
      let jEnd = colFirst + colCount;
      if (skip === 'skipDiagAndBelow') j0 = Math.max(j0, i + 1);
      else if (skip !== 'none') jEnd = Math.min(jEnd, i + (skip === 'skipAbove' ? 1 : 0));
      if (jEnd <= j0) return;
      const at = r * colCount + j0 - colFirst;
      if (!w.row(wop as WasmRowOp, rows, i, j0, jEnd, output, at)) jsRow(r);
      else if (f32 ? !rowInRange32(wop as WasmRowOp, rows, i, cols, j0, jEnd, output, at) : wop === 1 && !l2RowInRange(rows, i, cols, j0, jEnd, output, at)) jsRow(r);
    };
    return (first: number, end: number) => {
      for (let r = first; r < end; r++) {
        if (useWasm) wasmRow(wasm!, r);
        else jsRow(r);
      }
    };
  },
});

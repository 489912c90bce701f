/**
 * Rows of a block through the WebAssembly row kernels (rowModule.ts). A WasmRows object owns one
 * instance and its memory; it belongs to one thread (each MU core makes its own). It computes in
 * float64 or in float32, chosen at construction.
 *
 * Memory cannot wrap the set's SharedArrayBuffer, so {@link WasmRows.setColumns} copies a block's
 * column range into the instance once (as 16-byte records, or 8-byte ones in float32; layout in rowModule.ts), and
 * {@link WasmRows.row} copies the row PCF in and the row's results out. Those copies are linear in breakpoints; the row walk is
 * quadratic, so they cost about 1% of a block.
 */
import type { PcfData } from '../pcfSet.js';
import { SCRATCH_BYTES, SENTINELS } from './rowCode.js';
import { instantiateRowKernels, type RowFunction, type RowInstance } from './rowModule.js';

/** What a row integrates: 0 = L1 distance, 1 = L2 distance, 2 = L2 inner product. */
export type WasmRowOp = 0 | 1 | 2;

/** The float type the row kernels compute in. */
export type WasmRowPrecision = 'float64' | 'float32';

const PAGE = 65536;
/** Cap on one instance's memory, far inside wasm32's 4 GiB of unsigned addresses. */
const MAX_BYTES = 2 ** 30;

/** Whether this runtime can run the WebAssembly row kernels of `precision` (false when instantiating fails). */
export function wasmRowsAvailable(precision: WasmRowPrecision = 'float64'): boolean {
  try {
    instantiateRowKernels(precision === 'float32' ? 'f32' : 'f64');
    return true;
  } catch {
    return false;
  }
}

/** One thread's WebAssembly row kernels with the columns of the current block loaded. */
export class WasmRows {
  readonly #wasm: RowInstance;
  readonly #fns: readonly RowFunction[];
  readonly #f32: boolean;
  /** Bytes of a record (time, value) and of a result. */
  readonly #record: number;
  readonly #result: number;
  /** Record index of the first column record (after the kernels' scratch bytes). */
  readonly #firstRecord: number;
  #floats: Float64Array | Float32Array = new Float64Array(0);
  #u32 = new Uint32Array(0);
  #colFirst = 0;
  #colCount = 0;
  #upper = 0;
  #offsBase = 0; // byte address of the column starts (record indices)
  #rowBase = 0; // byte address of the row records
  #rowRecords = 0; // capacity of the row area in records
  #outBase = 0; // byte address of the results

  /**
   * @param precision what the kernels compute in: `'float64'` (default; results equal the JS pair
   *   kernels bit for bit) or `'float32'` (records, sums and results in float32; results equal the
   *   float32 pair kernels of pairKernels32.ts bit for bit, except where a row needs their
   *   float64 fallback, see the block kernel).
   * @throws Error when the runtime has no WebAssembly SIMD.
   */
  constructor(precision: WasmRowPrecision = 'float64') {
    this.#f32 = precision === 'float32';
    const w = this.#wasm = instantiateRowKernels(this.#f32 ? 'f32' : 'f64');
    this.#fns = [w.l1Row, w.l2Row, w.innerRow];
    this.#record = this.#f32 ? 8 : 16;
    this.#result = this.#f32 ? 4 : 8;
    this.#firstRecord = Math.ceil(SCRATCH_BYTES / this.#record);
  }

  #ensure(bytes: number): void {
    const have = this.#wasm.memory.buffer.byteLength;
    if (bytes > have) this.#wasm.memory.grow(Math.ceil((bytes - have) / PAGE));
    const buffer = this.#wasm.memory.buffer;
    if (this.#floats.buffer !== buffer) {
      this.#floats = this.#f32 ? new Float32Array(buffer) : new Float64Array(buffer);
      this.#u32 = new Uint32Array(buffer);
    }
  }

  /**
   * Loads columns `colFirst .. colFirst + colCount - 1` of `cols` (rounded to float32 for a float32
   * instance, so float32 data goes in exactly) for integrals over
   * [0, upper) (`upper` the dtype's largest finite float, float32's for a float32 instance, at least every time of the rows and
   * columns), and reserves room for rows of up to `rowPoints` breakpoints (more grows the memory).
   * Replaces the previous columns. Returns false, loading nothing, when the columns would need over
   * 1 GiB of memory.
   */
  setColumns(cols: PcfData, colFirst: number, colCount: number, rowPoints: number, upper: number): boolean {
    const { times, values, offsets } = cols;
    const base = offsets[colFirst]!;
    const n = offsets[colFirst + colCount]! - base;
    const rec = this.#record;
    const records = this.#firstRecord + 1 + n + colCount * (SENTINELS - 1);
    if ((records + rowPoints + SENTINELS + 1) * rec + (colCount + 2) * (4 + this.#result) + 16 > MAX_BYTES) return false;
    this.#colFirst = colFirst;
    this.#colCount = colCount;
    this.#upper = upper;
    this.#offsBase = records * rec;
    this.#rowBase = this.#offsBase + ((colCount + 2) * 4 + 15 & ~15);
    this.#rowRecords = rowPoints + SENTINELS;
    this.#outBase = this.#rowBase + this.#rowRecords * rec;
    this.#ensure(this.#outBase + colCount * this.#result);
    const f = this.#floats;
    const u = this.#u32;
    const o = this.#offsBase >> 2;
    // Column k starts at record at; its last sentinel record is the next column's first record
    // (which that column never reads).
    let at = this.#firstRecord;
    f[2 * at] = 0;
    f[2 * at + 1] = 0;
    for (let k = 0; k < colCount; k++) {
      const s = offsets[colFirst + k]!;
      const len = offsets[colFirst + k + 1]! - s;
      u[o + k] = at;
      writeRecords(f, at, times, values, s, len, upper);
      at += len + SENTINELS - 1;
    }
    u[o + colCount] = at;
    return true;
  }

  /**
   * PCF `row` of `rows` against loaded columns `jFirst .. jEnd - 1` (global indices, inside the
   * loaded range, jFirst < jEnd), writing column j's result to `out[outOffset + j - jFirst]`
   * (rounded to float32 for a Float32Array). Returns false, computing nothing, for a row PCF too
   * long for the memory cap (over ~2^26 breakpoints, or ~2^27 in float32).
   */
  row(op: WasmRowOp, rows: PcfData, row: number, jFirst: number, jEnd: number, out: Float64Array | Float32Array, outOffset: number): boolean {
    const s = rows.offsets[row]!;
    const n = rows.offsets[row + 1]! - s;
    const rec = this.#record;
    if (n + SENTINELS > this.#rowRecords) {
      if (this.#rowBase + (n + SENTINELS) * rec + this.#colCount * this.#result > 2 * MAX_BYTES) return false;
      this.#rowRecords = n + SENTINELS;
      this.#outBase = this.#rowBase + this.#rowRecords * rec;
      this.#ensure(this.#outBase + this.#colCount * this.#result);
    }
    const rowRecord = this.#rowBase / rec;
    writeRecords(this.#floats, rowRecord, rows.times, rows.values, s, n, this.#upper);
    const count = jEnd - jFirst;
    this.#fns[op]!(rowRecord + 1, this.#offsBase + (jFirst - this.#colFirst) * 4, count, this.#outBase, this.#upper);
    const first = this.#outBase / this.#result;
    out.set(this.#floats.subarray(first, first + count), outOffset);
    return true;
  }
}

/**
 * Writes breakpoints `base .. base + n - 1` as the records after record `at` (two elements of
 * `floats` each): record at + k = (time
 * base + k, value base + k - 1) for k = 1 .. n - 1, then the sentinel (upper, value base + n - 1)
 * and SENTINELS - 1 more records (upper, 0). Record `at` itself (the PCF's first, never read) is
 * left as it is.
 */
function writeRecords(f64: Float64Array | Float32Array, at: number, times: ArrayLike<number>, values: ArrayLike<number>, base: number, n: number, upper: number): void {
  let x = 2 * at;
  for (let k = 1; k < n; k++) {
    f64[x + 2 * k] = times[base + k]!;
    f64[x + 2 * k + 1] = values[base + k - 1]!;
  }
  x += 2 * n;
  f64[x] = upper;
  f64[x + 1] = values[base + n - 1]!;
  for (let k = 1; k < SENTINELS; k++) {
    f64[x + 2 * k] = upper;
    f64[x + 2 * k + 1] = 0;
  }
}

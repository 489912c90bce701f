/**
 * The WebAssembly row kernels as a module: L1 distance, L2 distance and L2 inner product of one
 * PCF against a run of columns, in float64 or in float32, one module each (function bodies in
 * rowCode.ts).
 *
 * Memory layout the functions read (addresses in bytes, records by index: record r at byte 16 r,
 * or 8 r for the float32 functions, whose records, `upper` and results are float32):
 * - Bytes 0 .. SCRATCH_BYTES - 1 (rowCode.ts) are the functions' scratch; the rest is the caller's.
 * - A PCF's breakpoints as 16-byte records: record k holds (time k, value k - 1), so one step of the
 *   merge loads a time and the value of the rectangle ending there in one load. A PCF with n
 *   breakpoints starting at record r owns records r .. r + n + SENTINELS - 1 and its pointer starts
 *   at record r + 1 (record r is never read). Record r + n is its sentinel: time `upper` (the
 *   integration limit), and the last value; the SENTINELS - 1 records after it are (upper, 0). A column's
 *   last record is the next column's first.
 * - Column starts as u32 record indices: column c starts at record offs[c].
 * - Results in the function's float type, one per column.
 *
 * Times must be finite and >= 0 and at most `upper` (PCF validation guarantees it).
 */
import { encodeModule } from './encoder.js';
import { rowFunction, type RowPrecision } from './rowCode.js';

/**
 * A row function: the row PCF whose second record (its first merge step) is record `aFirst`
 * against the `count` columns whose starts are at byte `offs`, results to byte `out`, integrating
 * over [0, upper).
 */
export type RowFunction = (aFirst: number, offs: number, count: number, out: number, upper: number) => void;

/** The part of a WebAssembly.Memory used here (the project's lib settings carry no wasm types). */
export interface RowMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

/** The exports of one instance: the three row functions of one precision. */
export interface RowInstance {
  readonly memory: RowMemory;
  readonly l1Row: RowFunction;
  readonly l2Row: RowFunction;
  readonly innerRow: RowFunction;
}


/** The slice of the global WebAssembly API used here. */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { readonly exports: unknown };
}

// One module per precision, each compiled when first asked for: emitting a module's code makes a
// few MiB of short-lived garbage in the thread, which a run of one precision need not pay for the
// other (measured: 3 MiB more peak RSS of a float64 pdist with both in one module).
const compiled = new Map<RowPrecision, object>();

/**
 * A new instance of the row kernels of `precision` with its own memory (`pages` 64 KiB pages to
 * start). The module is compiled once per thread and precision.
 *
 * @throws Error when the runtime has no WebAssembly (or no WebAssembly SIMD), or whatever WebAssembly throws.
 */
export function instantiateRowKernels(precision: RowPrecision = 'f64', pages: number = 1): RowInstance {
  const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (wasm === undefined) throw new Error('WebAssembly is not available');
  let module = compiled.get(precision);
  if (module === undefined) {
    module = new wasm.Module(encodeModule([
      rowFunction('l1Row', 'absDiff', precision),
      rowFunction('l2Row', 'sqDiff', precision),
      rowFunction('innerRow', 'product', precision),
    ], 1));
    compiled.set(precision, module);
  }
  const e = new wasm.Instance(module).exports as RowInstance;
  if (pages > 1) e.memory.grow(pages - 1);
  const { memory, l1Row, l2Row, innerRow } = e;
  return { memory, l1Row, l2Row, innerRow };
}

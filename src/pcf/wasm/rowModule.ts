/**
 * The WebAssembly row kernels: L1 distance, L2 distance and L2 inner product of one PCF against a
 * run of columns, the same rectangle walk as l1Pair / l2Pair / l2InnerPair (pairKernels.ts) with
 * the same expressions in the same order, so results are identical bit for bit.
 *
 * Memory layout the functions read (all addresses in bytes):
 * - A PCF's breakpoints as 16-byte records: record k holds (time k, value k - 1), so one step of the
 *   merge loads a time and the value of the rectangle ending there from one pointer. A PCF with
 *   breakpoints s .. e - 1 owns records s .. e and its pointers run over records s + 1 .. e - 1;
 *   record e (time unused) supplies value e - 1 to the tail loop.
 * - Column starts as u32 byte addresses of records: column c spans [offs[c], offs[c + 1]).
 * - Results as f64, one per column.
 *
 * Signature of each function: (aStart, aEnd, offs, count, out: i32, upper: f64) -> (), where aStart
 * and aEnd are the addresses of the row PCF's first and one-past-last breakpoint records.
 *
 * The merge step is branch-free as in pairKernels.ts: `select` picks the right edge and the 0/1
 * results of the two compares advance the pointers (by 16 bytes each). Loads have no bounds checks
 * in the loop (wasm guards memory with guard pages).
 */
import { Code, encodeModule, F64, I32, I64, Op, type FunctionDef } from './encoder.js';

// Locals: parameters first, then the function's own.
const A_START = 0, A_END = 1, OFFS = 2, COUNT = 3, OUT = 4, UPPER = 5;
const PA = 6, PB = 7, B_END = 8, AI = 9;
const T = 10, SUM = 11, FV = 12, GV = 13, TN = 14, D = 15, IA = 16, IB = 17;
const LOCALS = [I32, I32, I32, I32, F64, F64, F64, F64, F64, F64, I64, I64];

/** Which value is integrated over a rectangle with values (f, g). */
type Integrand = 'absDiff' | 'sqDiff' | 'product';

/** Pushes integrand(f, g), given code that pushes f and code that pushes g. */
function integrand(c: Code, kind: Integrand, f: (c: Code) => void, g: (c: Code) => void): void {
  f(c);
  g(c);
  if (kind === 'absDiff') c.op(Op.f64Sub, Op.f64Abs);
  else if (kind === 'sqDiff') c.op(Op.f64Sub).tee(D).get(D).op(Op.f64Mul);
  else c.op(Op.f64Mul);
}

/** The tail loop once the other PCF has run out: `ptr` walks to `end`, `cur` is its current value. */
function tail(c: Code, kind: Integrand, ptr: number, end: number, cur: number): void {
  c.block().get(ptr).get(end).op(Op.i32GeU).brIf(0).loop();
  // sum += (r - t) * integrand(fv, gv); t = r
  c.get(SUM).get(ptr).mem(Op.f64Load, 3, 0).tee(TN).get(T).op(Op.f64Sub);
  integrand(c, kind, (x) => x.get(FV), (x) => x.get(GV));
  c.op(Op.f64Mul, Op.f64Add).set(SUM).get(TN).set(T);
  // cur = value at this breakpoint (the next record's second slot); advance
  c.get(ptr).mem(Op.f64Load, 3, 24).set(cur);
  c.get(ptr).i32(16).op(Op.i32Add).tee(ptr).get(end).op(Op.i32LtU).brIf(0);
  c.end().end();
}

function rowFunction(name: string, kind: Integrand): FunctionDef {
  const c = new Code();
  c.block().loop(); // over columns
  c.get(COUNT).op(Op.i32Eqz).brIf(1);
  c.get(OFFS).mem(Op.i32Load, 2, 0).i32(16).op(Op.i32Add).set(PB);
  c.get(OFFS).mem(Op.i32Load, 2, 4).set(B_END);
  c.get(A_START).i32(16).op(Op.i32Add).set(PA);
  c.f64(0).set(T).f64(0).set(SUM);

  // Merge while both PCFs have breakpoints left.
  c.block();
  c.get(PA).get(A_END).op(Op.i32GeU).get(PB).get(B_END).op(Op.i32GeU).op(0x72 /* i32.or */).brIf(0);
  c.loop();
  c.get(PA).mem(Op.i64Load, 3, 0).set(IA);
  c.get(PB).mem(Op.i64Load, 3, 0).set(IB);
  c.get(IA).get(IB).get(IA).get(IB).op(Op.i64LeS).tee(AI).op(Op.select, Op.f64ReinterpretI64).set(TN);
  c.get(SUM).get(TN).get(T).op(Op.f64Sub);
  integrand(c, kind, (x) => x.get(PA).mem(Op.f64Load, 3, 8), (x) => x.get(PB).mem(Op.f64Load, 3, 8));
  c.op(Op.f64Mul, Op.f64Add).set(SUM).get(TN).set(T);
  c.get(PA).get(AI).i32(4).op(Op.i32Shl).op(Op.i32Add).set(PA);
  c.get(PB).get(IB).get(IA).op(Op.i64LeS).i32(4).op(Op.i32Shl).op(Op.i32Add).set(PB);
  c.get(PA).get(A_END).op(Op.i32LtU).get(PB).get(B_END).op(Op.i32LtU).op(Op.i32And).brIf(0);
  c.end().end();

  c.get(PA).mem(Op.f64Load, 3, 8).set(FV);
  c.get(PB).mem(Op.f64Load, 3, 8).set(GV);
  tail(c, kind, PA, A_END, FV);
  tail(c, kind, PB, B_END, GV);

  // out[k] = sum + (upper - t) * integrand(fv, gv), square-rooted for L2.
  c.get(OUT).get(SUM).get(UPPER).get(T).op(Op.f64Sub);
  integrand(c, kind, (x) => x.get(FV), (x) => x.get(GV));
  c.op(Op.f64Mul, Op.f64Add);
  if (kind === 'sqDiff') c.op(Op.f64Sqrt);
  c.mem(Op.f64Store, 3, 0);

  c.get(OUT).i32(8).op(Op.i32Add).set(OUT);
  c.get(OFFS).i32(4).op(Op.i32Add).set(OFFS);
  c.get(COUNT).i32(1).op(Op.i32Sub).set(COUNT);
  c.br(0);
  c.end().end();
  return { name, params: [I32, I32, I32, I32, I32, F64], locals: LOCALS, body: c };
}

/** A row function: see the module comment for the arguments. */
export type RowFunction = (aStart: number, aEnd: number, offs: number, count: number, out: number, upper: number) => void;

/** The part of a WebAssembly.Memory used here (the project's lib settings carry no wasm types). */
export interface RowMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

/** The exports of one instance. */
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

let compiled: object | undefined;

/**
 * A new instance of the row kernels with its own memory (`pages` 64 KiB pages to start). The module
 * is compiled once per thread.
 *
 * @throws Error when the runtime has no WebAssembly, or whatever WebAssembly throws.
 */
export function instantiateRowKernels(pages: number = 1): RowInstance {
  const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (wasm === undefined) throw new Error('WebAssembly is not available');
  compiled ??= new wasm.Module(encodeModule([
    rowFunction('l1Row', 'absDiff'),
    rowFunction('l2Row', 'sqDiff'),
    rowFunction('innerRow', 'product'),
  ], 1));
  const e = new wasm.Instance(compiled).exports as RowInstance;
  if (pages > 1) e.memory.grow(pages - 1);
  return { memory: e.memory, l1Row: e.l1Row, l2Row: e.l2Row, innerRow: e.innerRow };
}

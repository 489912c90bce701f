/**
 * A minimal WebAssembly binary writer: just enough to emit one module with a few functions over
 * one memory (type, function, memory, export and code sections). Instructions are appended as raw
 * opcodes through {@link Code}; nothing is validated here, `new WebAssembly.Module` does that.
 */

/** Value types by their binary code. */
export const I32 = 0x7f;
export const I64 = 0x7e;
export const F32 = 0x7d;
export const F64 = 0x7c;
export const V128 = 0x7b;

/** The opcodes the PCF row kernels use. */
export const Op = {
  block: 0x02, loop: 0x03, if: 0x04, else: 0x05, br: 0x0c, brIf: 0x0d, end: 0x0b, select: 0x1b,
  localGet: 0x20, localSet: 0x21, localTee: 0x22,
  i32Load: 0x28, i64Load: 0x29, f32Load: 0x2a, f64Load: 0x2b, i32Store: 0x36, f32Store: 0x38, f64Store: 0x39,
  i32Const: 0x41, f32Const: 0x43, f64Const: 0x44,
  i32Eqz: 0x45, i32LeS: 0x4c, i32LeU: 0x4d, i64LeS: 0x57, f32Lt: 0x5d, f64Lt: 0x63,
  i32Popcnt: 0x69, i32Add: 0x6a, i32Sub: 0x6b, i32And: 0x71, i32Shl: 0x74,
  f32Abs: 0x8b, f32Sqrt: 0x91, f32Add: 0x92, f32Sub: 0x93, f32Mul: 0x94,
  f64Abs: 0x99, f32ReinterpretI32: 0xbe, f64ReinterpretI64: 0xbf, f64Sqrt: 0x9f, f64Add: 0xa0, f64Sub: 0xa1, f64Mul: 0xa2,
} as const;

/** The SIMD opcodes the row kernels use (each follows the 0xfd prefix). */
export const Simd = {
  v128Load: 0x00, v128Store: 0x0b, v128Const: 0x0c, i8x16Shuffle: 0x0d, i32x4Splat: 0x11, f32x4Splat: 0x13, f64x2Splat: 0x14,
  f32x4ExtractLane: 0x1f, f32x4ReplaceLane: 0x20, f64x2ExtractLane: 0x21, f64x2ReplaceLane: 0x22,
  f32x4Eq: 0x41, f32x4Lt: 0x43, f32x4Le: 0x45,
  f64x2Eq: 0x47, f64x2Lt: 0x49, f64x2Le: 0x4b, v128And: 0x4e, v128Or: 0x50, v128AnyTrue: 0x53,
  v128Load64Lane: 0x57, v128Load64Zero: 0x5d, i32x4Bitmask: 0xa4, i32x4Add: 0xae,
  i64x2Bitmask: 0xc4, i64x2Sub: 0xd1,
  f32x4Add: 0xe4, f32x4Sub: 0xe5, f32x4Mul: 0xe6, f32x4Pmin: 0xea,
  f64x2Add: 0xf0, f64x2Sub: 0xf1, f64x2Mul: 0xf2, f64x2Pmin: 0xf6,
} as const;

/** Block type "no result". */
const EMPTY = 0x40;

function uleb(n: number, out: number[]): void {
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
}

function sleb(n: number, out: number[]): void {
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) { out.push(b); return; }
    out.push(b | 0x80);
  }
}

/** The instruction stream of one function body. Methods append and return `this`. */
export class Code {
  readonly bytes: number[] = [];

  op(...codes: number[]): this { this.bytes.push(...codes); return this; }
  get(local: number): this { this.bytes.push(Op.localGet); uleb(local, this.bytes); return this; }
  set(local: number): this { this.bytes.push(Op.localSet); uleb(local, this.bytes); return this; }
  tee(local: number): this { this.bytes.push(Op.localTee); uleb(local, this.bytes); return this; }
  i32(value: number): this { this.bytes.push(Op.i32Const); sleb(value | 0, this.bytes); return this; }
  f32(value: number): this {
    this.bytes.push(Op.f32Const, ...new Uint8Array(new Float32Array([value]).buffer));
    return this;
  }
  f64(value: number): this {
    this.bytes.push(Op.f64Const, ...new Uint8Array(new Float64Array([value]).buffer));
    return this;
  }
  /** A load or store with natural alignment (`align` as log2 bytes) and a constant byte offset. */
  mem(opcode: number, align: number, offset: number): this {
    this.bytes.push(opcode);
    uleb(align, this.bytes);
    uleb(offset, this.bytes);
    return this;
  }
  /** A SIMD instruction: the prefix, the opcode, then raw immediate bytes (lane indices, shuffle masks). */
  simd(opcode: number, ...immediates: number[]): this {
    this.bytes.push(0xfd);
    uleb(opcode, this.bytes);
    this.bytes.push(...immediates);
    return this;
  }
  /** A SIMD load or store with natural alignment (`align` as log2 bytes) and a constant byte offset. */
  simdMem(opcode: number, align: number, offset: number): this {
    this.bytes.push(0xfd);
    uleb(opcode, this.bytes);
    uleb(align, this.bytes);
    uleb(offset, this.bytes);
    return this;
  }
  block(): this { this.bytes.push(Op.block, EMPTY); return this; }
  loop(): this { this.bytes.push(Op.loop, EMPTY); return this; }
  /** `if` with no result: runs up to the matching `orElse` or `end` when the popped i32 is nonzero. */
  ifThen(): this { this.bytes.push(Op.if, EMPTY); return this; }
  orElse(): this { this.bytes.push(Op.else); return this; }
  end(): this { this.bytes.push(Op.end); return this; }
  br(depth: number): this { this.bytes.push(Op.br); uleb(depth, this.bytes); return this; }
  brIf(depth: number): this { this.bytes.push(Op.brIf); uleb(depth, this.bytes); return this; }
}

/** One exported function: its signature, extra locals (in order after the params) and body. */
export interface FunctionDef {
  readonly name: string;
  readonly params: readonly number[];
  readonly locals: readonly number[];
  readonly body: Code;
}

function section(id: number, content: number[], out: number[]): void {
  out.push(id);
  uleb(content.length, out);
  out.push(...content);
}

function vec(items: readonly number[][], out: number[]): void {
  uleb(items.length, out);
  for (const item of items) out.push(...item);
}

/**
 * The binary of a module with one exported memory named `memory` (initially `pages` 64 KiB pages,
 * growable) and the given functions, each exported under its name and returning nothing.
 */
export function encodeModule(functions: readonly FunctionDef[], pages: number): Uint8Array {
  const out = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  const types = functions.map((f) => {
    const t = [0x60];
    uleb(f.params.length, t);
    t.push(...f.params, 0x00);
    return t;
  });
  const typeSec: number[] = [];
  vec(types, typeSec);
  section(1, typeSec, out);

  const funcSec: number[] = [];
  vec(functions.map((_, k) => { const b: number[] = []; uleb(k, b); return b; }), funcSec);
  section(3, funcSec, out);

  const memSec: number[] = [];
  uleb(1, memSec);
  memSec.push(0x00);
  uleb(pages, memSec);
  section(5, memSec, out);

  const exports: number[][] = [];
  const name = (s: string): number[] => { const b: number[] = []; uleb(s.length, b); for (const c of s) b.push(c.charCodeAt(0)); return b; };
  exports.push([...name('memory'), 0x02, 0x00]);
  functions.forEach((f, k) => { const b = [...name(f.name), 0x00]; uleb(k, b); exports.push(b); });
  const expSec: number[] = [];
  vec(exports, expSec);
  section(7, expSec, out);

  const bodies = functions.map((f) => {
    const body: number[] = [];
    uleb(f.locals.length, body);
    for (const type of f.locals) body.push(0x01, type);
    body.push(...f.body.bytes, Op.end);
    const sized: number[] = [];
    uleb(body.length, sized);
    sized.push(...body);
    return sized;
  });
  const codeSec: number[] = [];
  vec(bodies, codeSec);
  section(10, codeSec, out);
  return new Uint8Array(out);
}

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

/**
 * Bytes appended into a buffer that doubles as it fills. Each core emits its kernels' code when it
 * first needs them; a number[] of the same bytes takes eight bytes an entry and leaves the old
 * array behind at every growth, which lived long enough to be promoted: about 2 MiB of heap per
 * core for the float64 kernels.
 */
class ByteWriter {
  #buffer = new Uint8Array(1024);
  #length = 0;

  get length(): number {
    return this.#length;
  }

  /** The bytes written so far (a view, valid until the next write). */
  get bytes(): Uint8Array {
    return this.#buffer.subarray(0, this.#length);
  }

  byte(b: number): void {
    if (this.#length === this.#buffer.length) this.#grow(1);
    this.#buffer[this.#length++] = b;
  }

  append(bytes: ArrayLike<number>): void {
    if (this.#length + bytes.length > this.#buffer.length) this.#grow(bytes.length);
    this.#buffer.set(bytes, this.#length);
    this.#length += bytes.length;
  }

  #grow(more: number): void {
    const next = new Uint8Array(Math.max(2 * this.#buffer.length, this.#length + more));
    next.set(this.bytes);
    this.#buffer = next;
  }
}

function uleb(n: number, out: ByteWriter): void {
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.byte(b);
  } while (n !== 0);
}

function sleb(n: number, out: ByteWriter): void {
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) { out.byte(b); return; }
    out.byte(b | 0x80);
  }
}

/** The instruction stream of one function body. Methods append and return `this`. */
export class Code {
  readonly #out = new ByteWriter();

  /** The body's instructions so far (a view, valid until the next append). */
  get bytes(): Uint8Array {
    return this.#out.bytes;
  }

  op(...codes: number[]): this { this.#out.append(codes); return this; }
  get(local: number): this { this.#out.byte(Op.localGet); uleb(local, this.#out); return this; }
  set(local: number): this { this.#out.byte(Op.localSet); uleb(local, this.#out); return this; }
  tee(local: number): this { this.#out.byte(Op.localTee); uleb(local, this.#out); return this; }
  i32(value: number): this { this.#out.byte(Op.i32Const); sleb(value | 0, this.#out); return this; }
  f32(value: number): this {
    this.#out.byte(Op.f32Const);
    this.#out.append(new Uint8Array(new Float32Array([value]).buffer));
    return this;
  }
  f64(value: number): this {
    this.#out.byte(Op.f64Const);
    this.#out.append(new Uint8Array(new Float64Array([value]).buffer));
    return this;
  }
  /** A load or store with natural alignment (`align` as log2 bytes) and a constant byte offset. */
  mem(opcode: number, align: number, offset: number): this {
    this.#out.byte(opcode);
    uleb(align, this.#out);
    uleb(offset, this.#out);
    return this;
  }
  /** A SIMD instruction: the prefix, the opcode, then raw immediate bytes (lane indices, shuffle masks). */
  simd(opcode: number, ...immediates: number[]): this {
    this.#out.byte(0xfd);
    uleb(opcode, this.#out);
    this.#out.append(immediates);
    return this;
  }
  /** A SIMD load or store with natural alignment (`align` as log2 bytes) and a constant byte offset. */
  simdMem(opcode: number, align: number, offset: number): this {
    this.#out.byte(0xfd);
    uleb(opcode, this.#out);
    uleb(align, this.#out);
    uleb(offset, this.#out);
    return this;
  }
  block(): this { this.#out.append([Op.block, EMPTY]); return this; }
  loop(): this { this.#out.append([Op.loop, EMPTY]); return this; }
  /** `if` with no result: runs up to the matching `orElse` or `end` when the popped i32 is nonzero. */
  ifThen(): this { this.#out.append([Op.if, EMPTY]); return this; }
  orElse(): this { this.#out.byte(Op.else); return this; }
  end(): this { this.#out.byte(Op.end); return this; }
  br(depth: number): this { this.#out.byte(Op.br); uleb(depth, this.#out); return this; }
  brIf(depth: number): this { this.#out.byte(Op.brIf); uleb(depth, this.#out); return this; }
}

/** One exported function: its signature, extra locals (in order after the params) and body. */
export interface FunctionDef {
  readonly name: string;
  readonly params: readonly number[];
  readonly locals: readonly number[];
  readonly body: Code;
}

/** Section `id` with `content`, preceded by its size. */
function section(id: number, content: ByteWriter, out: ByteWriter): void {
  out.byte(id);
  uleb(content.length, out);
  out.append(content.bytes);
}

/** A vector: the count of `items`, then each one as `write` puts it. */
function vec<T>(items: readonly T[], out: ByteWriter, write: (item: T, k: number) => void): void {
  uleb(items.length, out);
  items.forEach(write);
}

function name(s: string, out: ByteWriter): void {
  uleb(s.length, out);
  for (const c of s) out.byte(c.charCodeAt(0));
}

/**
 * The binary of a module with one exported memory named `memory` (initially `pages` 64 KiB pages,
 * growable) and the given functions, each exported under its name and returning nothing.
 */
export function encodeModule(functions: readonly FunctionDef[], pages: number): Uint8Array {
  const out = new ByteWriter();
  out.append([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);

  const types = new ByteWriter();
  vec(functions, types, (f) => {
    types.byte(0x60);
    uleb(f.params.length, types);
    types.append(f.params);
    types.byte(0x00);
  });
  section(1, types, out);

  const funcs = new ByteWriter();
  vec(functions, funcs, (_, k) => uleb(k, funcs));
  section(3, funcs, out);

  const memory = new ByteWriter();
  uleb(1, memory);
  memory.byte(0x00);
  uleb(pages, memory);
  section(5, memory, out);

  const exports = new ByteWriter();
  vec([{ name: 'memory' }, ...functions], exports, (f, k) => {
    name(f.name, exports);
    if (k === 0) exports.append([0x02, 0x00]);
    else {
      exports.byte(0x00);
      uleb(k - 1, exports);
    }
  });
  section(7, exports, out);

  const code = new ByteWriter();
  vec(functions, code, (f) => {
    const body = new ByteWriter();
    uleb(f.locals.length, body);
    for (const type of f.locals) body.append([0x01, type]);
    body.append(f.body.bytes);
    body.byte(Op.end);
    uleb(body.length, code);
    code.append(body.bytes);
  });
  section(10, code, out);
  return out.bytes.slice();
}

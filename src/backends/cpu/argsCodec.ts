import { dtypeCode, dtypeFromCode, type DType } from '../../core/dtype.js';
import { ArgumentError } from '../../core/errors.js';
import type { ConstantValue, LaunchArg } from '../backend.js';
import { ARGS_CAPACITY } from './layout.js';

/**
 * Binary encoding of a launch's arguments into its slot's argument bytes. The host encodes once per
 * execute; a core decodes only when the Map's arguments changed since it last bound them.
 *
 * Format: u8 count, then per argument a u8 tag and its payload (little-endian).
 */

const T_NUMBER = 0;
const T_INT64 = 1;
const T_UINT64 = 2;
const T_TRUE = 3;
const T_FALSE = 4;
const T_OBJECT = 5;
const T_POINTER = 6;
const T_NDARRAY = 7;

const INT64_MIN = -(1n << 63n);
const UINT64_MAX = (1n << 64n) - 1n;
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** Decoded form of a pointer or NDArray argument, before a core binds it to memory. */
export type DecodedArg =
  | { readonly kind: 'constant'; readonly value: ConstantValue }
  | { readonly kind: 'pointer'; readonly buffer: number; readonly byteOffset: number; readonly byteLength: number }
  | { readonly kind: 'ndarray'; readonly buffer: number; readonly byteOffset: number; readonly dtype: DType; readonly shape: number[]; readonly sliced: boolean };

class Writer {
  readonly bytes = new Uint8Array(ARGS_CAPACITY);
  readonly view = new DataView(this.bytes.buffer);
  pos = 0;
  reset(): this { this.pos = 0; return this; }
  room(n: number): void {
    if (this.pos + n > ARGS_CAPACITY) {
      throw new ArgumentError(`the arguments encode to more than ${ARGS_CAPACITY} bytes, the most one launch carries: pass large data in device memory (memAlloc and an NDArray) instead of as constants`);
    }
  }
  u8(v: number): void { this.room(1); this.view.setUint8(this.pos, v); this.pos += 1; }
  u16(v: number): void { this.room(2); this.view.setUint16(this.pos, v, true); this.pos += 2; }
  u32(v: number): void { this.room(4); this.view.setUint32(this.pos, v, true); this.pos += 4; }
  f64(v: number): void { this.room(8); this.view.setFloat64(this.pos, v, true); this.pos += 8; }
  i64(v: bigint): void { this.room(8); this.view.setBigInt64(this.pos, v, true); this.pos += 8; }
  u64(v: bigint): void { this.room(8); this.view.setBigUint64(this.pos, v, true); this.pos += 8; }
  str(s: string): void {
    // Keys are almost always ASCII: write those bytes directly, TextEncoder costs ~1 µs a call.
    let ascii = s.length <= 0xffff;
    for (let i = 0; ascii && i < s.length; i++) ascii = s.charCodeAt(i) < 0x80;
    if (ascii) {
      this.u16(s.length);
      this.room(s.length);
      for (let i = 0; i < s.length; i++) this.bytes[this.pos + i] = s.charCodeAt(i);
      this.pos += s.length;
      return;
    }
    const b = utf8.encode(s);
    this.u16(b.length);
    this.room(b.length);
    this.bytes.set(b, this.pos);
    this.pos += b.length;
  }
}

function writeConstant(w: Writer, value: ConstantValue, argIndex: number): void {
  switch (typeof value) {
    case 'number': w.u8(T_NUMBER); w.f64(value); return;
    case 'boolean': w.u8(value ? T_TRUE : T_FALSE); return;
    case 'bigint':
      if (value < INT64_MIN || value > UINT64_MAX) throw new ArgumentError(`argument ${argIndex}: bigint ${value}n does not fit in 64 bits`, argIndex);
      if (value < 0n) { w.u8(T_INT64); w.i64(value); } else { w.u8(T_UINT64); w.u64(value); }
      return;
    default: {
      const keys = Object.keys(value);
      w.u8(T_OBJECT); w.u16(keys.length);
      for (const k of keys) { w.str(k); writeConstant(w, value[k] as ConstantValue, argIndex); }
    }
  }
}

/** Encodes validated arguments; throws ArgumentError only when they exceed the slot's capacity. */
/** Scratch space reused by every encode; encodes never interleave on the one host thread. */
const scratch = new Writer();

export function encodeArgs(args: readonly LaunchArg[]): Uint8Array {
  const w = scratch.reset();
  w.u8(args.length);
  args.forEach((a, i) => {
    switch (a.kind) {
      case 'constant': writeConstant(w, a.value, i); break;
      case 'pointer': w.u8(T_POINTER); w.u32(a.buffer); w.f64(a.byteOffset); w.f64(a.byteLength); break;
      case 'ndarray':
        w.u8(T_NDARRAY); w.u32(a.buffer); w.f64(a.byteOffset); w.u8(dtypeCode(a.dtype)); w.u8(a.sliced ? 1 : 0);
        w.u8(a.shape.length); for (const d of a.shape) w.f64(d);
        break;
    }
  });
  return w.bytes.slice(0, w.pos);
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Decodes what `encodeArgs` wrote. Runs on the cores. */
export function decodeArgs(bytes: Uint8Array): DecodedArg[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 0;
  const u8 = (): number => view.getUint8(pos++);
  const u16 = (): number => { const v = view.getUint16(pos, true); pos += 2; return v; };
  const u32 = (): number => { const v = view.getUint32(pos, true); pos += 4; return v; };
  const f64 = (): number => { const v = view.getFloat64(pos, true); pos += 8; return v; };
  const constant = (tag: number): ConstantValue => {
    switch (tag) {
      case T_NUMBER: return f64();
      case T_INT64: { const v = view.getBigInt64(pos, true); pos += 8; return v; }
      case T_UINT64: { const v = view.getBigUint64(pos, true); pos += 8; return v; }
      case T_TRUE: return true;
      case T_FALSE: return false;
      case T_OBJECT: {
        const n = u16();
        const obj: Record<string, ConstantValue> = {};
        for (let i = 0; i < n; i++) {
          const len = u16();
          // A copy: the bytes are shared memory, which browsers' TextDecoder refuses to read.
          const key = fromUtf8.decode(bytes.slice(pos, pos + len)); pos += len;
          obj[key] = constant(u8());
        }
        return Object.freeze(obj);
      }
      default: throw new RangeError(`corrupt argument encoding: tag ${tag}`);
    }
  };
  const count = u8();
  const out: DecodedArg[] = [];
  for (let i = 0; i < count; i++) {
    const tag = u8();
    if (tag === T_POINTER) {
      out.push({ kind: 'pointer', buffer: u32(), byteOffset: f64(), byteLength: f64() });
    } else if (tag === T_NDARRAY) {
      const buffer = u32(); const byteOffset = f64(); const dtype = dtypeFromCode(u8()); const sliced = u8() === 1;
      const ndim = u8(); const shape: number[] = [];
      for (let d = 0; d < ndim; d++) shape.push(f64());
      out.push({ kind: 'ndarray', buffer, byteOffset, dtype, shape, sliced });
    } else {
      out.push({ kind: 'constant', value: constant(tag) });
    }
  }
  return out;
}

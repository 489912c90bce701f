import { open } from '../platform/files.js';
import { Unzip, UnzipInflate, UnzipPassThrough } from 'fflate';
import { ArgumentError, InputFormatError, OptionError, OutOfMemoryError, PcfError } from '../core/errors.js';
import { checkBoolean, checkOptionsObject, describe } from '../core/validate.js';
import { FLOAT32_MAX, type PcfArray, type PcfDtype } from './pcf.js';
import { AS_FLOAT64 } from './breakpointCheck.js';
import { parseNpyHeader } from './npy.js';
import { checkPcfSet, MAX_SET_BREAKPOINTS, type PcfSet } from './pcfSet.js';

/**
 * PCFs in a NumPy `.npz` file: a zip of three 1-D arrays, as `np.savez` (stored) or
 * `np.savez_compressed` (deflate) writes them, and `np.load` reads them back.
 *
 * | array     | dtype                        | entries                                      |
 * |-----------|------------------------------|----------------------------------------------|
 * | `offsets` | int64 (int32, uint32, uint64 also read) | n + 1: PCF k is breakpoints offsets[k] .. offsets[k+1] - 1 |
 * | `times`   | float64 or float32           | one per breakpoint, each PCF's from 0, strictly increasing |
 * | `values`  | float64 or float32           | one per breakpoint                            |
 *
 * The file is read in chunks through fflate's streaming unzip, and each array's bytes go straight
 * into its final typed array (converted when the set's dtype differs from the file's), so memory
 * stays near the size of the set.
 */

const CHUNK_BYTES = 1 << 22;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const NAMES = ['offsets', 'times', 'values'] as const;
type Name = (typeof NAMES)[number];

const FLOATS: Readonly<Record<string, 4 | 8>> = { '<f8': 8, '<f4': 4 };
const INTEGERS: Readonly<Record<string, { size: 4 | 8; signed: boolean }>> = {
  '<i8': { size: 8, signed: true },
  '<u8': { size: 8, signed: false },
  '<i4': { size: 4, signed: true },
  '<u4': { size: 4, signed: false },
};

/** Options of {@link readPcfNpz}. */
export interface ReadPcfNpzOptions {
  /** Storage type of the set; the file's arrays are converted to it. Default `'float64'`. */
  dtype?: PcfDtype;
  /** Allocate the set on SharedArrayBuffers: the CPU cores of pdist, cdist and l2Kernel then read it where it lies instead of copying it, so the process holds it once. Default false. */
  shared?: boolean;
}

/** One array member of the zip, filled as its bytes arrive. */
class MemberReader {
  readonly #name: Name;
  readonly #fail: (message: string) => never;
  readonly #alloc: (name: Name, descr: string, length: number) => Float64Array | Float32Array;
  #head: Uint8Array = new Uint8Array(0);
  #target: Float64Array | Float32Array | undefined;
  #size = 0;
  #integer: { size: 4 | 8; signed: boolean } | undefined;
  /** Bytes of an element cut by a chunk boundary. */
  #carry = new Uint8Array(8);
  #carried = 0;
  #filled = 0;
  /** Index of the first element that overflowed float32 on conversion, or -1. */
  overflow = -1;
  /**
   * The first element (its index, its float64 value and the one before) above the element before
   * it that rounds to the same float32 or lower: two times that only the conversion made equal.
   */
  merged: { readonly at: number; readonly before: number; readonly value: number } | undefined;
  #previous = Infinity;

  constructor(name: Name, fail: (message: string) => never, alloc: (name: Name, descr: string, length: number) => Float64Array | Float32Array) {
    this.#name = name;
    this.#fail = fail;
    this.#alloc = alloc;
  }

  get done(): boolean {
    return this.#target !== undefined && this.#filled === this.#target.length && this.#carried === 0;
  }

  get array(): Float64Array | Float32Array {
    return this.#target!;
  }

  push(chunk: Uint8Array): void {
    if (this.#target === undefined) {
      const head = new Uint8Array(this.#head.length + chunk.length);
      head.set(this.#head);
      head.set(chunk, this.#head.length);
      let header;
      try {
        header = parseNpyHeader(head);
      } catch (err) {
        this.#fail(`${this.#name}: ${(err as Error).message}`);
      }
      if (header === undefined) {
        this.#head = head;
        return;
      }
      this.#head = new Uint8Array(0);
      const { descr, shape } = header;
      if (shape.length !== 1) this.#fail(`${this.#name} must be a 1-D array, got shape (${shape.join(', ')})`);
      this.#integer = INTEGERS[descr];
      this.#size = this.#name === 'offsets' ? (this.#integer?.size ?? 0) : (FLOATS[descr] ?? 0);
      if (this.#size === 0) {
        const want = this.#name === 'offsets' ? "int64 ('<i8'; '<i4', '<u4', '<u8' are read too)" : "float64 or float32 ('<f8' or '<f4')";
        this.#fail(`${this.#name} has dtype '${descr}'; it must be little-endian ${want}`);
      }
      this.#target = this.#alloc(this.#name, descr, shape[0]!);
      chunk = head.subarray(header.dataStart);
    }
    this.#take(chunk);
  }

  #take(chunk: Uint8Array): void {
    const size = this.#size;
    let from = 0;
    if (this.#carried > 0) {
      const n = Math.min(size - this.#carried, chunk.length);
      this.#carry.set(chunk.subarray(0, n), this.#carried);
      this.#carried += n;
      from = n;
      if (this.#carried < size) return;
      this.#store(this.#carry, 1);
      this.#carried = 0;
    }
    const whole = Math.floor((chunk.length - from) / size);
    if (whole > 0) {
      // Copied to a fresh buffer: zip members start at any byte, typed arrays need alignment.
      this.#store(chunk.slice(from, from + whole * size), whole);
    }
    const rest = chunk.length - from - whole * size;
    if (rest > 0) {
      this.#carry.set(chunk.subarray(chunk.length - rest), 0);
      this.#carried = rest;
    }
  }

  /** Appends `count` little-endian elements from the start of `bytes` (which owns its buffer). */
  #store(bytes: Uint8Array, count: number): void {
    const target = this.#target!;
    if (this.#filled + count > target.length) this.#fail(`${this.#name} holds more bytes than its shape (${target.length},) says`);
    if (!LITTLE_ENDIAN) this.#fail('reading .npz files needs a little-endian machine');
    const buffer = bytes.byteOffset === 0 ? bytes.buffer : bytes.slice().buffer;
    let source: ArrayLike<number>;
    if (this.#integer !== undefined) {
      source = this.#integerValues(buffer as ArrayBuffer, count);
    } else {
      source = this.#size === 8 ? new Float64Array(buffer, 0, count) : new Float32Array(buffer, 0, count);
      if (target instanceof Float32Array && source instanceof Float64Array && this.overflow < 0) {
        for (let k = 0; k < count; k++) {
          const x = source[k]!;
          if (Math.abs(x) > FLOAT32_MAX && Number.isFinite(x)) {
            this.overflow = this.#filled + k;
            break;
          }
        }
      }
      if (this.#name === 'times' && target instanceof Float32Array && source instanceof Float64Array && this.merged === undefined) {
        let previous = this.#previous;
        for (let k = 0; k < count; k++) {
          const x = source[k]!;
          if (x > previous && !(Math.fround(x) > Math.fround(previous))) {
            this.merged = { at: this.#filled + k, before: previous, value: x };
            break;
          }
          previous = x;
        }
        this.#previous = previous;
      }
    }
    target.set(source, this.#filled);
    this.#filled += count;
  }

  /** Integers as doubles: exact up to 2^53, far beyond any valid offset. */
  #integerValues(buffer: ArrayBuffer, count: number): Float64Array {
    const out = new Float64Array(count);
    if (this.#size === 4) {
      out.set(this.#integer!.signed ? new Int32Array(buffer, 0, count) : new Uint32Array(buffer, 0, count));
      return out;
    }
    const words = new Uint32Array(buffer, 0, 2 * count);
    const signed = this.#integer!.signed;
    for (let k = 0; k < count; k++) {
      const hi = words[2 * k + 1]!;
      out[k] = (signed ? hi | 0 : hi) * 0x1_0000_0000 + words[2 * k]!;
    }
    return out;
  }
}

function allocFloat(dtype: PcfDtype, length: number, shared: boolean): Float64Array | Float32Array {
  const Ctor = dtype === 'float32' ? Float32Array : Float64Array;
  try {
    return shared ? new Ctor(new SharedArrayBuffer(length * Ctor.BYTES_PER_ELEMENT) as unknown as ArrayBuffer) : new Ctor(length);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    throw new OutOfMemoryError(length * Ctor.BYTES_PER_ELEMENT, 0, `${length} ${dtype} breakpoints do not fit in memory (${err.message})`);
  }
}

/** Options of {@link parsePcfNpz}: those of {@link readPcfNpz}, and the name messages start with. */
export interface ParsePcfNpzOptions extends ReadPcfNpzOptions {
  /** Name that error messages start with (a file name, say). Default `'the .npz bytes'`. */
  file?: string;
}

/**
 * Reads PCFs from a NumPy `.npz` file with arrays `offsets`, `times` and `values` (layout above),
 * stored or deflated. Other arrays in the file are ignored. Rejects, never throws.
 *
 * @throws InputFormatError naming `path` when the file cannot be read, is not a zip, lacks an
 *   array, has an array of the wrong dtype or shape, or holds an invalid layout or PCF (the
 *   message names the PCF; a PcfError is the `cause`); OutOfMemoryError when the arrays do not fit;
 *   ArgumentError for a path that is not a non-empty string; OptionError for a bad option.
 * @example const set = await readPcfNpz('pcfs.npz', { dtype: 'float32' });
 */
export async function readPcfNpz(path: string, options: ReadPcfNpzOptions = {}): Promise<PcfSet> {
  if (typeof path !== 'string' || path === '') throw new ArgumentError(`readPcfNpz: path must be a file name, got ${describe(path)}`);
  const o = checkOptionsObject('readPcfNpz options', options, ['dtype', 'shared']);
  const parser = new NpzParser(path, o);
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (err) {
    return parser.fail(`cannot read the file: ${(err as Error).message}`, err);
  }
  try {
    for (;;) {
      // A fresh buffer per read: the unzipper may keep a view of a chunk's tail.
      const buffer = new Uint8Array(CHUNK_BYTES);
      let bytesRead: number;
      try {
        ({ bytesRead } = await handle.read(buffer, 0, buffer.length, null));
      } catch (err) {
        return parser.fail(`cannot read the file: ${(err as Error).message}`, err);
      }
      parser.push(buffer.subarray(0, bytesRead), bytesRead === 0);
      if (bytesRead === 0) break;
    }
  } finally {
    await handle.close();
  }
  return parser.finish();
}

/**
 * Reads PCFs from the bytes of a NumPy `.npz` file (layout above), as {@link readPcfNpz} reads a
 * file: for bytes from `fetch`, a file picker or a drop in a browser, or from anywhere in Node.
 *
 * @throws InputFormatError (its message starts with `options.file`, default 'the .npz bytes') when
 *   the bytes are not a zip, lack an array, have an array of the wrong dtype or shape, or hold an
 *   invalid layout or PCF; OutOfMemoryError when the arrays do not fit; ArgumentError when `bytes`
 *   is not a Uint8Array; OptionError for a bad option.
 * @example const set = parsePcfNpz(new Uint8Array(await (await fetch('pcfs.npz')).arrayBuffer()));
 */
export function parsePcfNpz(bytes: Uint8Array, options: ParsePcfNpzOptions = {}): PcfSet {
  const o = checkOptionsObject('parsePcfNpz options', options, ['dtype', 'shared', 'file']);
  if (o.file !== undefined && typeof o.file !== 'string') throw new OptionError(`file must be a string (the name messages start with), got ${describe(o.file)}`);
  if (!(bytes instanceof Uint8Array)) {
    const given = (bytes as unknown) instanceof ArrayBuffer ? 'an ArrayBuffer; wrap it: parsePcfNpz(new Uint8Array(buffer))' : describe(bytes);
    throw new ArgumentError(`parsePcfNpz: bytes must be a Uint8Array of an .npz file, got ${given}`);
  }
  const parser = new NpzParser(o.file ?? 'the .npz bytes', o);
  // Whole chunks of at most CHUNK_BYTES, as a file is read: fflate's unzip takes any sizes.
  for (let at = 0; at < bytes.length; at += CHUNK_BYTES) parser.push(bytes.subarray(at, Math.min(bytes.length, at + CHUNK_BYTES)), false);
  parser.push(new Uint8Array(0), true);
  return parser.finish();
}

/**
 * Reads PCFs from `.npz` bytes as they arrive (a pipe, say), as {@link readPcfNpz} reads a file:
 * never more than one chunk besides the set is held.
 *
 * @param name what error messages start with ('standard input').
 * @param shared allocate the set on SharedArrayBuffers (see PcfSetOptions.shared).
 * @throws (rejects) as {@link parsePcfNpz}.
 */
export async function readPcfNpzStream(chunks: AsyncIterable<Uint8Array>, name: string, dtype: PcfDtype, shared = false): Promise<PcfSet> {
  const parser = new NpzParser(name, { dtype, shared });
  for await (const chunk of chunks) parser.push(chunk, false);
  parser.push(new Uint8Array(0), true);
  return parser.finish();
}

/** The `.npz` reader proper: bytes go in chunk by chunk, the checked set comes out. */
class NpzParser {
  readonly #dtype: PcfDtype;
  readonly #shared: boolean;
  readonly #members = new Map<Name, MemberReader>();
  readonly #unzip: Unzip;
  readonly fail: (message: string, cause?: unknown) => never;
  #zipError: unknown;
  #first = true;

  constructor(name: string, o: ReadPcfNpzOptions) {
    const dtype = o.dtype ?? 'float64';
    if (dtype !== 'float64' && dtype !== 'float32') throw new OptionError(`dtype must be one of 'float64', 'float32', got ${describe(dtype)}`);
    this.#dtype = dtype;
    const shared = (this.#shared = o.shared === undefined ? false : checkBoolean('shared', o.shared));
    const fail = (this.fail = (message: string, cause?: unknown): never => {
      throw new InputFormatError(message, name, cause === undefined ? undefined : { cause });
    });
    const alloc = (member: Name, _descr: string, length: number): Float64Array | Float32Array => {
      // Offsets are read as doubles and checked before they become the set's Uint32Array.
      if (member === 'offsets') return allocFloat('float64', length, false);
      return allocFloat(dtype, length, shared);
    };
    this.#unzip = new Unzip((file) => {
      const member = file.name.replace(/\.npy$/, '') as Name;
      if (!NAMES.includes(member)) return;
      if (this.#members.has(member)) fail(`holds the array '${member}' twice`);
      const reader = new MemberReader(member, fail, alloc);
      this.#members.set(member, reader);
      file.ondata = (err, data) => {
        if (err) this.#zipError ??= err;
        else if (this.#zipError === undefined) reader.push(data);
      };
      file.start();
    });
    this.#unzip.register(UnzipPassThrough);
    this.#unzip.register(UnzipInflate);
  }

  /** Feeds the next chunk of the file; `final` with the (empty) last one. */
  push(chunk: Uint8Array, final: boolean): void {
    if (this.#first && !(chunk.length >= 4 && chunk[0] === 0x50 && chunk[1] === 0x4b && chunk[2] === 0x03 && chunk[3] === 0x04)) {
      this.fail('not an .npz file (a zip archive, as np.savez writes); the extension .npz says it should be one');
    }
    this.#first = false;
    try {
      this.#unzip.push(chunk, final);
    } catch (err) {
      if (err instanceof InputFormatError) throw err;
      this.fail(`malformed zip archive: ${(err as Error).message}`, err);
    }
    if (this.#zipError !== undefined) this.fail(`malformed zip archive: ${(this.#zipError as Error).message}`, this.#zipError);
  }

  finish(): PcfSet {
    return assemble(this.#members, this.#dtype, this.#shared, this.fail);
  }
}

/** Checks the three arrays against each other and every PCF, then builds the set. */
function assemble(members: Map<Name, MemberReader>, dtype: PcfDtype, shared: boolean, fail: (message: string, cause?: unknown) => never): PcfSet {
  const missing = NAMES.filter((name) => !members.has(name));
  if (missing.length > 0) {
    fail(`has no array ${missing.map((m) => `'${m}'`).join(', ')}; PCFs in .npz are three arrays: np.savez(file, offsets=..., times=..., values=...)`);
  }
  for (const [name, reader] of members) if (!reader.done) fail(`${name}: the data is shorter than its shape says (truncated file?)`);
  const offsets64 = members.get('offsets')!.array;
  const times = members.get('times')!.array;
  const values = members.get('values')!.array;
  if (times.length !== values.length) fail(`times has ${times.length} entries but values has ${values.length}; there is one of each per breakpoint`);
  if (offsets64.length === 0) fail('offsets is empty; it has n + 1 entries for n PCFs, starting with 0');
  if (times.length > MAX_SET_BREAKPOINTS) fail(`has ${times.length} breakpoints; a PCF set holds at most ${MAX_SET_BREAKPOINTS}`);
  const count = offsets64.length - 1;
  if (offsets64[0] !== 0) fail(`offsets[0] must be 0, got ${offsets64[0]}`);
  const offsets = shared ? new Uint32Array(new SharedArrayBuffer(4 * (count + 1))) : new Uint32Array(count + 1);
  for (let k = 1; k <= count; k++) {
    const o = offsets64[k]!;
    if (!(o >= offsets64[k - 1]!)) fail(`offsets must not decrease, but offsets[${k}] = ${o} < offsets[${k - 1}] = ${offsets64[k - 1]} (PCF ${k - 1} would have a negative size)`);
    // Read as doubles: an int64 past 2^53 would print rounded, so it is said to be that large instead.
    if (o > times.length) fail(`offsets[${k}] = ${o > Number.MAX_SAFE_INTEGER ? `more than ${Number.MAX_SAFE_INTEGER}` : o} is past the end of times (${times.length} breakpoints)`);
    offsets[k] = o;
  }
  if (offsets[count] !== times.length) fail(`offsets must end at the breakpoint count ${times.length} (the length of times and values), but offsets[${count}] = ${offsets[count]}`);
  for (const name of ['times', 'values'] as const) {
    const at = members.get(name)!.overflow;
    if (at >= 0) {
      let k = 0;
      while (offsets[k + 1]! <= at) k++;
      fail(`PCF ${k}: breakpoint ${at - offsets[k]!} has ${name === 'times' ? 'time' : 'value'} beyond the float32 range; ${AS_FLOAT64}`);
    }
  }
  const set: PcfSet = { dtype, count, shape: Object.freeze([count]), times: times as PcfArray, values: values as PcfArray, offsets };
  try {
    checkPcfSet(set, 'the .npz');
  } catch (err) {
    if (!(err instanceof PcfError)) throw err;
    const merged = members.get('times')!.merged;
    const b = merged === undefined ? -1 : merged.at - offsets[err.pcfIndex]!;
    if (merged === undefined || b < 1 || merged.at >= offsets[err.pcfIndex + 1]!) fail(err.message, err);
    fail(`${err.message}; the file's float64 times ${merged.before} and ${merged.value} of breakpoints ${b - 1} and ${b} round to the same float32: ${AS_FLOAT64}`, err);
  }
  return set;
}

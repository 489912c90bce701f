import { OutOfMemoryError } from '../core/errors.js';

/**
 * An append-only column of numbers whose final length is not known in advance (the breakpoints of
 * a JSON document read as a stream), handed over at the end as one exactly sized typed array.
 *
 * Why resizable ArrayBuffers: growing a plain typed array copies it, and copying by doubling
 * peaks at three times the data. A resizable buffer reserves address space only and grows in
 * place; pages cost memory only once written. A buffer is capped at 4 GiB, so the column is a
 * list of such segments. {@link GrowableColumn.take} copies the segments into the final array one
 * at a time and shrinks each to zero at once (no garbage collection needed), so reading a file
 * peaks near the data plus one column, never twice the data plus slack.
 */

/** Element types a column holds. */
export type ColumnType = 'float64' | 'float32' | 'uint32';

type ColumnArray = Float64Array | Float32Array | Uint32Array;

/**
 * A column's elements handed over as its segments (resizable ArrayBuffers, transferable to
 * another thread without a copy): `length` elements, every segment but the last full.
 */
export interface DetachedColumn {
  segments: ArrayBuffer[];
  length: number;
}

const CONSTRUCTORS = { float64: Float64Array, float32: Float32Array, uint32: Uint32Array } as const;

/** Largest resizable buffer V8 gives on Node 20 (measured: 2^32 bytes). */
const SEGMENT_BYTES = 2 ** 32;
/** First size of a segment; it doubles in place from here. */
const FIRST_BYTES = 1 << 16;
/**
 * Elements gathered in a plain array before they go into a segment in one copy: V8's element
 * stores into a resizable buffer, and `set` calls for a few elements each, cost several times a
 * plain store (a 1 GB JSON file appends 27 million breakpoints 20 at a time). 8,192 elements make
 * the copies' overhead negligible still; the stages stay allocated until a full garbage collection,
 * which a short process may never run, so they are kept small (see CHUNK_BYTES in pcfFileRead.ts for
 * what both changes saved).
 */
const STAGE_ELEMENTS = 1 << 13;

export class GrowableColumn {
  readonly #type: ColumnType;
  readonly #perSegment: number;
  readonly #segments: ArrayBuffer[] = [];
  /** View over the whole current segment, re-made after each resize. */
  #view: ColumnArray;
  /** Elements in full segments before the current one. */
  #before = 0;
  /** Elements written into the current segment. */
  #used = 0;
  /** Appended elements not yet in a segment. */
  readonly #stage: ColumnArray;
  #staged = 0;

  constructor(type: ColumnType) {
    this.#type = type;
    this.#perSegment = SEGMENT_BYTES / CONSTRUCTORS[type].BYTES_PER_ELEMENT;
    this.#view = this.#newSegment();
    this.#stage = new CONSTRUCTORS[type](STAGE_ELEMENTS);
  }

  /** Number of elements appended. */
  get length(): number {
    return this.#before + this.#used + this.#staged;
  }

  #newSegment(): ColumnArray {
    const buffer = new ArrayBuffer(FIRST_BYTES, { maxByteLength: SEGMENT_BYTES });
    this.#segments.push(buffer);
    return new CONSTRUCTORS[this.#type](buffer);
  }

  /** Makes room for more elements: grows the current segment, or opens a new one when it is full. */
  #grow(count: number): void {
    if (this.#segments[this.#segments.length - 1]!.byteLength === SEGMENT_BYTES) {
      this.#before += this.#used;
      this.#used = 0;
      this.#view = this.#newSegment();
    }
    const buffer = this.#segments[this.#segments.length - 1]!;
    const need = Math.min(SEGMENT_BYTES, (this.#used + count) * CONSTRUCTORS[this.#type].BYTES_PER_ELEMENT);
    let bytes = buffer.byteLength;
    while (bytes < need) bytes = Math.min(SEGMENT_BYTES, bytes * 2);
    try {
      buffer.resize(bytes);
    } catch (err) {
      if (!(err instanceof RangeError)) throw err;
      throw new OutOfMemoryError(bytes, 0, `could not grow an input column to ${bytes} bytes (${err.message})`);
    }
    this.#view = new CONSTRUCTORS[this.#type](buffer);
  }

  /** Appends one number. */
  push(value: number): void {
    this.#stage[this.#staged++] = value;
    if (this.#staged === STAGE_ELEMENTS) this.#flush();
  }

  /** Appends `source[0 .. count - 1]`, converting to the column's type as typed-array `set` does. */
  append(source: Float64Array | Float32Array, count: number): void {
    const stage = this.#stage;
    for (let k = 0; k < count; k++) {
      stage[this.#staged++] = source[k]!;
      if (this.#staged === STAGE_ELEMENTS) this.#flush();
    }
  }

  /** Moves the staged elements into the segments. */
  #flush(): void {
    const count = this.#staged;
    let from = 0;
    while (from < count) {
      if (this.#used === this.#view.length) this.#grow(Math.min(count - from, this.#perSegment));
      const n = Math.min(count - from, this.#view.length - this.#used);
      this.#view.set(this.#stage.subarray(from, from + n), this.#used);
      this.#used += n;
      from += n;
    }
    this.#staged = 0;
  }

  /**
   * The column as one typed array of exactly {@link length} elements, on a SharedArrayBuffer when
   * `shared`. Empties the column: its segments are released as they are copied.
   *
   * @throws OutOfMemoryError when the final array cannot be allocated.
   */
  take(shared: boolean): ColumnArray {
    this.#flush();
    const Ctor = CONSTRUCTORS[this.#type];
    const total = this.length;
    let out: ColumnArray;
    try {
      out = shared ? new Ctor(new SharedArrayBuffer(total * Ctor.BYTES_PER_ELEMENT) as unknown as ArrayBuffer) : new Ctor(total);
    } catch (err) {
      if (!(err instanceof RangeError)) throw err;
      throw new OutOfMemoryError(total * Ctor.BYTES_PER_ELEMENT, 0, `could not allocate ${total} ${this.#type} elements (${err.message})`);
    }
    let at = 0;
    for (let s = 0; s < this.#segments.length; s++) {
      const buffer = this.#segments[s]!;
      const count = s === this.#segments.length - 1 ? this.#used : this.#perSegment;
      (out as Float64Array).set(new Ctor(buffer, 0, count) as Float64Array, at);
      at += count;
      buffer.resize(0);
    }
    this.#segments.length = 0;
    this.#before = 0;
    this.#used = 0;
    this.#view = this.#newSegment();
    return out;
  }

  /** Hands the elements over as segments (see {@link joinColumns}) and empties the column. */
  detach(): DetachedColumn {
    this.#flush();
    const detached = { segments: this.#segments.slice(), length: this.length };
    this.#segments.length = 0;
    this.#before = 0;
    this.#used = 0;
    this.#view = this.#newSegment();
    return detached;
  }

  /** Releases the memory without producing an array (the input was refused). */
  discard(): void {
    this.#staged = 0;
    for (const buffer of this.#segments) buffer.resize(0);
    this.#segments.length = 0;
    this.#before = 0;
    this.#used = 0;
    this.#view = this.#newSegment();
  }
}

/**
 * The columns `parts`, all of `type`, one after the other in one typed array (on a
 * SharedArrayBuffer when `shared`), as {@link GrowableColumn.take} makes one: each segment is
 * shrunk to nothing once copied, so the peak stays near the data plus one segment.
 *
 * @throws OutOfMemoryError when the array cannot be allocated.
 */
export function joinColumns(type: ColumnType, parts: readonly DetachedColumn[], shared: boolean): ColumnArray {
  const Ctor = CONSTRUCTORS[type];
  const perSegment = SEGMENT_BYTES / Ctor.BYTES_PER_ELEMENT;
  let total = 0;
  for (const part of parts) total += part.length;
  let out: ColumnArray;
  try {
    out = shared ? new Ctor(new SharedArrayBuffer(total * Ctor.BYTES_PER_ELEMENT) as unknown as ArrayBuffer) : new Ctor(total);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    throw new OutOfMemoryError(total * Ctor.BYTES_PER_ELEMENT, 0, `could not allocate ${total} ${type} elements (${err.message})`);
  }
  let at = 0;
  for (const part of parts) {
    let left = part.length;
    for (const buffer of part.segments) {
      const count = Math.min(left, perSegment);
      (out as Float64Array).set(new Ctor(buffer, 0, count) as Float64Array, at);
      at += count;
      left -= count;
      buffer.resize(0);
    }
  }
  return out;
}

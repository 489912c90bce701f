import type { AnyTypedArray } from '../core/dtype.js';

/**
 * What a kernel receives for an NDArray argument: the array's elements, a shape and an element
 * offset. For a task kernel the view is the task's own slice along the leading dimension; the
 * runtime moves `offset` between tasks instead of allocating a view per task, so a view is valid
 * only during the call that received it.
 */
export class NDView<T extends AnyTypedArray = AnyTypedArray> {
  /** Every element of the underlying NDArray; this view starts at `offset`. */
  readonly data: T;
  /** Index in `data` of this view's first element. */
  offset: number;
  readonly shape: readonly number[];
  /** Row-major strides of `shape`, in elements. */
  readonly strides: readonly number[];
  /** Number of elements in the view. */
  readonly size: number;

  /** @internal */
  constructor(data: T, shape: readonly number[], offset = 0) {
    this.data = data;
    this.shape = shape;
    this.offset = offset;
    const strides: number[] = new Array<number>(shape.length);
    let s = 1;
    for (let d = shape.length - 1; d >= 0; d--) {
      strides[d] = s;
      s *= shape[d]!;
    }
    this.strides = strides;
    this.size = s;
  }

  /** Element at the given indices (one per dimension of the view). */
  get(...idx: number[]): T[number] {
    return this.data[this.index(idx)] as T[number];
  }

  set(value: T[number], ...idx: number[]): void {
    (this.data as { [i: number]: T[number] })[this.index(idx)] = value;
  }

  /** The view's elements as a TypedArray sharing memory with the device buffer. */
  toArray(): T {
    return this.data.subarray(this.offset, this.offset + this.size) as T;
  }

  private index(idx: number[]): number {
    let at = this.offset;
    for (let d = 0; d < idx.length; d++) at += idx[d]! * this.strides[d]!;
    return at;
  }
}

/**
 * What a kernel receives for a device pointer: typed access to the allocation from the pointer's
 * byte offset to its end. Each typed view is created on first use and kept.
 */
export class PointerView {
  readonly buffer: SharedArrayBuffer;
  readonly byteOffset: number;
  readonly byteLength: number;
  #views = new Map<string, AnyTypedArray>();

  /** @internal */
  constructor(buffer: SharedArrayBuffer, byteOffset: number, byteLength: number) {
    this.buffer = buffer;
    this.byteOffset = byteOffset;
    this.byteLength = byteLength;
  }

  get f64(): Float64Array { return this.#as('f64', Float64Array); }
  get f32(): Float32Array { return this.#as('f32', Float32Array); }
  get i32(): Int32Array { return this.#as('i32', Int32Array); }
  get u32(): Uint32Array { return this.#as('u32', Uint32Array); }
  get i16(): Int16Array { return this.#as('i16', Int16Array); }
  get u16(): Uint16Array { return this.#as('u16', Uint16Array); }
  get i8(): Int8Array { return this.#as('i8', Int8Array); }
  get u8(): Uint8Array { return this.#as('u8', Uint8Array); }
  get i64(): BigInt64Array { return this.#as('i64', BigInt64Array); }
  get u64(): BigUint64Array { return this.#as('u64', BigUint64Array); }

  #as<A extends AnyTypedArray>(key: string, ctor: { new (b: SharedArrayBuffer, o: number, n: number): A; BYTES_PER_ELEMENT: number }): A {
    let v = this.#views.get(key);
    if (v === undefined) {
      if (this.byteOffset % ctor.BYTES_PER_ELEMENT !== 0) {
        throw new RangeError(`pointer offset ${this.byteOffset} is not a multiple of ${ctor.BYTES_PER_ELEMENT}: it cannot be read as ${key}`);
      }
      v = new ctor(this.buffer, this.byteOffset, Math.floor(this.byteLength / ctor.BYTES_PER_ELEMENT));
      this.#views.set(key, v);
    }
    return v as A;
  }
}

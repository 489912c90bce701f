/**
 * A Context's device memory as the host API sees it: allocation through the backend, and the checks
 * that every pointer handed back is a live one of this Context and that copies fit. The Context
 * checks that it is alive before it calls any of these.
 */
import type { Backend } from '../backends/backend.js';
import { dtypeSize, DTYPE_NAMES, DTYPES, type DType, type TypedArrayOf } from '../core/dtype.js';
import { ArgumentError, StateError } from '../core/errors.js';
import { checkInteger, checkOneOf } from '../core/validate.js';
import { DevicePtr } from './devicePtr.js';

/** @internal The memory of one Context; its pointers name `owner` (the Context) as their owner. */
export class ContextMemory {
  readonly #owner: object;
  readonly #backend: Backend;

  constructor(owner: object, backend: Backend) {
    this.#owner = owner;
    this.#backend = backend;
  }

  /** Bytes not yet allocated. */
  get available(): number {
    return this.#backend.memorySize - this.#backend.allocatedBytes;
  }

  /** `Context.memAlloc`. */
  alloc(bytes: number): DevicePtr {
    checkInteger('memAlloc bytes', bytes, 1, Number.MAX_SAFE_INTEGER);
    const buffer = this.#backend.allocate(bytes);
    return new DevicePtr(this.#owner, buffer, { freed: false, byteLength: bytes });
  }

  /** `Context.adoptHostMemory`. */
  adopt(buffer: ArrayBufferLike): DevicePtr | undefined {
    if (this.#backend.adopt === undefined || !(buffer instanceof SharedArrayBuffer) || buffer.byteLength === 0) return undefined;
    return new DevicePtr(this.#owner, this.#backend.adopt(buffer), { freed: false, byteLength: buffer.byteLength });
  }

  /** `Context.memFree`. */
  free(ptr: DevicePtr): void {
    this.#own(ptr, 'memFree');
    if (ptr.byteOffset !== 0) throw new ArgumentError(`memFree needs the pointer memAlloc returned, not one ${ptr.byteOffset} bytes into it`);
    ptr.allocation.freed = true;
    this.#backend.free(ptr.buffer);
  }

  /** `Context.copyToDevice`. */
  async write(dst: DevicePtr, src: ArrayBufferView | ArrayBufferLike): Promise<void> {
    this.#own(dst, 'copyToDevice');
    const bytes = asBytes(src);
    this.#fits(dst, bytes.byteLength, 'copyToDevice');
    await this.#backend.write(dst.buffer, dst.byteOffset, bytes);
  }

  /** `Context.copyFromDevice`. */
  async read(dst: ArrayBufferView | ArrayBufferLike, src: DevicePtr): Promise<void> {
    this.#own(src, 'copyFromDevice');
    const bytes = asBytes(dst);
    this.#fits(src, bytes.byteLength, 'copyFromDevice');
    await this.#backend.read(src.buffer, src.byteOffset, bytes);
  }

  /**
   * `Context.hostView`: `length` elements from `ptr`, or every element to the end of the
   * allocation when it is left out. A view never silently leaves bytes off: when the bytes to the
   * end are not a whole number of elements, `length` must say how many are meant.
   */
  hostView<D extends DType>(ptr: DevicePtr, dtype: D, length?: number): TypedArrayOf<D> {
    this.#own(ptr, 'hostView');
    checkOneOf('hostView dtype', dtype, DTYPE_NAMES);
    const size = dtypeSize(dtype);
    const fit = Math.floor(ptr.byteLength / size);
    if (length !== undefined) {
      checkInteger('hostView length', length, 0, Number.MAX_SAFE_INTEGER);
      if (length > fit) {
        throw new ArgumentError(`hostView: ${length} ${dtype} elements (${length * size} bytes) reach past the end of the allocation, which has ${ptr.byteLength} bytes from the pointer; pass a length of at most ${fit}`);
      }
    } else if (ptr.byteLength % size !== 0) {
      throw new ArgumentError(`hostView: the ${ptr.byteLength} bytes from the pointer to the end of its allocation are not a whole number of ${dtype} elements (${size} bytes each); pass a length (at most ${fit}) to view only the first elements`);
    }
    const sab = this.#backend.hostBuffer(ptr.buffer);
    if (sab === undefined) throw new StateError(`hostView: the ${this.#backend.name} backend's memory is not visible to the host; use copyFromDevice`);
    if (ptr.byteOffset % size !== 0) throw new ArgumentError(`hostView: byte offset ${ptr.byteOffset} is not aligned to ${dtype} (${size} bytes)`);
    const Ctor = DTYPES[dtype] as unknown as new (b: SharedArrayBuffer, o: number, n: number) => TypedArrayOf<D>;
    return new Ctor(sab, ptr.byteOffset, length ?? fit);
  }

  #own(ptr: DevicePtr, op: string): void {
    if (!(ptr instanceof DevicePtr)) throw new ArgumentError(`${op} needs a DevicePtr from memAlloc`);
    if (ptr.owner !== this.#owner) throw new ArgumentError(`${op}: the device pointer belongs to another Context`);
    if (ptr.freed) throw new ArgumentError(`${op}: the device pointer was freed with memFree`);
  }

  #fits(ptr: DevicePtr, bytes: number, op: string): void {
    if (bytes > ptr.byteLength) throw new ArgumentError(`${op}: ${bytes} bytes do not fit in the ${ptr.byteLength} bytes from the pointer to the end of its allocation`);
  }
}

function asBytes(x: ArrayBufferView | ArrayBufferLike): Uint8Array {
  if (ArrayBuffer.isView(x)) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  if (x instanceof ArrayBuffer || x instanceof SharedArrayBuffer) return new Uint8Array(x);
  throw new ArgumentError('expected a TypedArray, DataView, ArrayBuffer or SharedArrayBuffer for host memory');
}

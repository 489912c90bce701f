/**
 * Device memory that is host memory: the buffers of the CPU backends by id, within the Context's
 * byte budget. The MU cores' backend makes SharedArrayBuffers its worker threads share; the
 * page-thread backend (no shared memory without cross-origin isolation) plain ArrayBuffers,
 * typed as SharedArrayBuffer since every reader only views them.
 */
import { OutOfMemoryError, invariant } from '../core/errors.js';

export class HostMemory {
  readonly size: number;
  /** Every live buffer by id; kernel bindings resolve buffer arguments through it. */
  readonly buffers = new Map<number, SharedArrayBuffer>();
  readonly #make: (bytes: number) => SharedArrayBuffer;
  #allocated = 0;
  #next = 1;

  constructor(size: number, make: (bytes: number) => SharedArrayBuffer) {
    this.size = size;
    this.#make = make;
  }

  get allocatedBytes(): number {
    return this.#allocated;
  }

  /** @throws OutOfMemoryError when `bytes` exceed what the budget has left. */
  allocate(bytes: number): { readonly id: number; readonly buffer: SharedArrayBuffer } {
    const available = this.size - this.#allocated;
    if (bytes > available) throw new OutOfMemoryError(bytes, available);
    const id = this.#next++;
    const buffer = this.#make(bytes);
    this.buffers.set(id, buffer);
    this.#allocated += bytes;
    return { id, buffer };
  }

  /**
   * Takes `buffer`, memory the host already has, as a buffer of its own without copying it (a PCF
   * set read into shared memory, which the cores then read in place), within the same budget.
   *
   * @throws OutOfMemoryError when its bytes exceed what the budget has left.
   */
  adopt(buffer: SharedArrayBuffer): number {
    const available = this.size - this.#allocated;
    if (buffer.byteLength > available) throw new OutOfMemoryError(buffer.byteLength, available);
    const id = this.#next++;
    this.buffers.set(id, buffer);
    this.#allocated += buffer.byteLength;
    return id;
  }

  free(id: number): void {
    const buffer = this.buffers.get(id);
    invariant(buffer !== undefined, `free of unknown buffer ${id}`);
    this.buffers.delete(id);
    this.#allocated -= buffer.byteLength;
  }

  write(id: number, byteOffset: number, src: Uint8Array): void {
    new Uint8Array(this.#get(id), byteOffset, src.byteLength).set(src);
  }

  read(id: number, byteOffset: number, dst: Uint8Array): void {
    dst.set(new Uint8Array(this.#get(id), byteOffset, dst.byteLength));
  }

  clear(): void {
    this.buffers.clear();
  }

  #get(id: number): SharedArrayBuffer {
    const buffer = this.buffers.get(id);
    invariant(buffer !== undefined, `unknown buffer ${id}`);
    return buffer;
  }
}

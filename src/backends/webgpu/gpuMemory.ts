/// <reference types="@webgpu/types" />
import { ArgumentError, OutOfMemoryError, StateError } from '../../core/errors.js';

/**
 * Device memory of the webgpu backend: one GPUBuffer per allocation, sized up to whole 32-bit words
 * and zero-filled at creation (WebGPU guarantees it). The host reaches it only through copies:
 * `write` enqueues `queue.writeBuffer` (ordered before any later launch on the same queue) and
 * `read` copies into a mappable staging buffer after every launch submitted so far.
 *
 * Only the main thread calls into this class; buffer ids are the backend's buffer numbers.
 */

/** GPUBufferUsage and GPUMapMode values, spelled out so no global has to be installed. */
export const Usage = { MAP_READ: 0x1, COPY_SRC: 0x4, COPY_DST: 0x8, UNIFORM: 0x40, STORAGE: 0x80 } as const;
export const MAP_READ = 0x1;

interface Allocation {
  readonly gpu: GPUBuffer;
  /** Bytes requested by memAlloc (the GPUBuffer may be up to 3 bytes larger). */
  readonly bytes: number;
}

const alignDown = (n: number): number => n - (n % 4);
const alignUp = (n: number): number => Math.ceil(n / 4) * 4;

export class GpuMemory {
  readonly #device: GPUDevice;
  readonly #memorySize: number;
  readonly #buffers = new Map<number, Allocation>();
  #allocated = 0;
  #next = 1;

  constructor(device: GPUDevice, memorySize: number) {
    this.#device = device;
    this.#memorySize = memorySize;
  }

  get allocatedBytes(): number {
    return this.#allocated;
  }

  allocate(bytes: number): number {
    const available = this.#memorySize - this.#allocated;
    if (bytes > available) throw new OutOfMemoryError(bytes, available);
    const max = this.#device.limits.maxBufferSize;
    if (alignUp(bytes) > max) {
      throw new ArgumentError(`cannot allocate ${bytes} bytes in one piece: this GPU's largest buffer is ${max} bytes (maxBufferSize); split the data over several allocations`);
    }
    const gpu = this.#device.createBuffer({ size: Math.max(4, alignUp(bytes)), usage: Usage.STORAGE | Usage.COPY_SRC | Usage.COPY_DST });
    const id = this.#next++;
    this.#buffers.set(id, { gpu, bytes });
    this.#allocated += bytes;
    return id;
  }

  free(id: number): void {
    const a = this.#get(id);
    this.#buffers.delete(id);
    this.#allocated -= a.bytes;
    // Launches already submitted keep the buffer alive until they finish; destroy waits for them.
    a.gpu.destroy();
  }

  /** The GPUBuffer behind an allocation. @throws ArgumentError when it was freed. */
  buffer(id: number): GPUBuffer {
    return this.#get(id).gpu;
  }

  /**
   * Copies `src` to the allocation at `byteOffset`. Whole words are written directly; a write that
   * starts or ends inside a word reads the words it touches first and writes them back patched.
   */
  async write(id: number, byteOffset: number, src: Uint8Array): Promise<void> {
    const gpu = this.#get(id).gpu;
    if (src.byteLength === 0) return;
    const lo = alignDown(byteOffset);
    const hi = alignUp(byteOffset + src.byteLength);
    if (lo === byteOffset && hi === byteOffset + src.byteLength) {
      this.#device.queue.writeBuffer(gpu, byteOffset, plain(src));
      return;
    }
    const words = new Uint8Array(hi - lo);
    await this.#readRange(gpu, lo, words);
    words.set(src, byteOffset - lo);
    this.#device.queue.writeBuffer(gpu, lo, words);
  }

  /** Copies `dst.byteLength` bytes from the allocation at `byteOffset`, after all submitted work. */
  async read(id: number, byteOffset: number, dst: Uint8Array): Promise<void> {
    const gpu = this.#get(id).gpu;
    if (dst.byteLength === 0) return;
    const lo = alignDown(byteOffset);
    const hi = alignUp(byteOffset + dst.byteLength);
    if (lo === byteOffset && hi === byteOffset + dst.byteLength) {
      await this.#readRange(gpu, lo, dst);
      return;
    }
    const words = new Uint8Array(hi - lo);
    await this.#readRange(gpu, lo, words);
    dst.set(words.subarray(byteOffset - lo, byteOffset - lo + dst.byteLength));
  }

  /** Releases every allocation. */
  destroy(): void {
    for (const a of this.#buffers.values()) a.gpu.destroy();
    this.#buffers.clear();
    this.#allocated = 0;
  }

  /** Reads whole words [offset, offset + dst.byteLength) through a staging buffer. */
  async #readRange(gpu: GPUBuffer, offset: number, dst: Uint8Array): Promise<void> {
    const staging = this.#device.createBuffer({ size: dst.byteLength, usage: Usage.MAP_READ | Usage.COPY_DST });
    try {
      const encoder = this.#device.createCommandEncoder();
      encoder.copyBufferToBuffer(gpu, offset, staging, 0, dst.byteLength);
      this.#device.queue.submit([encoder.finish()]);
      try {
        await staging.mapAsync(MAP_READ);
      } catch (err) {
        throw new StateError(`reading ${dst.byteLength} bytes back from the GPU failed (${err instanceof Error ? err.message : String(err)}); was the Context destroyed?`);
      }
      dst.set(new Uint8Array(staging.getMappedRange()));
      staging.unmap();
    } finally {
      staging.destroy();
    }
  }

  #get(id: number): Allocation {
    const a = this.#buffers.get(id);
    if (a === undefined) throw new ArgumentError(`device buffer ${id} is not allocated (was it freed?)`);
    return a;
  }
}

/** A view over an ordinary ArrayBuffer: WebGPU implementations need not accept shared memory. */
function plain(src: Uint8Array): Uint8Array<ArrayBuffer> {
  return src.buffer instanceof ArrayBuffer ? (src as Uint8Array<ArrayBuffer>) : new Uint8Array(src);
}

/// <reference types="@webgpu/types" />
import { ArgumentError, OutOfMemoryError, StateError } from '../../core/errors.js';

/**
 * Device memory of the webgpu backend: one GPUBuffer per allocation, sized up to whole 32-bit words
 * and zero-filled at creation (WebGPU guarantees it). The host reaches it only through copies:
 * `write` enqueues `queue.writeBuffer` (ordered before any later launch on the same queue) and
 * `read` copies into a mappable staging buffer after every launch submitted so far.
 *
 * Only the main thread calls into this class; buffer ids are the backend's buffer numbers.
 *
 * Out of memory. `allocate` is synchronous (it backs `Context.memAlloc`), but a GPU reports a
 * failed `createBuffer` only through an error scope that settles later. So:
 * - sizes beyond the device's limits (`maxBufferSize`) are refused at once with OutOfMemoryError;
 * - `createBuffer` runs inside 'out-of-memory' and 'validation' error scopes, and an error they
 *   catch marks the allocation failed. The first use of a failed allocation (a copy, a launch that
 *   binds it, or an execute whose arguments name it once the scope has settled) throws that
 *   OutOfMemoryError; the allocation stays accounted until `free`, which always works.
 */

/** GPUBufferUsage and GPUMapMode values, spelled out so no global has to be installed. */
export const Usage = { MAP_READ: 0x1, COPY_SRC: 0x4, COPY_DST: 0x8, UNIFORM: 0x40, STORAGE: 0x80 } as const;
/** GPUMapMode.READ. */
export const MAP_READ = 0x1;

interface Allocation {
  readonly gpu: GPUBuffer;
  /** Bytes requested by memAlloc (the GPUBuffer may be up to 3 bytes larger). */
  readonly bytes: number;
  /** Settles once the device has said whether it could create the buffer; never rejects. */
  readonly created: Promise<OutOfMemoryError | undefined>;
  /** Set once `created` settled with an error. */
  failure: OutOfMemoryError | undefined;
  /** Set once `created` settled. */
  settled: boolean;
}

/**
 * The OutOfMemoryError of an allocation the GPU cannot hold: `available` is the device's limit
 * (or 0 when the device ran out below it), and the message says the size, the limits and what to do.
 */
export function gpuOutOfMemory(bytes: number, limits: Pick<GPUSupportedLimits, 'maxBufferSize' | 'maxStorageBufferBindingSize'>, why?: string): OutOfMemoryError {
  const binding = `a kernel argument binds at most ${limits.maxStorageBufferBindingSize} bytes (maxStorageBufferBindingSize)`;
  return why === undefined
    ? new OutOfMemoryError(bytes, limits.maxBufferSize, `cannot allocate ${bytes} bytes in one piece on this GPU: its largest buffer is ${limits.maxBufferSize} bytes (maxBufferSize), and ${binding}; split the data over several allocations of at most ${limits.maxStorageBufferBindingSize} bytes`)
    : new OutOfMemoryError(bytes, 0, `the GPU could not allocate ${bytes} bytes (${why}); ${binding}: memFree allocations you no longer need, use smaller ones, or lower memorySize in createContext`);
}

/** Staging buffers kept for reads between calls: two blocks' results in flight, and one more. */
const STAGING_KEPT = 3;
/** The smallest staging buffer made: small reads (a few words) share one. */
const STAGING_MIN_BYTES = 4096;

const alignDown = (n: number): number => n - (n % 4);
const alignUp = (n: number): number => Math.ceil(n / 4) * 4;

/** The allocations of one device; see the file comment for copies and out-of-memory reporting. */
export class GpuMemory {
  readonly #device: GPUDevice;
  readonly #memorySize: number;
  readonly #buffers = new Map<number, Allocation>();
  #allocated = 0;
  #next = 1;
  /** Free staging buffers for `read`, at most STAGING_KEPT. */
  readonly #staging: GPUBuffer[] = [];
  #closed = false;
  /** Bytes the host copied to device memory with `write` (copyToDevice), since creation. */
  uploadedBytes = 0;
  /** Bytes the host copied from device memory with `read` (copyFromDevice), since creation. */
  downloadedBytes = 0;

  constructor(device: GPUDevice, memorySize: number) {
    this.#device = device;
    this.#memorySize = memorySize;
  }

  get allocatedBytes(): number {
    return this.#allocated;
  }

  /**
   * Creates a zero-filled buffer of `bytes` (rounded up to whole words).
   * @throws OutOfMemoryError beyond the Context's memorySize or the device's maxBufferSize; a
   *   device that runs out below its limits is reported at the allocation's first use (see above).
   */
  allocate(bytes: number): number {
    const available = this.#memorySize - this.#allocated;
    if (bytes > available) throw new OutOfMemoryError(bytes, available);
    const limits = this.#device.limits;
    if (alignUp(bytes) > limits.maxBufferSize) throw gpuOutOfMemory(bytes, limits);
    const device = this.#device;
    device.pushErrorScope('out-of-memory');
    device.pushErrorScope('validation');
    const gpu = device.createBuffer({ size: Math.max(4, alignUp(bytes)), usage: Usage.STORAGE | Usage.COPY_SRC | Usage.COPY_DST });
    const validation = device.popErrorScope();
    const oom = device.popErrorScope();
    const id = this.#next++;
    const allocation: Allocation = {
      gpu,
      bytes,
      failure: undefined,
      settled: false,
      created: Promise.all([oom, validation]).then(
        ([o, v]) => {
          allocation.settled = true;
          const error = o ?? v;
          if (error === null) return undefined;
          allocation.failure = gpuOutOfMemory(bytes, limits, `${o !== null ? 'out of memory' : 'refused'}: ${error.message}`);
          return allocation.failure;
        },
        // The device was lost or destroyed before answering: later uses fail on that instead.
        () => {
          allocation.settled = true;
          return undefined;
        },
      ),
    };
    this.#buffers.set(id, allocation);
    this.#allocated += bytes;
    return id;
  }

  /**
   * Resolves once the device has created these allocations.
   * @throws (rejects) the OutOfMemoryError of the first that it could not create; ArgumentError
   *   for one that is not allocated.
   */
  async created(ids: Iterable<number>): Promise<void> {
    for (const id of ids) {
      const a = this.#get(id);
      const failure = a.settled ? a.failure : await a.created;
      if (failure !== undefined) throw failure;
    }
  }

  /** Throws the OutOfMemoryError of an allocation the device is already known to have refused. */
  checkCreated(id: number): void {
    const failure = this.#buffers.get(id)?.failure;
    if (failure !== undefined) throw failure;
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
    this.checkCreated(id);
    if (src.byteLength === 0) return;
    const lo = alignDown(byteOffset);
    const hi = alignUp(byteOffset + src.byteLength);
    if (lo === byteOffset && hi === byteOffset + src.byteLength) {
      this.#device.queue.writeBuffer(gpu, byteOffset, plain(src));
    } else {
      const words = new Uint8Array(hi - lo);
      await this.#readRange(gpu, lo, words);
      words.set(src, byteOffset - lo);
      this.#device.queue.writeBuffer(gpu, lo, words);
    }
    this.uploadedBytes += src.byteLength;
    // Issued first, checked after: waiting for the scope before writing would reorder this copy
    // after launches issued later.
    await this.created([id]);
  }

  /** Copies `dst.byteLength` bytes from the allocation at `byteOffset`, after all submitted work. */
  async read(id: number, byteOffset: number, dst: Uint8Array): Promise<void> {
    const gpu = this.#get(id).gpu;
    this.checkCreated(id);
    if (dst.byteLength === 0) return;
    const lo = alignDown(byteOffset);
    const hi = alignUp(byteOffset + dst.byteLength);
    if (lo === byteOffset && hi === byteOffset + dst.byteLength) {
      await this.#readRange(gpu, lo, dst);
    } else {
      const words = new Uint8Array(hi - lo);
      await this.#readRange(gpu, lo, words);
      dst.set(words.subarray(byteOffset - lo, byteOffset - lo + dst.byteLength));
    }
    this.downloadedBytes += dst.byteLength;
    await this.created([id]);
  }

  /** Releases every allocation and the staging buffers kept for reads. */
  destroy(): void {
    for (const a of this.#buffers.values()) a.gpu.destroy();
    this.#buffers.clear();
    this.#allocated = 0;
    for (const staging of this.#staging) staging.destroy();
    this.#staging.length = 0;
    this.#closed = true;
  }

  /** Reads whole words [offset, offset + dst.byteLength) through a staging buffer. */
  async #readRange(gpu: GPUBuffer, offset: number, dst: Uint8Array): Promise<void> {
    const bytes = dst.byteLength;
    const staging = this.#takeStaging(bytes);
    let reusable = false;
    try {
      const encoder = this.#device.createCommandEncoder();
      encoder.copyBufferToBuffer(gpu, offset, staging, 0, bytes);
      this.#device.queue.submit([encoder.finish()]);
      try {
        await staging.mapAsync(MAP_READ, 0, bytes);
      } catch (err) {
        throw new StateError(`reading ${bytes} bytes back from the GPU failed (${err instanceof Error ? err.message : String(err)}); was the Context destroyed?`);
      }
      dst.set(new Uint8Array(staging.getMappedRange(0, bytes)));
      staging.unmap();
      reusable = true;
    } finally {
      if (reusable) this.#giveStaging(staging);
      else staging.destroy();
    }
  }

  /**
   * A free staging buffer of at least `bytes`. Creating a mappable buffer for every read cost more
   * than the copy itself on a hardware GPU (4 MB: 3.9 ms created each time, 1.1 ms reused, on an
   * H200), so buffers are kept for the next read, sized in powers of two so that blocks of
   * different sizes share them.
   */
  #takeStaging(bytes: number): GPUBuffer {
    let best = -1;
    for (let k = 0; k < this.#staging.length; k++) {
      const size = this.#staging[k]!.size;
      if (size >= bytes && (best < 0 || size < this.#staging[best]!.size)) best = k;
    }
    if (best >= 0) return this.#staging.splice(best, 1)[0]!;
    const size = Math.max(STAGING_MIN_BYTES, 2 ** Math.ceil(Math.log2(bytes)));
    return this.#device.createBuffer({ label: 'pxl staging', size: size <= this.#device.limits.maxBufferSize ? size : bytes, usage: Usage.MAP_READ | Usage.COPY_DST });
  }

  /** Keeps a staging buffer for reuse, the smallest going first once more than STAGING_KEPT are kept. */
  #giveStaging(staging: GPUBuffer): void {
    if (this.#closed) {
      staging.destroy();
      return;
    }
    this.#staging.push(staging);
    if (this.#staging.length > STAGING_KEPT) {
      this.#staging.sort((a, b) => b.size - a.size);
      this.#staging.pop()!.destroy();
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

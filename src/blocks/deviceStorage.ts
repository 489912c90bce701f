/**
 * The per-device storage of a BlockOp whose blocks run on a device with its own memory: two result
 * buffers in device memory (one per BufferSlot, so the pipeline can scatter one block while the
 * device computes the next), the host-visible arrays the pipeline reads them through, and the
 * device's launches, built once per block size and reused. Generic over what a pointer, a host
 * array and a launch are, so nothing here knows the runtime or the operation.
 */
import type { BufferSlot } from './blockOp.js';
import type { FloatArray } from './floatArray.js';

/** The device memory a {@link DeviceStorage} allocates its result buffers in (a pxl Context fits). */
export interface DeviceMemory<Ptr> {
  memAlloc(bytes: number): Ptr;
  memFree(ptr: Ptr): void;
}

/** How {@link DeviceStorage.allocate} sizes its buffers and makes host arrays and launches. */
export interface DeviceStorageSpec<Ptr, Host extends FloatArray, Launch> {
  /** Bytes of each of the two result buffers. */
  readonly bytes: number;
  /** The host-visible array of a result buffer: a view of it, or a separate array it is read back into. */
  readonly host: (ptr: Ptr) => Host;
  /** Builds the launch for blocks of one size (the key `launch` is called with). */
  readonly build: (size: number) => Launch;
  /** Called by `dispose` with each launch `build` made, for a caller that reuses launches across storages. */
  readonly release?: (launch: Launch) => void;
}

/**
 * One device's storage. Made by `initStorage` and released by `disposeStorage`, which the block
 * pipeline calls once each per device, so a storage is only ever used by one device's blocks.
 *
 * @example
 * ```ts
 * initStorage(device, scheduler) {
 *   return DeviceStorage.allocate(ctx, {
 *     bytes: scheduler.maxBlockElements * 8,
 *     host: (ptr) => ctx.hostView(ptr, 'float64'),
 *     build: (rows) => jobs[device].buildMap('kernel', rows),
 *   });
 * }
 * ```
 */
export class DeviceStorage<Ptr, Host extends FloatArray, Launch> {
  /** The two result buffers in device memory, indexed by BufferSlot. */
  readonly out: readonly [Ptr, Ptr];
  /** Their host-visible arrays, indexed by BufferSlot. */
  readonly host: readonly [Host, Host];
  readonly #memory: DeviceMemory<Ptr>;
  readonly #build: (size: number) => Launch;
  readonly #release: ((launch: Launch) => void) | undefined;
  readonly #launches = new Map<number, Launch>();

  private constructor(memory: DeviceMemory<Ptr>, out: readonly [Ptr, Ptr], host: readonly [Host, Host], spec: DeviceStorageSpec<Ptr, Host, Launch>) {
    this.#memory = memory;
    this.out = out;
    this.host = host;
    this.#build = spec.build;
    this.#release = spec.release;
  }

  /**
   * Allocates the two result buffers of `spec.bytes` each in `memory`, then their host arrays.
   * On failure, what was allocated is freed again.
   * @throws whatever `memory.memAlloc` or `spec.host` throws (out of memory, say).
   */
  static allocate<Ptr, Host extends FloatArray, Launch>(memory: DeviceMemory<Ptr>, spec: DeviceStorageSpec<Ptr, Host, Launch>): DeviceStorage<Ptr, Host, Launch> {
    const out: Ptr[] = [];
    try {
      out.push(memory.memAlloc(spec.bytes));
      out.push(memory.memAlloc(spec.bytes));
      const [a, b] = out as [Ptr, Ptr];
      return new DeviceStorage(memory, [a, b], [spec.host(a), spec.host(b)], spec);
    } catch (err) {
      for (const ptr of out) memory.memFree(ptr);
      throw err;
    }
  }

  /** The host array of `slot`'s result buffer (what `BlockOp.outputBuffer` returns). */
  outputBuffer(slot: BufferSlot): Host {
    return this.host[slot];
  }

  /** The launch for blocks of `size`, built by `spec.build` the first time and reused afterwards. */
  launch(size: number): Launch {
    let launch = this.#launches.get(size);
    if (launch === undefined) {
      launch = this.#build(size);
      this.#launches.set(size, launch);
    }
    return launch;
  }

  /** Hands every launch to `spec.release` and frees both result buffers (what `BlockOp.disposeStorage` does). */
  dispose(): void {
    if (this.#release !== undefined) for (const launch of this.#launches.values()) this.#release(launch);
    this.#launches.clear();
    for (const ptr of this.out) this.#memory.memFree(ptr);
  }
}

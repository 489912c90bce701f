/**
 * Device buffers of one Context that pairwise operations reuse from call to call, instead of
 * allocating and freeing their input and output buffers on every call.
 *
 * Why: on the CPU backend every allocation is a fresh SharedArrayBuffer handed to every core's
 * worker thread. A freed one stays alive in each core's heap until that thread next collects
 * garbage, which an idle core, asleep in `Atomics.wait` and allocating nothing, does not do. Measured
 * with 2 cores: 1,000 pdist calls (N = 100) that allocated afresh grew the process by 110 MB (about
 * 190 KB a call, the size of what each call allocated), and the growth stopped only when the cores
 * were made to collect. Reused buffers leave nothing to collect, and save each call the messages
 * that announce and retire a buffer on every core.
 *
 * Buffers are handed out whole and exclusively, rounded up to a power of two so that calls of
 * slightly different sizes share them. Idle buffers are kept up to a byte budget; a buffer that
 * does not fit in it is freed when given back, so large calls return their memory as before.
 */
import type { DeviceMemory } from '../blocks/index.js';
import type { Context } from '../pxl/context.js';
import type { DevicePtr } from '../pxl/devicePtr.js';
import { isDestroyed } from './contextState.js';

/** Idle bytes a pool keeps: a sixteenth of the device's memory, at most 64 MiB. */
export function retainBudget(memorySize: number): number {
  return Math.min(64 * 2 ** 20, Math.floor(memorySize / 16));
}

const MIN_BUFFER = 256;

/** @internal The reusable device buffers of one Context. */
export class DeviceBufferPool implements DeviceMemory<DevicePtr> {
  readonly #ctx: Context;
  readonly #budget: number;
  /** Idle buffers by byte length. */
  readonly #idle = new Map<number, DevicePtr[]>();
  #idleBytes = 0;

  constructor(ctx: Context, budget: number) {
    this.#ctx = ctx;
    this.#budget = budget;
  }

  /** Bytes held idle for the next call. */
  get idleBytes(): number {
    return this.#idleBytes;
  }

  /**
   * A buffer of at least `bytes`, for the caller alone until it gives it back with `memFree`. Its
   * contents are whatever its last user left: callers write before they read.
   * @throws OutOfMemoryError when the Context has too little memory left, even after the idle
   *   buffers are freed.
   */
  memAlloc(bytes: number): DevicePtr {
    const size = sizeFor(bytes, this.#budget);
    const idle = this.#idle.get(size)?.pop();
    if (idle !== undefined) {
      this.#idleBytes -= size;
      return idle;
    }
    if (size > this.#ctx.availableMemSize) this.clear();
    return this.#ctx.memAlloc(size);
  }

  /** Gives a buffer back: kept for reuse while the budget allows, freed otherwise (a destroyed Context freed it already). */
  memFree(ptr: DevicePtr): void {
    if (isDestroyed(this.#ctx)) return;
    const size = ptr.byteLength;
    if (this.#idleBytes + size > this.#budget) {
      this.#ctx.memFree(ptr);
      return;
    }
    let list = this.#idle.get(size);
    if (list === undefined) this.#idle.set(size, (list = []));
    list.push(ptr);
    this.#idleBytes += size;
  }

  /** Frees every idle buffer. */
  clear(): void {
    for (const list of this.#idle.values()) for (const ptr of list) this.#ctx.memFree(ptr);
    this.#idle.clear();
    this.#idleBytes = 0;
  }
}

/** Small buffers round up to a power of two, so that nearby sizes share them; large ones are exact. */
function sizeFor(bytes: number, budget: number): number {
  const size = Math.max(MIN_BUFFER, bytes);
  if (size > budget) return Math.ceil(size / 8) * 8;
  return 2 ** Math.ceil(Math.log2(size));
}

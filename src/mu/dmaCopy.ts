/**
 * One DMA copy a work-group recorded, its event, and how its group's runner performs it. Apart from
 * the DMA builtins (dma.ts) because the kernel state (state.ts) holds the copies of the running
 * group, and the builtins read that state.
 */
import type { AnyTypedArray } from '../core/dtype.js';

/** @internal One recorded copy of a work-group. */
export interface DmaCopy {
  readonly op: 'dmaRead' | 'dmaWrite';
  readonly dst: AnyTypedArray;
  readonly dstOffset: number;
  readonly src: AnyTypedArray;
  readonly srcOffset: number;
  readonly dims: number;
  readonly width: number;
  readonly height: number;
  readonly depth: number;
  readonly srcLine: number;
  readonly srcPlane: number;
  readonly dstLine: number;
  readonly dstPlane: number;
  readonly event: DmaEvent;
  done: boolean;
}

/**
 * The handle of one DMA copy, returned by `mu.dmaRead()` and `mu.dmaWrite()` and passed to
 * `mu.dmaWait()`. Every work-item of a group receives the same event for the same call.
 */
export class DmaEvent {
  readonly #copy: { done: boolean };

  /** @internal */
  constructor(copy: { done: boolean }) {
    this.#copy = copy;
  }

  /** True once the copy has been performed: after a `yield mu.dmaWait(...)` naming it, or at the end of its group. */
  get complete(): boolean {
    return this.#copy.done;
  }
}

type Lines = { set(values: ArrayLike<number>, offset: number): void; subarray(begin: number, end: number): ArrayLike<number> };

/** @internal Performs a recorded copy, line by line (a typed-array `set` per line); marks it done. */
export function performCopy(c: DmaCopy): void {
  const dst = c.dst as unknown as Lines;
  const src = c.src as unknown as Lines;
  const w = c.width;
  for (let z = 0; z < c.depth; z++) {
    for (let y = 0; y < c.height; y++) {
      const s = c.srcOffset + y * c.srcLine + z * c.srcPlane;
      dst.set(src.subarray(s, s + w), c.dstOffset + y * c.dstLine + z * c.dstPlane);
    }
  }
  c.done = true;
}

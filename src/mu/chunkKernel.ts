/**
 * Chunk kernels: the kernels the task graph runs. A queue splits a task's index space into chunks,
 * one per core, and calls the kernel once per chunk with that chunk's bounds and every buffer whole.
 */
import { defineKernel, type BatchKernel } from './kernel.js';
import type { NDView } from './views.js';

/**
 * Layout of the chunk table a queue passes as a chunk kernel's first launch argument: an int32
 * NDArray of shape `[chunks, CHUNK_ROW]`, one row per chunk: `dims, offset[3], range[3],
 * globalSize[3]` (unused dimensions are offset 0, extent 1). Launch task `t` runs chunk `t`.
 */
export const CHUNK_ROW = 10;

/**
 * The chunk a chunk kernel call runs: the half-open box `[offset, end)` of the task's index space
 * of extent `globalSize`. Arrays have one entry per dimension of the kernel's range, dimension 0
 * first (slowest-varying). The runtime reuses one object for all chunks of a core, so the view is
 * valid only during the call that received it.
 */
export interface ChunkView {
  /** Which chunk of the task, in `[0, chunkCount)`. */
  readonly index: number;
  readonly dims: 1 | 2 | 3;
  /** First index of the chunk along each dimension. */
  readonly offset: readonly number[];
  /** Extent of the chunk along each dimension. */
  readonly range: readonly number[];
  /** `offset + range`: one past the last index along each dimension. */
  readonly end: readonly number[];
  /** Extent of the whole kernel range. */
  readonly globalSize: readonly number[];
}

/** A chunk kernel in function form: called once per chunk with the chunk and the task's arguments. */
export type ChunkKernelFn<A extends unknown[]> = (chunk: ChunkView, ...args: A) => void;

/**
 * A chunk kernel in bind form: `bind` receives the task's arguments once per launch on each core
 * and returns the function called once per chunk; arrays bound in the closure are constants to V8.
 */
export interface ChunkKernelSpec<A extends unknown[]> {
  readonly bind: (...args: A) => (chunk: ChunkView) => void;
}

interface MutableChunk {
  index: number;
  dims: 1 | 2 | 3;
  offset: number[];
  range: number[];
  end: number[];
  globalSize: number[];
}

/** Fills `c` with row `t` of a chunk table. */
function readChunk(c: MutableChunk, table: Int32Array, t: number): void {
  const at = t * CHUNK_ROW;
  c.index = t;
  for (let d = 0; d < c.dims; d++) {
    const o = table[at + 1 + d]!;
    const r = table[at + 4 + d]!;
    c.offset[d] = o;
    c.range[d] = r;
    c.end[d] = o + r;
    c.globalSize[d] = table[at + 7 + d]!;
  }
}

function chunkRunner(table: NDView<Int32Array>, body: (chunk: ChunkView) => void): (first: number, end: number) => void {
  const rows = table.data;
  const dims = (rows[0] ?? 1) as 1 | 2 | 3;
  const zeros = (): number[] => new Array<number>(dims).fill(0);
  const c: MutableChunk = { index: 0, dims, offset: zeros(), range: zeros(), end: zeros(), globalSize: zeros() };
  return (first, end) => {
    for (let t = first; t < end; t++) {
      readChunk(c, rows, t);
      body(c);
    }
  };
}

/**
 * Defines a chunk kernel, the form `cg.parallelFor` runs. The kernel receives its chunk first, then
 * the arguments given to `parallelFor` in order: each accessor as an `NDView` of its **whole** buffer
 * (shape = the buffer's extent, `offset` 0, row-major), constants as they are. Index the buffer with
 * global coordinates; touch only the points the accessor's range mapper declares for this chunk.
 *
 * @example Function form: one call per chunk.
 * ```ts
 * export const scale = defineChunkKernel((c: ChunkView, src: NDView<Float32Array>, dst: NDView<Float32Array>, k: number) => {
 *   for (let i = c.offset[0]; i < c.end[0]; i++) dst.data[i] = k * src.data[i];
 * });
 * ```
 * @example Bind form: bind the arrays once per launch, return the per-chunk function.
 * ```ts
 * export const scale = defineChunkKernel({
 *   bind: (src: NDView<Float32Array>, dst: NDView<Float32Array>, k: number) => {
 *     const s = src.data, d = dst.data;
 *     return (c) => { for (let i = c.offset[0]; i < c.end[0]; i++) d[i] = k * s[i]; };
 *   },
 * });
 * ```
 * @throws TypeError unless given a function or `{ bind }`.
 */
export function defineChunkKernel<A extends unknown[]>(kernel: ChunkKernelFn<A> | ChunkKernelSpec<A>): BatchKernel {
  if (typeof kernel === 'function') {
    return defineKernel({
      bind: ((table: NDView<Int32Array>, ...args: A) => chunkRunner(table, (c) => kernel(c, ...args))) as unknown as (...a: never[]) => (f: number, e: number) => void,
    });
  }
  if (kernel === null || typeof kernel !== 'object' || typeof kernel.bind !== 'function') {
    throw new TypeError('defineChunkKernel expects a function (chunk, ...args) => void or { bind: (...args) => (chunk) => void }');
  }
  const userBind = kernel.bind;
  return defineKernel({
    bind: ((table: NDView<Int32Array>, ...args: A) => {
      const body = userBind(...args);
      if (typeof body !== 'function') throw new TypeError("a chunk kernel's bind() must return a function (chunk) => void");
      return chunkRunner(table, body);
    }) as unknown as (...a: never[]) => (f: number, e: number) => void,
  });
}

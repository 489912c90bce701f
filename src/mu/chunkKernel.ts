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
  /** Dimensions of the kernel range: 0 for a kernel over one point (a scalar), 1 to 3 otherwise. */
  readonly dims: 0 | 1 | 2 | 3;
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
  dims: 0 | 1 | 2 | 3;
  offset: number[];
  range: number[];
  end: number[];
  globalSize: number[];
}

/** Fills `c` with row `t` of a chunk table. */
function readChunk(c: MutableChunk, table: Int32Array, t: number, width: number): void {
  const at = t * width;
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

function chunkRunner(table: NDView<Int32Array>, body: (chunk: ChunkView) => void, onChunk?: (t: number) => void): (first: number, end: number) => void {
  const rows = table.data;
  const width = table.shape[1] ?? CHUNK_ROW;
  const dims = (rows[0] ?? 1) as 0 | 1 | 2 | 3;
  const zeros = (): number[] => new Array<number>(dims).fill(0);
  const c: MutableChunk = { index: 0, dims, offset: zeros(), range: zeros(), end: zeros(), globalSize: zeros() };
  return (first, end) => {
    for (let t = first; t < end; t++) {
      readChunk(c, rows, t, width);
      onChunk?.(t);
      body(c);
    }
  };
}

/**
 * Debug bounds checking. A queue with `debugBounds` passes a chunk table wider than `CHUNK_ROW`:
 * after the chunk's bounds each row lists the accessor arguments and the boxes each may touch in that
 * chunk: `entries`, then per entry `arg, mode (1 read, 2 write, 3 both), buffer id, dims, shape[3],
 * boxes`, then `boxes` times `min[3], max[3]`. Each such argument's `data` is replaced by a proxy
 * that checks every indexed get and set against the current chunk's boxes and throws a RangeError
 * naming the buffer, the index and the declared region.
 */
const ENTRY_HEAD = 8;

interface DebugEntry {
  readonly mode: number;
  readonly buffer: number;
  readonly dims: number;
  readonly shape: readonly number[];
  /** min[3], max[3] per box. */
  readonly boxes: Int32Array;
}

function readDebugRow(rows: Int32Array, width: number, t: number): Map<number, DebugEntry> {
  const out = new Map<number, DebugEntry>();
  let at = t * width + CHUNK_ROW;
  const entries = rows[at++]!;
  for (let e = 0; e < entries; e++) {
    const arg = rows[at]!;
    const dims = rows[at + 3]!;
    const n = rows[at + 7]!;
    out.set(arg, { mode: rows[at + 1]!, buffer: rows[at + 2]!, dims, shape: Array.from(rows.subarray(at + 4, at + 4 + dims)), boxes: rows.slice(at + ENTRY_HEAD, at + ENTRY_HEAD + 6 * n) });
    at += ENTRY_HEAD + 6 * n;
  }
  return out;
}

function formatDebugRegion(e: DebugEntry): string {
  const parts: string[] = [];
  for (let b = 0; b < e.boxes.length; b += 6) {
    const lo = Array.from(e.boxes.subarray(b, b + e.dims));
    const hi = Array.from(e.boxes.subarray(b + 3, b + 3 + e.dims));
    parts.push(`[(${lo.join(',')}),(${hi.join(',')}))`);
  }
  return `{${parts.join(',')}}`;
}

/** Wraps the accessor arguments of a debug launch in checking views; `current` is set to each chunk before it runs. */
function debugArgs(table: NDView<Int32Array>, args: unknown[]): { args: unknown[]; onChunk: (t: number) => void } {
  const width = table.shape[1]!;
  const rows = table.data;
  let current = new Map<number, DebugEntry>();
  let chunk = 0;
  const check = (arg: number, flat: number, write: boolean): void => {
    const e = current.get(arg);
    if (e === undefined) return;
    const idx: number[] = new Array<number>(e.dims);
    let rest = flat;
    for (let d = e.dims - 1; d >= 0; d--) {
      idx[d] = rest % e.shape[d]!;
      rest = Math.floor(rest / e.shape[d]!);
    }
    const kind = write ? 'write' : 'read';
    const allowed = write ? (e.mode & 2) !== 0 : (e.mode & 1) !== 0 || (e.mode & 2) !== 0;
    let inside = false;
    for (let b = 0; b < e.boxes.length && !inside; b += 6) {
      inside = true;
      for (let d = 0; d < e.dims; d++) if (idx[d]! < e.boxes[b + d]! || idx[d]! >= e.boxes[b + 3 + d]!) inside = false;
    }
    if (inside && allowed) return;
    const why = inside ? `a ${kind} through a ${e.mode === 1 ? 'read' : 'write'}-only accessor` : `outside the declared region ${formatDebugRegion(e)}`;
    throw new RangeError(`out-of-bounds ${kind} of buffer B${e.buffer} at index (${idx.join(',')}) in chunk ${chunk}: ${why}`);
  };
  const checked = readDebugRow(rows, width, 0);
  const wrapped = args.map((arg, i) => {
    if (!checked.has(i) || arg === null || typeof arg !== 'object' || !ArrayBuffer.isView((arg as NDView).data)) return arg;
    const a = arg as NDView;
    const data = a.data as unknown as Record<string | symbol, unknown>;
    const numeric = (p: string | symbol): number => (typeof p === 'string' && p.length > 0 && p.charCodeAt(0) >= 48 && p.charCodeAt(0) <= 57 ? Number(p) : -1);
    const proxy = new Proxy(data, {
      get(target, p) {
        const k = numeric(p);
        if (k >= 0) {
          check(i, k, false);
          return target[p];
        }
        const v = Reflect.get(target, p, target) as unknown;
        return typeof v === 'function' ? (v as (...x: unknown[]) => unknown).bind(target) : v;
      },
      set(target, p, value) {
        const k = numeric(p);
        if (k >= 0) check(i, k, true);
        target[p] = value;
        return true;
      },
    });
    // A copy of the view (same prototype and fields) whose data is the checking proxy.
    return Object.assign(Object.create(Object.getPrototypeOf(a) as object) as NDView, a, { data: proxy });
  });
  return {
    args: wrapped,
    onChunk: (t) => {
      chunk = t;
      current = readDebugRow(rows, width, t);
    },
  };
}

function isDebugTable(table: NDView<Int32Array>): boolean {
  return (table.shape[1] ?? CHUNK_ROW) > CHUNK_ROW;
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
      bind: ((table: NDView<Int32Array>, ...args: A) => {
        if (!isDebugTable(table)) return chunkRunner(table, (c) => kernel(c, ...args));
        const debug = debugArgs(table, args);
        return chunkRunner(table, (c) => kernel(c, ...(debug.args as A)), debug.onChunk);
      }) as unknown as (...a: never[]) => (f: number, e: number) => void,
    });
  }
  if (kernel === null || typeof kernel !== 'object' || typeof kernel.bind !== 'function') {
    throw new TypeError('defineChunkKernel expects a function (chunk, ...args) => void or { bind: (...args) => (chunk) => void }');
  }
  const userBind = kernel.bind;
  return defineKernel({
    bind: ((table: NDView<Int32Array>, ...args: A) => {
      const debug = isDebugTable(table) ? debugArgs(table, args) : undefined;
      const body = userBind(...((debug?.args ?? args) as A));
      if (typeof body !== 'function') throw new TypeError("a chunk kernel's bind() must return a function (chunk) => void");
      return chunkRunner(table, body, debug?.onChunk);
    }) as unknown as (...a: never[]) => (f: number, e: number) => void,
  });
}

/**
 * DMA builtins of group kernels: asynchronous copies of 1-, 2- or 3-D strided regions between
 * device memory and work-group local memory. A copy is collective (the group issues it once) and
 * deferred: the group's runner performs it when the group reaches `yield mu.dmaWait(...)` naming
 * its event, so its result is visible after the wait and not before, as on hardware.
 */
import type { AnyTypedArray } from '../core/dtype.js';
import { DmaEvent, type DmaCopy } from './dmaCopy.js';
import { muState, notYielded, type GroupContext, type SyncPoint } from './state.js';

export { DmaEvent } from './dmaCopy.js';

/** A region's size in elements: `[width]`, `[width, height]` or `[width, height, depth]`. */
export type DmaExtent = readonly [number] | readonly [number, number] | readonly [number, number, number];

/**
 * Element strides of a DMA region: `[lineStride, planeStride?]`, the distance between the starts of
 * consecutive lines (rows) and planes. Default: packed, `lineStride = width` and
 * `planeStride = lineStride × height`.
 */
export type DmaStride = readonly [lineStride: number, planeStride?: number];

/** Strides of each side of a DMA copy; a side left out is packed. */
export interface DmaStrides {
  readonly src?: DmaStride;
  readonly dst?: DmaStride;
}

function outsideGroup(op: string, how: string): never {
  throw new Error(`mu.${op}() works only in a kernel defined with defineGroupKernel${how}`);
}

function isTypedArray(value: unknown): value is AnyTypedArray {
  return ArrayBuffer.isView(value) && !(value instanceof DataView);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/** `a Float32Array`, `an Int32Array`. */
function article(name: string): string {
  return `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name}`;
}

function show(value: unknown): string {
  return Array.isArray(value) ? `[${value.map(String).join(', ')}]` : isTypedArray(value) ? article(value.constructor.name) : String(value);
}

function dma(op: DmaCopy['op'], dst: AnyTypedArray, dstOffset: number, src: AnyTypedArray, srcOffset: number, extent: DmaExtent, strides: DmaStrides | undefined): DmaEvent {
  const g = muState.group;
  if (g === undefined) outsideGroup(op, '');
  const k = g.dmaCalls++;
  const prior = g.copies[k];
  if (prior === undefined) {
    const copy = record(op, dst, dstOffset, src, srcOffset, extent, strides);
    g.copies.push(copy);
    return copy.event;
  }
  if (prior.op !== op || prior.dst !== dst || prior.src !== src || prior.dstOffset !== dstOffset || prior.srcOffset !== srcOffset || !sameExtent(prior, extent)) {
    throw mismatch(g, op, k, prior);
  }
  return prior.event;
}

function sameExtent(c: DmaCopy, extent: DmaExtent): boolean {
  return Array.isArray(extent) && extent.length === c.dims && extent[0] === c.width && (extent[1] ?? 1) === c.height && (extent[2] ?? 1) === c.depth;
}

function mismatch(g: GroupContext, op: string, k: number, prior: DmaCopy): Error {
  return new Error(
    `mu.${op}() call #${k + 1} of work-item ${g.item} in work-group ${g.label} does not match the same call of the work-item that issued it (mu.${prior.op}() of extent [${[prior.width, prior.height, prior.depth].slice(0, prior.dims).join(', ')}] at dstOffset ${prior.dstOffset}, srcOffset ${prior.srcOffset}): DMA calls are collective, so every work-item of a group makes the same calls, in the same order, with the same arrays, offsets and extent`,
  );
}

/** Validates a copy in full and records it. */
function record(op: DmaCopy['op'], dst: unknown, dstOffset: unknown, src: unknown, srcOffset: unknown, extent: unknown, strides: DmaStrides | undefined): DmaCopy {
  const at = `mu.${op}()`;
  for (const [side, a] of [['dst', dst], ['src', src]] as const) {
    if (!isTypedArray(a)) throw new TypeError(`${at}: ${side} must be a typed array (a local array, an NDView's data or a PointerView's typed array), got ${show(a)}`);
  }
  const d = dst as AnyTypedArray;
  const s = src as AnyTypedArray;
  if (d.constructor !== s.constructor) throw new TypeError(`${at}: dst is ${article(d.constructor.name)} but src is ${article(s.constructor.name)}; a DMA copies between arrays of one element type`);
  if (!Array.isArray(extent) || extent.length < 1 || extent.length > 3 || !extent.every(isCount)) {
    throw new TypeError(`${at}: extent must be [width], [width, height] or [width, height, depth] in elements (integers ≥ 0), got ${show(extent)}`);
  }
  if (!isCount(dstOffset)) throw new RangeError(`${at}: dstOffset must be an integer ≥ 0, got ${String(dstOffset)}`);
  if (!isCount(srcOffset)) throw new RangeError(`${at}: srcOffset must be an integer ≥ 0, got ${String(srcOffset)}`);
  const [width, height = 1, depth = 1] = extent as number[];
  const stride = (side: 'src' | 'dst'): [number, number] => {
    const given: unknown = strides?.[side];
    if (given === undefined) return [width!, width! * height];
    if (!Array.isArray(given) || given.length < 1 || given.length > 2 || !given.every((v) => v === undefined || isCount(v))) {
      throw new TypeError(`${at}: strides.${side} must be [lineStride, planeStride?] in elements (integers ≥ 0), got ${show(given)}`);
    }
    const line = given[0] as number;
    return [line, (given[1] as number | undefined) ?? line * height];
  };
  const [srcLine, srcPlane] = stride('src');
  const [dstLine, dstPlane] = stride('dst');
  const copy: DmaCopy = { op, dst: d, dstOffset, src: s, srcOffset, dims: extent.length, width: width!, height, depth, srcLine, srcPlane, dstLine, dstPlane, event: undefined as unknown as DmaEvent, done: false };
  if (width! * height * depth > 0) {
    checkBounds(at, 'dst', d, dstOffset + (width! - 1) + (height - 1) * dstLine + (depth - 1) * dstPlane);
    checkBounds(at, 'src', s, srcOffset + (width! - 1) + (height - 1) * srcLine + (depth - 1) * srcPlane);
  }
  (copy as { event: DmaEvent }).event = new DmaEvent(copy);
  return copy;
}

function checkBounds(at: string, side: string, a: AnyTypedArray, last: number): void {
  if (last >= a.length) throw new RangeError(`${at}: the ${side} region reaches index ${last}, past the end of ${side} (length ${a.length})`);
}

/**
 * Starts a copy of a region of `src` (device memory, by convention) into `dst` (work-group local
 * memory). Offsets and strides are in elements; the region is `extent` = `[width, height?, depth?]`
 * elements, lines `strides.src[0]` apart and planes `strides.src[1]` apart in `src` (packed by
 * default; see {@link DmaStride}), and likewise in `dst`.
 *
 * Collective and deferred: every work-item of the group makes the same DMA calls in the same order
 * with the same arguments, and receives the same event; the group performs the copy once, when it
 * reaches a `yield mu.dmaWait(...)` naming the event. Read the destination only after that wait.
 * A copy never waited for is performed when its group finishes.
 *
 * @param dst - The typed array written: a local array, an NDView's `data`, a PointerView's typed array.
 * @param dstOffset - Element index in `dst` of the region's first element.
 * @param src - The typed array read; the same element type as `dst`.
 * @param srcOffset - Element index in `src` of the region's first element.
 * @param extent - `[width]`, `[width, height]` or `[width, height, depth]` in elements.
 * @param strides - Line and plane strides of each side. Default: both packed.
 * @returns The copy's event, for {@link dmaWait}.
 * @throws Error outside a group kernel, or when this call does not match the same call of the
 *   group's other work-items; TypeError for arrays that are not typed arrays or differ in element
 *   type, or a malformed extent or stride; RangeError for a negative offset or a region that
 *   reaches past the end of either array (the message names the side, the index and the length).
 * @example A 10 × 10 tile (8 × 8 plus a halo of 1) of a row-major n × n image into local memory:
 * ```ts
 * const ev = mu.dmaRead(local.tile, 0, image.data, y0 * n + x0, [10, 10], { src: [n] });
 * yield mu.dmaWait(ev);
 * ```
 */
export function dmaRead(dst: AnyTypedArray, dstOffset: number, src: AnyTypedArray, srcOffset: number, extent: DmaExtent, strides?: DmaStrides): DmaEvent {
  return dma('dmaRead', dst, dstOffset, src, srcOffset, extent, strides);
}

/**
 * Starts a copy of a region of `src` (work-group local memory, by convention) into `dst` (device
 * memory). The same copy as {@link dmaRead}, with the same arguments, rules and errors.
 *
 * @returns The copy's event, for {@link dmaWait}.
 * @throws as {@link dmaRead}.
 * @example Writes an 8 × 8 result tile back into a row-major n × n image:
 * ```ts
 * yield mu.dmaWait(mu.dmaWrite(image.data, y0 * n + x0, local.out, 0, [8, 8], { dst: [n] }));
 * ```
 */
export function dmaWrite(dst: AnyTypedArray, dstOffset: number, src: AnyTypedArray, srcOffset: number, extent: DmaExtent, strides?: DmaStrides): DmaEvent {
  return dma('dmaWrite', dst, dstOffset, src, srcOffset, extent, strides);
}

/**
 * A collective wait for DMA copies: write `yield mu.dmaWait(...events)`. Every work-item of the
 * group reaches it; the group then performs the named copies still pending, in issue order, and
 * resumes all its work-items, so the copies' results are visible to every item after it. A wait is
 * also a barrier. Events pass as arguments or arrays; events of another group and events already
 * waited for are accepted and need nothing.
 *
 * @returns The sync point the work-item must yield.
 * @throws Error outside a group kernel, or when a previous `mu.barrier()` / `mu.dmaWait()` of this
 *   work-item was not yielded; TypeError for an argument that is not a DmaEvent.
 * @example
 * ```ts
 * const a = mu.dmaRead(local.a, 0, src.data, 0, [64]);
 * const b = mu.dmaRead(local.b, 0, src.data, 64, [64]);
 * yield mu.dmaWait(a, b);
 * ```
 */
export function dmaWait(...events: (DmaEvent | readonly DmaEvent[])[]): SyncPoint {
  const g = muState.group;
  if (g === undefined) outsideGroup('dmaWait', ', as `yield mu.dmaWait(...events)`');
  if (g.pending !== undefined) throw notYielded(g);
  const list = events.flat();
  for (const e of list) if (!(e instanceof DmaEvent)) throw new TypeError(`mu.dmaWait() takes the events mu.dmaRead() and mu.dmaWrite() return, got ${show(e)}`);
  const point: SyncPoint = { kind: 'dmaWait', events: list };
  g.pending = point;
  return point;
}

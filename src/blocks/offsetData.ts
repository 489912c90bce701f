/**
 * Offset data: many variable-length objects flattened into contiguous per-field channels plus an
 * offsets array, so a device kernel finds object k's elements at `[offsets[k], offsets[k + 1])` of
 * every channel. This is the generic half of the data manager: it knows nothing of what an element
 * is (a PCF breakpoint is one element with a time channel and a value channel).
 *
 * A block needs only the objects of its row and column bands; {@link subset} cuts those out as
 * views without copying, ready for one upload each, and {@link maxSubsetElements} sizes the device
 * arrays once so they are reused across blocks.
 */
import { OptionError } from '../core/errors.js';
import { checkInteger, describe } from '../core/validate.js';
import type { Band } from './blockScheduler.js';

/** A typed array that can hold one scalar field of every element. */
export type ChannelArray = Float64Array | Float32Array | Int32Array | Uint32Array | Int16Array | Uint16Array | Int8Array | Uint8Array;

/** A constructor of a zero-filled channel, e.g. `Float64Array`. */
export type ChannelCtor<A extends ChannelArray = ChannelArray> = new (length: number) => A;

/**
 * `count` objects whose elements are stored field by field. Object k owns elements
 * `[offsets[k], offsets[k + 1])`; `offsets` has `count + 1` entries, starts at 0 and never
 * decreases, and every channel has `offsets[count]` entries. Offsets are float64 so they stay exact
 * beyond 2^32 elements.
 */
export interface OffsetData<C extends readonly ChannelArray[] = readonly ChannelArray[]> {
  readonly count: number;
  readonly offsets: Float64Array;
  readonly channels: C;
}

/** The channel arrays made by a tuple of channel constructors. */
export type ChannelsOf<K extends readonly ChannelCtor[]> = { readonly [I in keyof K]: K[I] extends ChannelCtor<infer A> ? A : never };

/**
 * Flattens `objects` into offset data: `sizeFn(obj, k)` says how many elements object k has, then
 * `elementFn(obj, e, out)` writes the fields of its element `e` into `out[0 .. channels - 1]`.
 * `out` is one reused array, so `elementFn` must not keep it.
 *
 * @throws {OptionError} when a size is not an integer >= 0, or `elementFn` leaves a field unset.
 * @example
 * // Two PCFs as (t, v) breakpoints: a time channel and a value channel.
 * const data = offsetDataFrom(pcfs, (f) => f.length, [Float64Array, Float32Array] as const,
 *   (f, e, out) => { out[0] = f[e]![0]; out[1] = f[e]![1]; });
 * data.offsets; // [0, 3, 5] for breakpoint counts 3 and 2
 */
export function offsetDataFrom<T, const K extends readonly ChannelCtor[]>(
  objects: readonly T[],
  sizeFn: (obj: T, index: number) => number,
  channelCtors: K,
  elementFn: (obj: T, element: number, out: number[]) => void,
): OffsetData<ChannelsOf<K>> {
  const count = objects.length;
  const offsets = new Float64Array(count + 1);
  for (let k = 0; k < count; k++) {
    const size = sizeFn(objects[k] as T, k);
    if (typeof size !== 'number' || !Number.isInteger(size) || size < 0) {
      throw new OptionError(`sizeFn must return an integer >= 0, got ${describe(size)} for object ${k}`);
    }
    offsets[k + 1] = (offsets[k] as number) + size;
  }
  const total = offsets[count] as number;
  const channels = channelCtors.map((Ctor) => new Ctor(total));
  const out: number[] = [];
  for (let k = 0; k < count; k++) {
    const obj = objects[k] as T;
    const first = offsets[k] as number;
    const size = (offsets[k + 1] as number) - first;
    for (let e = 0; e < size; e++) {
      // Clearing `out` first is what lets a forgotten field be caught instead of repeating the
      // previous element's value.
      out.length = 0;
      elementFn(obj, e, out);
      for (let c = 0; c < channels.length; c++) {
        const v = out[c];
        if (typeof v !== 'number') throw new OptionError(`elementFn left field ${c} of element ${e} of object ${k} unset`);
        (channels[c] as ChannelArray)[first + e] = v;
      }
    }
  }
  return { count, offsets, channels: channels as unknown as ChannelsOf<K> };
}

/**
 * Offset data over existing arrays (not copied), after checking the layout contract.
 *
 * @throws {OptionError} when `offsets` is empty, does not start at 0, decreases, is not integral,
 * or a channel's length differs from the last offset.
 * @example
 * offsetData(new Float64Array([0, 2, 3]), [new Float64Array(3)]); // 2 objects, 3 elements
 */
export function offsetData<const C extends readonly ChannelArray[]>(offsets: Float64Array, channels: C): OffsetData<C> {
  if (!(offsets instanceof Float64Array) || offsets.length === 0) {
    throw new OptionError(`offsets must be a non-empty Float64Array, got ${describe(offsets)}`);
  }
  if (offsets[0] !== 0) throw new OptionError(`offsets[0] must be 0, got ${offsets[0]}`);
  for (let k = 1; k < offsets.length; k++) {
    const v = offsets[k] as number;
    if (!Number.isInteger(v) || v < (offsets[k - 1] as number)) {
      throw new OptionError(`offsets must be non-decreasing integers, got offsets[${k - 1}] = ${offsets[k - 1]} and offsets[${k}] = ${v}`);
    }
  }
  const total = offsets[offsets.length - 1] as number;
  channels.forEach((channel, c) => {
    if (channel.length !== total) throw new OptionError(`channel ${c} has ${channel.length} elements but offsets end at ${total}`);
  });
  return { count: offsets.length - 1, offsets, channels };
}

/**
 * Objects `[first, first + count)` of `data`, re-indexed from 0: a new small offsets array rebased
 * to start at 0, and channels that are `subarray` views of the contiguous element range, so
 * nothing is copied and writes to a view show in `data`.
 *
 * @throws {OptionError} when the range is not inside `[0, data.count]`.
 * @example
 * subset(data, 1, 2).offsets; // [0, 2, 5] when data.offsets is [0, 3, 5, 8]
 */
export function subset<C extends readonly ChannelArray[]>(data: OffsetData<C>, first: number, count: number): OffsetData<C> {
  checkInteger('first', first, 0, data.count);
  checkInteger('count', count, 0, data.count - first);
  const start = data.offsets[first] as number;
  const end = data.offsets[first + count] as number;
  const offsets = new Float64Array(count + 1);
  for (let k = 0; k <= count; k++) offsets[k] = (data.offsets[first + k] as number) - start;
  const channels = data.channels.map((channel) => channel.subarray(start, end)) as unknown as C;
  return { count, offsets, channels };
}

/**
 * The most elements any band's objects hold together: the length to allocate each device channel
 * once, for bands such as `scheduler.rowBands`. 0 for no bands.
 *
 * @throws {OptionError} when a band is empty or reaches past `data.count`.
 * @example
 * maxSubsetElements(data, subdivide(2, data.count));
 */
export function maxSubsetElements(data: OffsetData, bands: readonly Band[]): number {
  let most = 0;
  for (const band of bands) {
    checkInteger('band.first', band.first, 0, data.count - 1);
    checkInteger('band.last', band.last, band.first, data.count - 1);
    most = Math.max(most, (data.offsets[band.last + 1] as number) - (data.offsets[band.first] as number));
  }
  return most;
}

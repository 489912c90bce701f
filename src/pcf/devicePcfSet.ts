import { DTYPES } from '../core/dtype.js';
import type { Context } from '../pxl/context.js';
import type { DevicePtr } from '../pxl/devicePtr.js';
import { NDArray } from '../pxl/ndarray.js';
import type { PcfSet } from './pcfSet.js';

/** The element types a PCF set takes in device memory. */
export type DevicePcfDtype = 'float32' | 'float64';

/** A PCF set in device memory: times and values in `D`, offsets as uint32, one allocation each. */
export interface DevicePcfSet<D extends DevicePcfDtype = DevicePcfDtype> {
  readonly times: NDArray<D>;
  readonly values: NDArray<D>;
  readonly offsets: NDArray<'uint32'>;
  /** The three allocations, for memFree. */
  readonly pointers: readonly DevicePtr[];
}

/**
 * Copies a set into device memory once, its times and values as `dtype`: float64 for CPU cores
 * (one kernel shape for both input types; widening is exact), float32 for a GPU, whose WGSL has no
 * float64 (exact for a float32 set). Every device of the Context then reads it in place.
 */
export async function uploadPcfSet<D extends DevicePcfDtype>(ctx: Context, set: PcfSet, dtype: D): Promise<DevicePcfSet<D>> {
  const n = Math.max(1, set.offsets[set.count]!);
  const Elements = DTYPES[dtype];
  const as = (a: ArrayLike<number>): ArrayBufferView => (a instanceof Elements ? a : Elements.from(a));
  const times = ctx.memAlloc(n * Elements.BYTES_PER_ELEMENT);
  const values = ctx.memAlloc(n * Elements.BYTES_PER_ELEMENT);
  const offsets = ctx.memAlloc((set.count + 1) * 4);
  await ctx.copyToDevice(times, as(set.times));
  await ctx.copyToDevice(values, as(set.values));
  await ctx.copyToDevice(offsets, set.offsets);
  return {
    times: new NDArray(times, dtype, [n]),
    values: new NDArray(values, dtype, [n]),
    offsets: new NDArray(offsets, 'uint32', [set.count + 1]),
    pointers: [times, values, offsets],
  };
}

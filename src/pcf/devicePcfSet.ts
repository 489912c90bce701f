import { DTYPES } from '../core/dtype.js';
import type { DeviceMemory } from '../blocks/index.js';
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
  /** The three allocations, to give back to the memory they came from. */
  readonly pointers: readonly DevicePtr[];
}

/**
 * Copies a set into device memory once, its times and values as `dtype`: the set's own dtype for
 * CPU cores (which compute a float32 set in float32), float32 for a GPU, whose WGSL has no float64
 * (exact for a float32 set). Every device of the Context then reads it in place. The
 * buffers come from `memory` (default: the Context itself), which may hand out larger ones than
 * asked for: the arrays' shapes say how much of each is the set.
 */
export async function uploadPcfSet<D extends DevicePcfDtype>(ctx: Context, set: PcfSet, dtype: D, memory: DeviceMemory<DevicePtr> = ctx): Promise<DevicePcfSet<D>> {
  const n = Math.max(1, set.offsets[set.count]!);
  const Elements = DTYPES[dtype];
  const as = (a: ArrayLike<number>): ArrayBufferView => (a instanceof Elements ? a : Elements.from(a));
  const pointers: DevicePtr[] = [];
  try {
    for (const bytes of [n * Elements.BYTES_PER_ELEMENT, n * Elements.BYTES_PER_ELEMENT, (set.count + 1) * 4]) pointers.push(memory.memAlloc(bytes));
    await ctx.copyToDevice(pointers[0]!, as(set.times));
    await ctx.copyToDevice(pointers[1]!, as(set.values));
    await ctx.copyToDevice(pointers[2]!, set.offsets);
  } catch (err) {
    for (const ptr of pointers) memory.memFree(ptr);
    throw err;
  }
  const [times, values, offsets] = pointers as [DevicePtr, DevicePtr, DevicePtr];
  return {
    times: new NDArray(times, dtype, [n]),
    values: new NDArray(values, dtype, [n]),
    offsets: new NDArray(offsets, 'uint32', [set.count + 1]),
    pointers,
  };
}

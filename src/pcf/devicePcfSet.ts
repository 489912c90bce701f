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
  /** The allocations made for it, to give back to the memory they came from. */
  readonly pointers: readonly DevicePtr[];
  /** The set's own shared memory the devices read in place, to give back with `ctx.memFree` (never to a pool: it is the caller's). */
  readonly adopted: readonly DevicePtr[];
}

/**
 * Puts a set into device memory once, its times and values as `dtype`: the set's own dtype for
 * CPU cores (which compute a float32 set in float32), float32 for a GPU, whose WGSL has no float64
 * (exact for a float32 set). Every device of the Context then reads it in place. With `inPlace`,
 * times and values already of `dtype` in shared memory (a set made or read with `shared: true`)
 * are read where they lie by devices that read host shared memory (CPU cores), so the process
 * holds the set once; the caller gives `adopted` back with `ctx.memFree`. Anything else is copied into buffers from `memory` (default: the Context itself), which may hand
 * out larger ones than asked for: the arrays' shapes say how much of each is the set.
 */
export async function uploadPcfSet<D extends DevicePcfDtype>(ctx: Context, set: PcfSet, dtype: D, memory: DeviceMemory<DevicePtr> = ctx, inPlace = false): Promise<DevicePcfSet<D>> {
  const n = Math.max(1, set.offsets[set.count]!);
  const Elements = DTYPES[dtype];
  const pointers: DevicePtr[] = [];
  const adopted: DevicePtr[] = [];
  /** `a` on the device: in place where it can be, else a copy. */
  const place = async (a: ArrayLike<number>, bytes: number): Promise<DevicePtr> => {
    if (inPlace && a instanceof Elements && a.length >= n) {
      const base = ctx.adoptHostMemory(a.buffer);
      if (base !== undefined) {
        adopted.push(base);
        return base.add(a.byteOffset);
      }
    }
    const ptr = memory.memAlloc(bytes);
    pointers.push(ptr);
    await ctx.copyToDevice(ptr, a instanceof Elements ? a : Elements.from(a));
    return ptr;
  };
  try {
    const times = await place(set.times, n * Elements.BYTES_PER_ELEMENT);
    const values = await place(set.values, n * Elements.BYTES_PER_ELEMENT);
    const offsets = memory.memAlloc((set.count + 1) * 4);
    pointers.push(offsets);
    await ctx.copyToDevice(offsets, set.offsets);
    return {
      times: new NDArray(times, dtype, [n]),
      values: new NDArray(values, dtype, [n]),
      offsets: new NDArray(offsets, 'uint32', [set.count + 1]),
      pointers,
      adopted,
    };
  } catch (err) {
    for (const ptr of pointers) memory.memFree(ptr);
    for (const ptr of adopted) ctx.memFree(ptr);
    throw err;
  }
}

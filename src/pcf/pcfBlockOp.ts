import { DeviceStorage, type BlockInfo, type BlockOp, type BlockScheduler, type BufferSlot, type FloatArray, type FloatDType, type TriangleSkipMode } from '../blocks/index.js';
import type { Context } from '../pxl/context.js';
import type { DevicePtr } from '../pxl/devicePtr.js';
import type { Job } from '../pxl/job.js';
import type { KernelMap } from '../pxl/kernelMap.js';
import { LocalityMode } from '../pxl/launchPlan.js';
import { NDArray } from '../pxl/ndarray.js';
import { SKIP_CODE, type BlockParams } from './blockKernels.js';
import type { PcfOp } from './integrate.js';
import { integrationLimit } from './pcf.js';
import type { PcfSet } from './pcfSet.js';

/** A PCF set in device memory, widened to float64 (exact) so the cores run one kernel shape. */
export interface DevicePcfSet {
  readonly times: NDArray<'float64'>;
  readonly values: NDArray<'float64'>;
  readonly offsets: NDArray<'uint32'>;
  readonly pointers: readonly DevicePtr[];
}

/** Copies a set into device memory once; every device (Job) of the Context reads it in place. */
export async function uploadPcfSet(ctx: Context, set: PcfSet): Promise<DevicePcfSet> {
  const n = set.offsets[set.count]!;
  const times = ctx.memAlloc(Math.max(1, n) * 8);
  const values = ctx.memAlloc(Math.max(1, n) * 8);
  const offsets = ctx.memAlloc((set.count + 1) * 4);
  ctx.hostView(times, 'float64').set(set.times);
  ctx.hostView(values, 'float64').set(set.values);
  await ctx.copyToDevice(offsets, set.offsets);
  return {
    times: new NDArray(times, 'float64', [Math.max(1, n)]),
    values: new NDArray(values, 'float64', [Math.max(1, n)]),
    offsets: new NDArray(offsets, 'uint32', [set.count + 1]),
    pointers: [times, values, offsets],
  };
}

/** Per device Job: two output buffers in device memory, the host's views of them, and the Maps by block row count. */
type Storage = DeviceStorage<DevicePtr, FloatArray, KernelMap>;

/**
 * The PCF BlockOp on pxl's CPU cores: each device is a Job; a block is one Map launch of
 * `pcf_block` with one task per block row, dealt round-robin (SpreadMode) so the short rows of a
 * diagonal block do not all land on one core. Input sets live in shared device memory, so
 * "uploading" a block's subset is free: the kernel indexes the whole set. Results go to two
 * device buffers per Job that the host reads without a copy.
 */
export class PcfBlockOp implements BlockOp<Storage> {
  readonly #ctx: Context;
  readonly #jobs: readonly Job[];
  readonly #rows: DevicePcfSet;
  readonly #cols: DevicePcfSet;
  readonly #op: PcfOp;
  readonly #skip: TriangleSkipMode;
  readonly #dtype: FloatDType;
  readonly #upper: number;

  constructor(ctx: Context, jobs: readonly Job[], rows: DevicePcfSet, cols: DevicePcfSet, op: PcfOp, skip: TriangleSkipMode, dtype: FloatDType, inputDtype: FloatDType) {
    this.#ctx = ctx;
    this.#jobs = jobs;
    this.#rows = rows;
    this.#cols = cols;
    this.#op = op;
    this.#skip = skip;
    this.#dtype = dtype;
    this.#upper = integrationLimit(inputDtype);
  }

  initStorage(device: number, scheduler: BlockScheduler): Storage {
    const job = this.#jobs[device]!;
    return DeviceStorage.allocate(this.#ctx, {
      bytes: Math.max(1, scheduler.maxBlockElements) * (this.#dtype === 'float32' ? 4 : 8),
      host: (ptr) => this.#ctx.hostView(ptr, this.#dtype),
      build: (rows) => job.buildMap('pcf_block', rows).setBatchSize(1).setLocalityMode(LocalityMode.SpreadMode),
    });
  }

  outputBuffer(storage: Storage, slot: BufferSlot): FloatArray {
    return storage.outputBuffer(slot);
  }

  async execBlock(storage: Storage, block: BlockInfo, slot: BufferSlot): Promise<void> {
    const map = storage.launch(block.rowCount);
    const params: BlockParams = {
      rowFirst: block.rowFirst,
      colFirst: block.colFirst,
      colCount: block.colCount,
      op: this.#op.kind === 'l2inner' ? 1 : 0,
      p: this.#op.kind === 'lp' ? this.#op.p : 1,
      skip: SKIP_CODE[this.#skip],
      upper: this.#upper,
    };
    const out = new NDArray(storage.out[slot], this.#dtype, [storage.host[slot].length]);
    const r = this.#rows;
    const c = this.#cols;
    await map.execute(r.times, r.values, r.offsets, c.times, c.values, c.offsets, out, params as unknown as Record<string, number>);
    await map.synchronize();
  }

  disposeStorage(storage: Storage): void {
    storage.dispose();
  }
}

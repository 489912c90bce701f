// The blocks' modules one by one, not their index: the index also holds the file sinks, which a browser bundle must leave out.
import { DeviceStorage } from '../blocks/deviceStorage.js';
import type { BlockInfo, BlockLayout, BlockOp, BlockScheduler, BufferSlot, FloatArray, FloatDType, TriangleSkipMode } from '../blocks/index.js';
import type { Context } from '../pxl/context.js';
import type { DevicePtr } from '../pxl/devicePtr.js';
import type { Job } from '../pxl/job.js';
import type { KernelMap } from '../pxl/kernelMap.js';
import { LocalityMode } from '../pxl/launchPlan.js';
import { NDArray } from '../pxl/ndarray.js';
import { SKIP_CODE, SKIP_RULES, type BlockParams } from './blockKernels.js';
import { checkLaunch } from './blockLaunch.js';
import type { DevicePcfSet } from './devicePcfSet.js';
import type { PcfOp } from './integrate.js';
import { integrationLimit } from './pcf.js';
import type { PcfWorkspace } from './pcfWorkspace.js';

/** Per device Job: two output buffers in device memory, the host's views of them, and the Maps by block row count. */
type Storage = DeviceStorage<DevicePtr, FloatArray, KernelMap>;

/**
 * The PCF BlockOp on pxl's CPU cores: each device is a Job; a block is one Map launch of
 * `pcf_block` with one task per block row, dealt round-robin (SpreadMode) so the short rows of a
 * diagonal block do not all land on one core. Input sets live in shared device memory, so
 * "uploading" a block's subset is free: the kernel indexes the whole set. Results go to two
 * device buffers per Job that the host reads without a copy. Buffers and Maps come from the
 * Context's workspace and go back to it, so the next call reuses them (and each core its bound
 * arguments) instead of allocating and binding afresh.
 *
 * For a writer that takes column-major blocks (a DistanceMatrix), pdist's blocks are computed
 * transposed: a task is a block column, PCF j against the block's rows i > j, the same distances
 * bit for bit (every operation is symmetric in its two PCFs, step by step), so the host moves each
 * column as one run instead of transposing the block.
 */
export class PcfBlockOp implements BlockOp<Storage> {
  readonly #ctx: Context;
  readonly #workspace: PcfWorkspace;
  readonly #jobs: readonly Job[];
  readonly #rows: DevicePcfSet;
  readonly #cols: DevicePcfSet;
  readonly #op: PcfOp;
  readonly #skip: TriangleSkipMode;
  readonly #dtype: FloatDType;
  readonly #upper: number;
  readonly #layout: BlockLayout;

  /**
   * @param layout `'columns'` only for pdist (rows and cols one set, skip `lowerTriangleSkipDiag`)
   *   and a result writer with `writeColumns`.
   */
  constructor(ctx: Context, workspace: PcfWorkspace, jobs: readonly Job[], rows: DevicePcfSet, cols: DevicePcfSet, op: PcfOp, skip: TriangleSkipMode, dtype: FloatDType, inputDtype: FloatDType, layout: BlockLayout = 'rows') {
    this.#ctx = ctx;
    this.#workspace = workspace;
    this.#jobs = jobs;
    this.#rows = rows;
    this.#cols = cols;
    this.#op = op;
    this.#skip = skip;
    this.#dtype = dtype;
    this.#upper = integrationLimit(inputDtype);
    this.#layout = layout;
  }

  outputLayout(): BlockLayout {
    return this.#layout;
  }

  initStorage(device: number, scheduler: BlockScheduler): Storage {
    const job = this.#jobs[device]!;
    const ws = this.#workspace;
    return DeviceStorage.allocate(ws.buffers, {
      bytes: Math.max(1, scheduler.maxBlockElements) * (this.#dtype === 'float32' ? 4 : 8),
      host: (ptr) => this.#ctx.hostView(ptr, this.#dtype),
      build: (rows) => ws.takeMap(job, 'pcf_block', rows, () => job.buildMap('pcf_block', rows).setBatchSize(1).setLocalityMode(LocalityMode.SpreadMode)),
      release: (map) => ws.giveMap(job, map),
    });
  }

  outputBuffer(storage: Storage, slot: BufferSlot): FloatArray {
    return storage.outputBuffer(slot);
  }

  async execBlock(storage: Storage, block: BlockInfo, slot: BufferSlot): Promise<void> {
    const columns = this.#layout === 'columns';
    const map = storage.launch(columns ? block.colCount : block.rowCount);
    const params: BlockParams = {
      rowFirst: columns ? block.colFirst : block.rowFirst,
      colFirst: columns ? block.rowFirst : block.colFirst,
      colCount: columns ? block.rowCount : block.colCount,
      op: this.#op.kind === 'l2inner' ? 1 : 0,
      p: this.#op.kind === 'lp' ? this.#op.p : 1,
      skip: columns ? SKIP_RULES.indexOf('skipDiagAndBelow') : SKIP_CODE[this.#skip],
      upper: this.#upper,
    };
    const out = new NDArray(storage.out[slot], this.#dtype, [storage.host[slot].length]);
    const [r, c] = columns ? [this.#cols, this.#rows] : [this.#rows, this.#cols];
    const accepted = await map.execute(r.times, r.values, r.offsets, c.times, c.values, c.offsets, out, params as unknown as Record<string, number>);
    await map.synchronize();
    checkLaunch(this.#ctx, map, accepted);
  }

  disposeStorage(storage: Storage): void {
    storage.dispose();
  }
}

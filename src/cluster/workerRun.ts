/**
 * What a worker keeps for one run it takes part in: the run's inputs on its local Context, the
 * PCF BlockOp over its Jobs, and one storage per Job made on first use. Blocks of the run then
 * cost only their computing. The state is made from the first item of the run and checked against
 * every later one (an item of the same run must describe the same schedule).
 */
import { BlockScheduler, type BlockInfo, type BlockOp, type BufferSlot, type TriangleSkipMode } from '../blocks/index.js';
import { UnsupportedError } from '../core/errors.js';
import { uploadPcfSet, type DevicePcfSet } from '../pcf/devicePcfSet.js';
import { L2_INNER, pcfOp } from '../pcf/integrate.js';
import { GpuPcfBlockOp } from '../pcf/gpuBlockOp.js';
import { PcfBlockOp } from '../pcf/pcfBlockOp.js';
import { MaxSquareSide, MaxTaskCount } from '../pxl/launchPlan.js';
import type { PcfWorkspace } from '../pcf/pcfWorkspace.js';
import type { PcfSet } from '../pcf/pcfSet.js';
import type { Context } from '../pxl/context.js';
import type { DevicePtr } from '../pxl/devicePtr.js';
import type { Job } from '../pxl/job.js';
import type { ClusterOpFactory } from './kernelModules.js';
import { packRows } from './packedRows.js';
import type { PcfItemOp, WorkItem } from './protocol.js';


/** The key of an item's schedule and operation: items of one run must agree on it. */
function shapeKey(item: WorkItem): string {
  return JSON.stringify([item.op, item.rows, item.cols, item.nRows, item.nCols, item.mode, item.blockSide]);
}

export class WorkerRun {
  readonly runId: string;
  readonly #key: string;
  readonly #workspace: PcfWorkspace;
  readonly #scheduler: BlockScheduler;
  readonly #op: BlockOp<unknown>;
  readonly #elementBytes: number;
  /** The pairs the op leaves out of each block, which the result does not carry (packedRows.ts). */
  readonly #skip: TriangleSkipMode;
  readonly #uploads: readonly DevicePtr[];
  readonly #storages = new Map<number, unknown>();
  /** The output slot each device used last. */
  readonly #slots = new Map<number, BufferSlot>();
  /** Last time a block of this run was taken, for dropping runs that went quiet. */
  lastUsed = Date.now();
  /** Blocks computing or being sent now: a run dropped meanwhile (its stream deleted) is disposed after them. */
  #active = 0;
  #dropped = false;

  private constructor(item: WorkItem, workspace: PcfWorkspace, scheduler: BlockScheduler, op: BlockOp<unknown>, uploads: readonly DevicePtr[]) {
    this.runId = item.run;
    this.#elementBytes = item.op.dtype === 'float32' ? 4 : 8;
    this.#skip = item.op.name === 'pxl.pcf' ? item.op.skip : 'none';
    this.#key = shapeKey(item);
    this.#workspace = workspace;
    this.#scheduler = scheduler;
    this.#op = op;
    this.#uploads = uploads;
  }

  /**
   * Uploads the inputs of `item`'s run and builds its BlockOp over `jobs`.
   * @throws UnsupportedError when the item's sizes disagree with its inputs.
   */
  static async open(item: WorkItem & { readonly op: PcfItemOp }, rows: PcfSet, cols: PcfSet, ctx: Context, workspace: PcfWorkspace, jobs: readonly Job[], gpu = false): Promise<WorkerRun> {
    if (gpu && item.op.dtype !== 'float32') {
      throw new UnsupportedError('this worker computes on its GPU, in float32 (WebGPU has no float64); run with dtype float32 (--dtype float32), or start workers with --device cpu');
    }
    if (gpu && item.blockSide * item.blockSide > MaxTaskCount) {
      throw new UnsupportedError(`this worker computes on its GPU, where a block is one launch of at most ${MaxTaskCount} pairs; blocks of side ${item.blockSide} are larger (give minBlockSide ${MaxSquareSide} or less)`);
    }
    if (rows.count !== item.nRows || cols.count !== item.nCols) {
      throw new UnsupportedError(`the item describes a ${item.nRows} x ${item.nCols} matrix, but its inputs hold ${rows.count} and ${cols.count} PCFs`);
    }
    if (item.mode === 'lowerTriangle' && item.rows !== item.cols) throw new UnsupportedError('a lower-triangle run needs the same rows and columns');
    const scheduler = new BlockScheduler({ nRows: item.nRows, nCols: item.nCols, mode: item.mode, maxOutputElements: item.blockSide * item.blockSide, nSplitsHint: 1, minBlockSide: item.blockSide });
    const uploads: DevicePtr[] = [];
    try {
      const op = item.op.kind === 'l2inner' ? L2_INNER : pcfOp(item.op.kind === 'l1' ? 1 : item.op.p);
      if (gpu) {
        const rowData = await uploadPcfSet(ctx, rows, 'float32', workspace.buffers);
        uploads.push(...rowData.pointers);
        let colData: DevicePcfSet<'float32'> = rowData;
        if (item.cols !== item.rows) {
          colData = await uploadPcfSet(ctx, cols, 'float32', workspace.buffers);
          uploads.push(...colData.pointers);
        }
        const blockOp = new GpuPcfBlockOp(ctx, workspace, jobs, rowData, colData, op, item.op.skip);
        return new WorkerRun(item, workspace, scheduler, blockOp as BlockOp<unknown>, uploads);
      }
      const rowData = await uploadPcfSet(ctx, rows, rows.dtype, workspace.buffers);
      uploads.push(...rowData.pointers);
      let colData: DevicePcfSet = rowData;
      if (item.cols !== item.rows) {
        colData = await uploadPcfSet(ctx, cols, rows.dtype, workspace.buffers);
        uploads.push(...colData.pointers);
      }
      const blockOp = new PcfBlockOp(ctx, workspace, jobs, rowData, colData, op, item.op.skip, item.op.dtype, rows.dtype);
      return new WorkerRun(item, workspace, scheduler, blockOp as BlockOp<unknown>, uploads);
    } catch (error) {
      for (const ptr of uploads) workspace.buffers.memFree(ptr);
      throw error;
    }
  }

  /** A run of a kernel module's BlockOp, made by `factory` for `devices` devices. */
  static async openModule(item: WorkItem, factory: ClusterOpFactory, workspace: PcfWorkspace, devices: number): Promise<WorkerRun> {
    const scheduler = new BlockScheduler({ nRows: item.nRows, nCols: item.nCols, mode: item.mode, maxOutputElements: item.blockSide * item.blockSide, nSplitsHint: 1, minBlockSide: item.blockSide });
    const op = await factory({ params: (item.op as { params?: unknown }).params, nRows: item.nRows, nCols: item.nCols, mode: item.mode, dtype: item.op.dtype, devices });
    return new WorkerRun(item, workspace, scheduler, op, []);
  }

  /**
   * The block `item` names.
   * @throws UnsupportedError for an index outside the schedule or an item that describes another schedule.
   */
  blockOf(item: WorkItem): BlockInfo {
    if (shapeKey(item) !== this.#key) throw new UnsupportedError(`the item of block ${item.block} describes another schedule than the earlier items of run ${item.run}`);
    const block = this.#scheduler.blocks[item.block];
    if (block === undefined) throw new UnsupportedError(`block ${item.block} is not one of the ${this.#scheduler.blocks.length} blocks of run ${item.run}`);
    return block;
  }

  /**
   * Computes `block` on device (Job) `device` and returns its values, packed (packedRows.ts), as
   * little-endian bytes: a view
   * of one of the device's two output slots, which take turns, so the bytes stay valid until the
   * device's next-but-one block starts (a worker delivers one block while it computes the next),
   * and the run keeps its storages until `done` is called (once the bytes are sent).
   * One block at a time per device.
   */
  async compute(block: BlockInfo, device: number): Promise<{ bytes: Uint8Array; done: () => void }> {
    this.lastUsed = Date.now();
    let storage = this.#storages.get(device);
    if (storage === undefined) this.#storages.set(device, (storage = await this.#op.initStorage(device, this.#scheduler)));
    // Blocks travel row-major (packedRows.ts): column-major values would land transposed.
    if (this.#op.outputLayout?.(storage) === 'columns') {
      throw new UnsupportedError("the BlockOp computes its blocks column-major (outputLayout 'columns'), and a cluster worker sends blocks row-major: leave outputLayout out (or return 'rows') for a cluster run");
    }
    const slot: BufferSlot = this.#slots.get(device) === 0 ? 1 : 0;
    this.#slots.set(device, slot);
    const out = this.#op.outputBuffer(storage, slot);
    const n = block.rowCount * block.colCount;
    if (out.length < n || out.BYTES_PER_ELEMENT !== this.#elementBytes) {
      throw new UnsupportedError(`the BlockOp's output buffer is ${out.length} values of ${out.BYTES_PER_ELEMENT} bytes; block ${block.index} needs ${n} of ${this.#elementBytes}`);
    }
    this.#active++;
    let finished = false;
    const done = (): void => {
      if (finished) return;
      finished = true;
      if (--this.#active === 0 && this.#dropped) this.#release();
    };
    try {
      out.fill(0, 0, n);
      await this.#op.execBlock(storage, block, slot);
    } catch (error) {
      done();
      throw error;
    }
    const packed = packRows(out, this.#skip, block);
    return { bytes: new Uint8Array(out.buffer, out.byteOffset, packed * out.BYTES_PER_ELEMENT), done };
  }

  /** Gives back the storages and uploads, at once or after the blocks computing now. */
  dispose(): void {
    this.#dropped = true;
    if (this.#active === 0) this.#release();
  }

  #release(): void {
    for (const storage of this.#storages.values()) void Promise.resolve(this.#op.disposeStorage?.(storage)).catch(() => undefined);
    this.#storages.clear();
    for (const ptr of this.#uploads) this.#workspace.buffers.memFree(ptr);
  }
}

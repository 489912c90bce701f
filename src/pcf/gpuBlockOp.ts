// The blocks' modules one by one, not their index: the index also holds the file sinks, which a browser bundle must leave out.
import { DeviceStorage } from '../blocks/deviceStorage.js';
import { maxOutputElementsFor } from '../blocks/outputBudget.js';
import type { BlockInfo, BlockLayout, BlockOp, BlockScheduler, BufferSlot, TriangleSkipMode } from '../blocks/index.js';
import type { Context } from '../pxl/context.js';
import type { DevicePtr } from '../pxl/devicePtr.js';
import type { Job } from '../pxl/job.js';
import type { KernelMap } from '../pxl/kernelMap.js';
import { MaxTaskCount } from '../pxl/launchPlan.js';
import { NDArray } from '../pxl/ndarray.js';
import { SKIP_CODE } from './blockKernels.js';
import { checkLaunch } from './blockLaunch.js';
import type { DevicePcfSet } from './devicePcfSet.js';
import type { PcfOp } from './integrate.js';
import { MAX_MULTIPLY_P } from './integrate.js';
import { FLOAT32_MAX } from './pcf.js';
import type { PcfWorkspace } from './pcfWorkspace.js';
import type { GpuBlockParams, GpuIntegrand } from './wgslBlockKernels.js';
import { GPU_LP_MAX_P } from './wgslLpRange.js';

/**
 * The PCF BlockOp on a GPU (a webgpu Context): a block is one launch of the `pcf_block_*` kernel
 * of the operation (wgslBlockKernels.ts) with one task per pair, in float32 (WGSL has no float64;
 * Lp pairs whose float32 sum lost range are rescaled on the GPU, see wgslLpRange.ts). Input sets are copied to GPU memory once as
 * float32 times and values and uint32 offsets; each device Job has two output buffers in GPU memory
 * and two host buffers the results are read back into, so the pipeline scatters block N on the host
 * while the GPU computes block N + 1.
 */

/**
 * Output scalars one GPU block may hold: a launch has at most MaxTaskCount tasks (one per pair),
 * and the outputs may take half of 80% of the free GPU memory, as on CPU cores. MaxTaskCount
 * float32 scalars (4 MiB) fit in one storage binding on every WebGPU device.
 */
export function gpuOutputBudget(availableBytes: number): number {
  return Math.max(1, Math.min(MaxTaskCount, maxOutputElementsFor(availableBytes, 4)));
}

/** Per device Job: two output buffers in GPU memory, the host arrays they are read back into, and the Maps by pair count. */
type Storage = DeviceStorage<DevicePtr, Float32Array, KernelMap>;

/**
 * The kernel specialised for an operation, chosen as integrateRow chooses its pair kernel, and the
 * p it runs with: `op.p`, except that p above {@link GPU_LP_MAX_P} runs as that bound (the same
 * float32 distance to within one ulp, and a p that stays finite in float32).
 *
 * @example gpuKernelFor(pcfOp(2.5)) // { kernel: 'pcf_block_lp_real', p: 2.5 }
 */
export function gpuKernelFor(op: PcfOp): { kernel: `pcf_block_${GpuIntegrand}`; p: number } {
  if (op.kind === 'l1' || (op.kind === 'lp' && op.p === 1)) return { kernel: 'pcf_block_l1', p: 1 };
  if (op.kind === 'l2inner') return { kernel: 'pcf_block_l2inner', p: 1 };
  if (op.p === 2) return { kernel: 'pcf_block_l2', p: 2 };
  if (Number.isInteger(op.p) && op.p <= MAX_MULTIPLY_P) return { kernel: 'pcf_block_lp_int', p: op.p };
  return { kernel: 'pcf_block_lp_real', p: Math.min(op.p, GPU_LP_MAX_P) };
}

export class GpuPcfBlockOp implements BlockOp<Storage> {
  readonly #ctx: Context;
  readonly #workspace: PcfWorkspace;
  readonly #jobs: readonly Job[];
  readonly #rows: DevicePcfSet<'float32'>;
  readonly #cols: DevicePcfSet<'float32'>;
  readonly #kernel: { kernel: string; p: number };
  readonly #skip: number;
  readonly #layout: BlockLayout;
  readonly #batchElements: number;

  /**
   * @param layout how blocks lie in the output buffers: `'columns'` only for a result writer with `writeColumns`.
   * @param batchElements pairs one launch may hold when the pipeline hands it several blocks as one
   *   (at most MaxTaskCount); 0: one block per launch.
   */
  constructor(ctx: Context, workspace: PcfWorkspace, jobs: readonly Job[], rows: DevicePcfSet<'float32'>, cols: DevicePcfSet<'float32'>, op: PcfOp, skip: TriangleSkipMode, layout: BlockLayout = 'rows', batchElements = 0) {
    this.#ctx = ctx;
    this.#workspace = workspace;
    this.#jobs = jobs;
    this.#rows = rows;
    this.#cols = cols;
    this.#kernel = gpuKernelFor(op);
    this.#skip = SKIP_CODE[skip];
    this.#layout = layout;
    this.#batchElements = Math.min(MaxTaskCount, batchElements);
  }

  initStorage(device: number, scheduler: BlockScheduler): Storage {
    const elements = Math.max(1, scheduler.maxBlockElements, this.#batchElements);
    const job = this.#jobs[device]!;
    const ws = this.#workspace;
    const kernel = this.#kernel.kernel;
    return DeviceStorage.allocate(ws.buffers, {
      bytes: elements * 4,
      host: () => new Float32Array(elements),
      // Batches of 1: every pair is one invocation, so the GPU sees as many threads as pairs.
      build: (pairs) => ws.takeMap(job, kernel, pairs, () => job.buildMap(kernel, pairs).setBatchSize(1)),
      release: (map) => ws.giveMap(job, map),
    });
  }

  outputBuffer(storage: Storage, slot: BufferSlot): Float32Array {
    return storage.outputBuffer(slot);
  }

  outputLayout(): BlockLayout {
    return this.#layout;
  }

  batchElements(): number {
    return this.#batchElements;
  }

  async execBlock(storage: Storage, block: BlockInfo, slot: BufferSlot): Promise<void> {
    const pairs = block.rowCount * block.colCount;
    const map = storage.launch(pairs);
    const params: GpuBlockParams = {
      rowFirst: block.rowFirst, colFirst: block.colFirst, rowCount: block.rowCount, colCount: block.colCount,
      columns: this.#layout === 'columns' ? 1 : 0, p: this.#kernel.p, skip: this.#skip, upper: FLOAT32_MAX,
    };
    const r = this.#rows;
    const c = this.#cols;
    const out = new NDArray(storage.out[slot], 'float32', [pairs]);
    const accepted = await map.execute(r.times, r.values, r.offsets, c.times, c.values, c.offsets, out, params as unknown as Record<string, number>);
    await map.synchronize();
    checkLaunch(this.#ctx, map, accepted);
    await this.#ctx.copyFromDevice(storage.host[slot].subarray(0, pairs), storage.out[slot]);
  }

  disposeStorage(storage: Storage): void {
    storage.dispose();
  }
}

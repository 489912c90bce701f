/**
 * How one pairwise call runs: on a cluster, or on its devices here (the Contexts and Jobs its
 * options name, or the default CPU Context and a GPU opened for the call). It cuts the result into
 * blocks sized for those devices and the memory budget, puts the inputs in each Context's device
 * memory, loads the block kernels, and runs the block pipeline into the call's result writer.
 */
import { BlockScheduler } from '../blocks/blockScheduler.js';
import { maxOutputElementsFor } from '../blocks/outputBudget.js';
import { MultiDeviceBlockOp } from '../blocks/multiDeviceBlockOp.js';
import { runBlockPipeline } from '../blocks/blockPipeline.js';
import type { BlockLayout, BlockMode, BlockOp, FloatDType, ResultWriter, TriangleSkipMode } from '../blocks/index.js';
import { CancelledError, OptionError } from '../core/errors.js';
import { MaxSquareSide, MaxTaskCount } from '../pxl/launchPlan.js';
import { createContext, type Context } from '../pxl/context.js';
import type { Job } from '../pxl/job.js';
import type { DevicePtr } from '../pxl/devicePtr.js';
import { BLOCK_KERNELS_URL, WGSL_BLOCK_KERNELS_URL } from './blockKernelUrls.js';
import type { PcfOp } from './integrate.js';
import type { DeviceKind, DevicePlan } from './devicePlan.js';
import { isDestroyed } from './contextState.js';
import { defaultContext } from './defaultContext.js';
import { uploadPcfSet, type DevicePcfSet } from './devicePcfSet.js';
import { gpuKernelFor, gpuOutputBudget, GpuPcfBlockOp } from './gpuBlockOp.js';
import { PcfBlockOp } from './pcfBlockOp.js';
import { PcfWorkspace } from './pcfWorkspace.js';
import type { PcfSet } from './pcfSet.js';
import { DEFAULT_MEMORY } from './resultFile.js';
import type { NpyFileSink } from '../blocks/npyFileSink.js';
import { runOnCluster } from './clusterHook.js';
import type { PairwiseOptions } from './pairwiseOptions.js';

const CPU_OUTPUT_CAP = 1 << 22;
const DEFAULT_MIN_BLOCK_SIDE = 64;
/**
 * On a GPU a block is one launch with a task per pair: fewer, larger blocks keep it busy. Two
 * splits give blocks of side 724 alone on the GPU; on an H200 (16,000 PCFs of 100 breakpoints,
 * bench/RESULTS.md) those ran 96-104 M pairs/s against 59-74 M at side 362 (eight splits) and
 * 78-88 M at 1,023, where the host's work on a block starts to hold the GPU up.
 */
const GPU_SPLITS = 2;
const GPU_MIN_BLOCK_SIDE = 256;
/** Block side floor for a result streamed to a file: rows of 8 KiB per write in float64. */
const FILE_MIN_BLOCK_SIDE = 1024;

/**
 * How GPU blocks lie in their buffers, and how many pairs a launch of several may hold: for a
 * writer that takes column-major blocks (a DistanceMatrix), that layout, whose blocks side by
 * side in a row band are contiguous, so a launch takes as many as the budgets allow (blocks cut
 * for many CPU cores are small for a GPU); else row-major blocks, one a launch.
 */
function gpuLayout(writer: ResultWriter, ctx: Context, memoryCap: number, maxOutputElements: number | undefined): [BlockLayout, number] {
  if (writer.writeColumns === undefined) return ['rows', 0];
  return ['columns', Math.min(gpuOutputBudget(ctx.availableMemSize), memoryCap, maxOutputElements ?? Infinity)];
}

export function resultDtype(set: PcfSet, options: PairwiseOptions): FloatDType {
  return options.dtype ?? set.dtype;
}

/** The operation a schedule belongs to, for the cluster's messages. */
function fnNameOf(mode: BlockMode, skip: TriangleSkipMode): 'pdist' | 'cdist' | 'l2Kernel' {
  if (mode === 'full') return 'cdist';
  return skip === 'lowerTriangle' ? 'l2Kernel' : 'pdist';
}

/** One Context taking part in a run, with the Jobs that are its devices. */
interface ContextRun {
  readonly kind: DeviceKind;
  readonly ctx: Context;
  /** A GPU Context opened for this call (destroyed after it). */
  readonly own: boolean;
  readonly workspace: PcfWorkspace;
  readonly jobs: Job[];
  /** Whether this call uses the Context's shared Jobs (and gives them back after it). */
  shared: boolean;
  /** Buffers of the uploaded sets, from the workspace's pool. */
  readonly uploads: DevicePtr[];
  /** The sets' own shared memory the devices read in place (uploadPcfSet), given back with ctx.memFree. */
  readonly adopted: DevicePtr[];
  op?: BlockOp<unknown>;
}

export async function runPairwise(rows: PcfSet, cols: PcfSet, op: PcfOp, mode: BlockMode, skip: TriangleSkipMode, writer: ResultWriter, plan: DevicePlan, options: PairwiseOptions, sink?: NpyFileSink): Promise<void> {
  const signal = options.signal;
  if (signal?.aborted === true) throw new CancelledError('the pairwise computation was cancelled before it started', { cause: signal.reason });
  if (rows.count === 0 || cols.count === 0 || (mode === 'lowerTriangle' && skip === 'lowerTriangleSkipDiag' && rows.count < 2)) return;
  if (options.cluster !== undefined) {
    const { onProgress, maxOutputElements, minBlockSide } = options;
    const dtype = resultDtype(rows, options);
    return runOnCluster({ fnName: fnNameOf(mode, skip), rows, cols, op, mode, skip, dtype, writer, sink, cluster: options.cluster, signal, onProgress, maxOutputElements, minBlockSide });
  }

  const runs = new Map<Context | DeviceKind, ContextRun>();
  /** The devices in order: which Context runs each, and its Job there. */
  const slots: { run: ContextRun; job: Job }[] = [];
  try {
    for (const entry of plan.entries) {
      const key = entry.context ?? entry.kind;
      let r = runs.get(key);
      if (r === undefined) {
        const own = entry.context === undefined && entry.kind === 'gpu';
        const ctx = entry.context ?? (own ? await createContext({ backend: 'webgpu' }) : await defaultContext());
        r = { kind: entry.kind, ctx, own, workspace: PcfWorkspace.of(ctx), jobs: [], shared: false, uploads: [], adopted: [] };
        runs.set(key, r);
      }
      if (entry.job !== undefined) {
        if (r.jobs.includes(entry.job)) continue;
        r.jobs.push(entry.job);
        slots.push({ run: r, job: entry.job });
        continue;
      }
      // Listed beside Jobs of its own that hold every Sub, a Context has no device to add: waiting
      // for a free Sub would wait for this very call to end.
      if (r.workspace.mustWait && plan.entries.some((e) => e.job !== undefined && e.context === r.ctx)) continue;
      const jobs = await r.workspace.acquireJobs(entry.kind === 'gpu' ? WGSL_BLOCK_KERNELS_URL : BLOCK_KERNELS_URL, signal);
      r.shared = true;
      for (const job of jobs) {
        r.jobs.push(job);
        slots.push({ run: r, job });
      }
    }

    const dtype = resultDtype(rows, options);
    const bytes = dtype === 'float32' ? 4 : 8;
    const budgets = [...runs.values()].map((r) => (r.kind === 'gpu' ? gpuOutputBudget(r.ctx.availableMemSize) : Math.max(1, Math.min(CPU_OUTPUT_CAP, maxOutputElementsFor(r.ctx.availableMemSize, bytes)))));
    // The memory budget: half for the two result buffers of every device, half for writes in flight.
    const memoryCap = Math.max(1, Math.floor((options.memory ?? DEFAULT_MEMORY) / 2 / (slots.length * 2 * bytes)));
    budgets.push(memoryCap);
    // A file takes one write per block row (twice for a square one): larger blocks, fewer writes.
    // Not so large, though, that fewer than about 4 bands per device are left to balance the load.
    // With a GPU among the devices, no larger than one launch holds.
    const fileSide = sink === undefined ? 0 : Math.min(plan.gpu ? MaxSquareSide : FILE_MIN_BLOCK_SIDE, Math.floor(Math.sqrt(memoryCap)), Math.floor(Math.max(rows.count, cols.count) / (4 * slots.length)));
    // A resumed file must be cut into the blocks its journal counts: the same side, whatever the budget is now.
    const side = sink?.resumed?.header.blockSide;
    const scheduler = new BlockScheduler({
      nRows: rows.count,
      nCols: cols.count,
      mode,
      maxOutputElements: side !== undefined ? side * side : (options.maxOutputElements ?? Math.min(...budgets)),
      nSplitsHint: side !== undefined ? 1 : (options.nSplitsHint ?? slots.reduce((n, s) => n + (s.run.kind === 'gpu' ? GPU_SPLITS : 32), 0)),
      minBlockSide: side ?? options.minBlockSide ?? Math.max(fileSide, plan.gpu ? GPU_MIN_BLOCK_SIDE : DEFAULT_MIN_BLOCK_SIDE),
    });
    if (plan.gpu && scheduler.maxBlockElements > MaxTaskCount) {
      const why = side !== undefined
        ? `the partial file being resumed was cut into blocks of side ${side} by a run without the GPU: resume it without the GPU (device 'cpu'), or start it again without resume`
        : `lower maxOutputElements or minBlockSide (at most ${MaxSquareSide})`;
      throw new OptionError(`on the GPU a block is one launch of at most ${MaxTaskCount} pairs, but this run's blocks hold ${scheduler.maxBlockElements}: ${why}`);
    }
    const blocks = sink === undefined ? undefined : await sink.begin(scheduler);

    for (const r of runs.values()) {
      const gpu = r.kind === 'gpu';
      const kernel = gpu ? gpuKernelFor(op).kernel : 'pcf_block';
      const mod = await r.workspace.module(gpu ? WGSL_BLOCK_KERNELS_URL : BLOCK_KERNELS_URL);
      for (const job of r.jobs) if (!job.kernelNames.includes(kernel)) job.load(mod);
      // CPU cores compute a float32 set in float32 too (float32 row kernels), reading it as stored.
      const deviceDtype = gpu ? 'float32' : rows.dtype;
      const rowData = await uploadPcfSet(r.ctx, rows, deviceDtype, r.workspace.buffers, true);
      r.uploads.push(...rowData.pointers);
      r.adopted.push(...rowData.adopted);
      const colData = cols === rows ? rowData : await uploadPcfSet(r.ctx, cols, deviceDtype, r.workspace.buffers, true);
      if (colData !== rowData) {
        r.uploads.push(...colData.pointers);
        r.adopted.push(...colData.adopted);
      }
      r.op = gpu
        ? new GpuPcfBlockOp(r.ctx, r.workspace, r.jobs, rowData as DevicePcfSet<'float32'>, colData as DevicePcfSet<'float32'>, op, skip, ...gpuLayout(writer, r.ctx, memoryCap, options.maxOutputElements))
        : new PcfBlockOp(r.ctx, r.workspace, r.jobs, rowData, colData, op, skip, dtype, rows.dtype, writer.writeColumns !== undefined && cols === rows && skip === 'lowerTriangleSkipDiag' ? 'columns' : 'rows');
    }
    const blockOp = new MultiDeviceBlockOp(slots.map((s) => ({ op: s.run.op!, device: s.run.jobs.indexOf(s.job) })));
    await runBlockPipeline(blockOp, scheduler, writer, {
      skip,
      devices: blockOp.devices,
      ...(signal === undefined ? {} : { signal }),
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
      ...(blocks === undefined ? {} : { blocks }),
    });
  } finally {
    for (const r of runs.values()) {
      // A Context destroyed during the call took the call's memory and Jobs with it.
      if (!isDestroyed(r.ctx)) {
        for (const ptr of r.uploads) r.workspace.buffers.memFree(ptr);
        for (const ptr of r.adopted) r.ctx.memFree(ptr);
      }
      if (r.shared) r.workspace.releaseJobs();
      if (r.own) await r.ctx.destroy();
    }
  }
}


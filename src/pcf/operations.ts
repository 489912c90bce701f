// The blocks' modules one by one, not their index: the index also holds the file sinks (node:fs),
// which the browser bundle leaves out; files go through resultFile.ts (a refusal in browsers).
import { BlockScheduler } from '../blocks/blockScheduler.js';
import { DenseTensor } from '../blocks/denseTensor.js';
import { DistanceMatrix } from '../blocks/distanceMatrix.js';
import { SymmetricMatrix } from '../blocks/symmetricMatrix.js';
import { DenseWriter, DistanceMatrixWriter, SymmetricMatrixWriter } from '../blocks/resultWriter.js';
import { maxOutputElementsFor } from '../blocks/outputBudget.js';
import { MultiDeviceBlockOp } from '../blocks/multiDeviceBlockOp.js';
import { runBlockPipeline } from '../blocks/blockPipeline.js';
import type { BlockLayout, BlockMode, BlockOp, BlockProgress, FloatDType, ResultWriter, TriangleSkipMode } from '../blocks/index.js';
import { CancelledError, OptionError } from '../core/errors.js';
import { checkOneOf } from '../core/validate.js';
import { MaxSquareSide, MaxTaskCount } from '../pxl/launchPlan.js';
import { createContext, type Context } from '../pxl/context.js';
import type { Job } from '../pxl/job.js';
import type { DevicePtr } from '../pxl/devicePtr.js';
import { BLOCK_KERNELS_URL, WGSL_BLOCK_KERNELS_URL } from './blockKernelUrls.js';
import { L2_INNER, pcfOp, type PcfOp } from './integrate.js';
import { PCF_DTYPES } from './pcf.js';
import { planDevices, requestedDtype, type DeviceKind, type DevicePlan } from './devicePlan.js';
import { isDestroyed } from './contextState.js';
import { defaultContext } from './defaultContext.js';
import { uploadPcfSet, type DevicePcfSet } from './devicePcfSet.js';
import { gpuKernelFor, gpuOutputBudget, GpuPcfBlockOp } from './gpuBlockOp.js';
import { checkPairwiseOptions } from './pairwiseOptions.js';
import { PcfBlockOp } from './pcfBlockOp.js';
import { PcfWorkspace } from './pcfWorkspace.js';
import { pcfAt, pcfSetFrom, type PcfLike, type PcfSet } from './pcfSet.js';
import { checkResultFitsMemory, computeToFile, DEFAULT_MEMORY, openResultFile, type ResultFile, type ResultFileRequest } from './resultFile.js';
import type { NpyFileSink } from '../blocks/npyFileSink.js';
import { runOnCluster, type ClusterOptions } from './clusterHook.js';

export type { ResultFile } from './resultFile.js';

/** Options every pairwise operation takes. */
export interface PairwiseOptions {
  /** Element type of the computation and the result. Default: the input's dtype (float64 for plain arrays). */
  dtype?: FloatDType;
  /**
   * Context whose MU cores run the blocks. Default: the process's default CPU Context (one Sub per
   * CPU), created by the first call without a context and shared by all of them; its idle cores
   * never keep the process alive.
   *
   * Calls share a Context: without `jobs`, the first call takes every free Sub (a Job of one Sub
   * each) and calls that start while it runs share those Jobs, block by block; the Subs go back
   * when the last of them ends. When no Sub is free, a call waits until a Job gives Subs back
   * (`signal` ends the wait). A Context keeps a few reusable buffers for later calls, at most a
   * sixteenth of its memory and 64 MiB, until it is destroyed.
   */
  context?: Context;
  /**
   * Jobs to spread blocks over, each acting as one device that takes the next block as soon as it
   * is free. Default: the Context's shared Jobs, one per Sub (see `context`). Devices balance load
   * block by block, while the cores of one Job split each block evenly, so one-core devices keep
   * every core busy even when the cores run at different speeds (as shared machines' cores do).
   */
  jobs?: readonly Job[];
  /** Stops the computation between blocks; the promise then rejects with CancelledError and nothing is returned. */
  signal?: AbortSignal;
  /** Called after each block's results are in place. */
  onProgress?: (progress: BlockProgress) => void;
  /** Blocks the output budget is split into. Default 32 per device, as masspcf does per GPU. */
  nSplitsHint?: number;
  /** Output scalars one block may hold. Default: from the Context's free memory, capped at 4 Mi. */
  maxOutputElements?: number;
  /** Floor on the block side, so each launch has rows enough for every core. Default 64 (256 on a GPU). */
  minBlockSide?: number;
  /**
   * Where the blocks run: `'cpu'` (MU cores) or `'gpu'` (WGSL on a WebGPU device, in float32: dtype
   * defaults to float32 there and float64 is refused). Default: the backend of `context` when one
   * is given, else `'cpu'`. Without a context, `'gpu'` opens one for the call.
   */
  device?: 'cpu' | 'gpu';
  /**
   * Several devices at once, of either backend: every device pulls the next block from one shared
   * queue, so faster devices take more blocks. Each entry is
   * - a Job (of a CPU or a webgpu Context): one device;
   * - a Context: one device per Sub it has free (its shared Jobs of one Sub each, as for `context`;
   *   a GPU has one Sub);
   * - `'cpu'` or `'gpu'`: the default CPU Context, or a GPU Context opened for the call, and its
   *   devices as for a Context.
   *
   * `onProgress` reports the `device` that computed each block: its index in this list once every
   * Context entry is expanded in place into its devices.
   *
   * When a GPU takes part the computation is float32: the input is converted to float32, the result
   * is float32, and `dtype: 'float64'` is refused with UnsupportedError. CPU devices and the GPU
   * both sum in float32, the CPU in the walk order of its row kernels and the GPU in its own, so
   * entries agree with a CPU-only or GPU-only run to float32 rounding (a few ulps per rectangle).
   * Replaces `context`, `jobs` and `device`, which cannot be passed with it.
   *
   * @example
   * const gpu = await createContext({ backend: 'webgpu' });
   * const cpu = await createContext({ topology: { subs: 2, clustersPerSub: 1, coresPerCluster: 1 } });
   * const d = await pdist(X, { devices: [cpu.createJob(1), cpu.createJob(1), gpu] });
   */
  devices?: readonly PairwiseDevice[];
  /**
   * Streams the result into this `.npy` file instead of returning it: each finished block is
   * written to its final place, so the matrix is never held in memory, and the call resolves to a
   * {@link ResultFile} describing the file (read it with `numpy.load(path, mmap_mode='r')`). The
   * file appears only when complete (written beside it as `.<name>.<pid>.<hex>.tmp` and renamed);
   * a cancelled or failed call removes its partial file, and partial files of dead processes for
   * the same name are removed (or, with `resume`, continued). Free disk space is checked first.
   */
  out?: string;
  /**
   * With `out`: continue the partial file and journal that a killed process left for `out`,
   * computing only the blocks the journal lacks; the file is byte-identical to an uninterrupted
   * run. A journal written for other inputs or options is refused (InputFormatError). Without a
   * partial file to continue, the run starts afresh. Default false.
   */
  resume?: boolean;
  /**
   * Bytes the run may use beyond its inputs and result: block buffers, and (with `out`) blocks in
   * flight to disk, which is how much a slow disk may lag. Default 512 MiB.
   */
  memory?: number;
  /**
   * Runs the blocks on `pxl worker` processes of other machines through a NATS JetStream server
   * instead of on this process's devices (docs/cluster.md): `{ nats: 'nats://host:4222' }`, with
   * authentication and TLS options as the server needs. The result is the same, byte for byte.
   * Replaces `context`, `jobs`, `device` and `devices`, which cannot be passed with it.
   */
  cluster?: ClusterOptions;
}

/** A device entry of {@link PairwiseOptions.devices}. */
export type PairwiseDevice = Job | Context | 'cpu' | 'gpu';

export interface DistanceOptions extends PairwiseOptions {
  /** Exponent of the Lp distance, >= 1. Integer p (1, 2, 3, ...) runs without a general power function. Default 1. */
  p?: number;
}

/** Options of {@link pdist}. */
export interface PdistOptions extends DistanceOptions {
  /**
   * With `out`: `'square'` writes the full `n x n` matrix, `'condensed'` scipy's condensed vector
   * (`n * (n - 1) / 2` entries, half the size). Default `'square'`.
   */
  layout?: 'square' | 'condensed';
}

/** Options of {@link l2Kernel}: `layout` is `'square'` only (a condensed form would drop the diagonal). */
export interface L2KernelOptions extends PairwiseOptions {
  layout?: 'square';
}

/** Options with `out` set: the call resolves to a {@link ResultFile}. */
export type ToFile = { out: string };

export interface CdistOptions extends DistanceOptions {
  /** `'distance'` (Lp, the default) or `'l2Inner'` (the L2 inner product, as l2Kernel). */
  op?: 'distance' | 'l2Inner';
}

/** PCFs as a validated set, or as a list of PCFs or breakpoint lists. */
export type PcfInput = PcfSet | readonly PcfLike[];

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

/**
 * Pairwise Lp distances between the PCFs of X, condensed in scipy's order (the vector
 * `scipy.spatial.distance.pdist` returns): entry (i, j), i < j, at n*i - i*(i+1)/2 + (j - i - 1).
 *
 * @example
 * const d = await pdist([[[0, 10], [2, 5], [3, 0]], [[0, 5], [6, 0]]]);
 * d.get(1, 0) // 25
 * @throws (rejects) ArgumentError when X is not a PcfSet or an array of PCFs; PcfError for an
 *   invalid PCF; OptionError for bad options (unknown names, wrong types, p < 1); CancelledError
 *   on abort.
 */
export function pdist(X: PcfInput, options: PdistOptions & ToFile): Promise<ResultFile>;
export function pdist(X: PcfInput, options?: PdistOptions): Promise<DistanceMatrix>;
export async function pdist(X: PcfInput, options: PdistOptions = {}): Promise<DistanceMatrix | ResultFile> {
  options = checkPairwiseOptions('pdist', { X }, options, ['p', 'layout']);
  const op = pcfOp(options.p ?? 1);
  const plan = planDevices(options);
  const set = toSet(X, requestedDtype(plan, options));
  const dtype = resultDtype(set, options);
  const run = (writer: ResultWriter, sink?: NpyFileSink) => compute(set, set, op, 'lowerTriangle', 'lowerTriangleSkipDiag', writer, plan, options, sink);
  if (options.out !== undefined) return toFile({ fnName: 'pdist', rows: set, cols: set, op, layout: options.layout ?? 'square', dtype }, options, run);
  checkResultFitsMemory('pdist', set, set, (set.count * (set.count - 1)) / 2, dtype, options.memory ?? DEFAULT_MEMORY);
  const result = new DistanceMatrix(set.count, dtype);
  await run(new DistanceMatrixWriter(result));
  return result;
}

/**
 * The L2 inner-product kernel matrix of X, packed lower triangle with the diagonal: entry (i, j),
 * i >= j, at i(i+1)/2 + j.
 *
 * @example (await l2Kernel([[[0, 4], [3, 0]], [[0, 2], [3, 0]]])).toSquare() // [[48, 24], [24, 12]]
 */
export function l2Kernel(X: PcfInput, options: L2KernelOptions & ToFile): Promise<ResultFile>;
export function l2Kernel(X: PcfInput, options?: L2KernelOptions): Promise<SymmetricMatrix>;
export async function l2Kernel(X: PcfInput, options: L2KernelOptions = {}): Promise<SymmetricMatrix | ResultFile> {
  options = checkPairwiseOptions('l2Kernel', { X }, options, ['layout']);
  const plan = planDevices(options);
  const set = toSet(X, requestedDtype(plan, options));
  const dtype = resultDtype(set, options);
  const run = (writer: ResultWriter, sink?: NpyFileSink) => compute(set, set, L2_INNER, 'lowerTriangle', 'lowerTriangle', writer, plan, options, sink);
  if (options.out !== undefined) return toFile({ fnName: 'l2Kernel', rows: set, cols: set, op: L2_INNER, layout: 'square', dtype }, options, run);
  checkResultFitsMemory('l2Kernel', set, set, (set.count * (set.count + 1)) / 2, dtype, options.memory ?? DEFAULT_MEMORY);
  const result = new SymmetricMatrix(set.count, dtype);
  await run(new SymmetricMatrixWriter(result));
  return result;
}

/**
 * Every pair of X against Y: a dense tensor of shape [...X.shape, ...Y.shape] (multi-dimensional
 * inputs are nested arrays of PCFs, or PcfSets with a shape).
 */
export function cdist(X: PcfInput, Y: PcfInput, options: CdistOptions & ToFile): Promise<ResultFile>;
export function cdist(X: PcfInput, Y: PcfInput, options?: CdistOptions): Promise<DenseTensor>;
export async function cdist(X: PcfInput, Y: PcfInput, options: CdistOptions = {}): Promise<DenseTensor | ResultFile> {
  options = checkPairwiseOptions('cdist', { X, Y }, options, ['p', 'op']);
  const kind = checkOneOf('op', options.op ?? 'distance', ['distance', 'l2Inner']);
  const op = kind === 'l2Inner' ? L2_INNER : pcfOp(options.p ?? 1);
  const plan = planDevices(options);
  const xs = toSet(X, requestedDtype(plan, options));
  const ys = toSet(Y, options.dtype ?? xs.dtype);
  if (xs.dtype !== ys.dtype) throw new OptionError(`X and Y must have the same dtype, got '${xs.dtype}' and '${ys.dtype}'; pass dtype to convert both`);
  const dtype = resultDtype(xs, options);
  const run = (writer: ResultWriter, sink?: NpyFileSink) => compute(xs, ys, op, 'full', 'none', writer, plan, options, sink);
  if (options.out !== undefined) return toFile({ fnName: 'cdist', rows: xs, cols: ys, op, layout: 'dense', dtype }, options, run);
  checkResultFitsMemory('cdist', xs, ys, xs.count * ys.count, dtype, options.memory ?? DEFAULT_MEMORY);
  const result = new DenseTensor([...xs.shape, ...ys.shape], dtype);
  await run(new DenseWriter(result, ys.count));
  return result;
}

/** The `out` path of the three operations: the result streamed into a file through a sink. */
async function toFile(
  request: Omit<ResultFileRequest, 'out' | 'resume' | 'memory'>,
  options: PairwiseOptions,
  run: (writer: ResultWriter, sink: NpyFileSink) => Promise<void>,
): Promise<ResultFile> {
  const out = options.out!;
  const sink = await openResultFile({ ...request, out, resume: options.resume ?? false, memory: options.memory ?? DEFAULT_MEMORY }, options.signal);
  return computeToFile(sink, out, () => run(sink, sink));
}

function resultDtype(set: PcfSet, options: PairwiseOptions): FloatDType {
  return options.dtype ?? set.dtype;
}

/** The input as a PcfSet of the requested dtype (validated; converted when it differs). */
function toSet(input: PcfInput, dtype: FloatDType | undefined): PcfSet {
  if (dtype !== undefined) checkOneOf('dtype', dtype, PCF_DTYPES);
  if (isSet(input)) {
    if (dtype === undefined || dtype === input.dtype) return input;
    return pcfSetFrom(Array.from({ length: input.count }, (_, i) => pcfAt(input, i)), dtype, { shape: input.shape });
  }
  return pcfSetFrom(input, dtype ?? 'float64');
}

function isSet(input: PcfInput): input is PcfSet {
  return !Array.isArray(input) && typeof (input as PcfSet).count === 'number' && (input as PcfSet).offsets instanceof Uint32Array;
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
  readonly uploads: DevicePtr[];
  op?: BlockOp<unknown>;
}

async function compute(rows: PcfSet, cols: PcfSet, op: PcfOp, mode: BlockMode, skip: TriangleSkipMode, writer: ResultWriter, plan: DevicePlan, options: PairwiseOptions, sink?: NpyFileSink): Promise<void> {
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
        r = { kind: entry.kind, ctx, own, workspace: PcfWorkspace.of(ctx), jobs: [], shared: false, uploads: [] };
        runs.set(key, r);
      }
      if (entry.job !== undefined) {
        if (r.jobs.includes(entry.job)) continue;
        r.jobs.push(entry.job);
        slots.push({ run: r, job: entry.job });
        continue;
      }
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
      const rowData = await uploadPcfSet(r.ctx, rows, deviceDtype, r.workspace.buffers);
      r.uploads.push(...rowData.pointers);
      const colData = cols === rows ? rowData : await uploadPcfSet(r.ctx, cols, deviceDtype, r.workspace.buffers);
      if (colData !== rowData) r.uploads.push(...colData.pointers);
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
      if (!isDestroyed(r.ctx)) for (const ptr of r.uploads) r.workspace.buffers.memFree(ptr);
      if (r.shared) r.workspace.releaseJobs();
      if (r.own) await r.ctx.destroy();
    }
  }
}

import {
  BlockScheduler,
  DenseTensor,
  DenseWriter,
  DistanceMatrix,
  DistanceMatrixWriter,
  maxOutputElementsFor,
  MultiDeviceBlockOp,
  runBlockPipeline,
  SymmetricMatrix,
  SymmetricMatrixWriter,
  type BlockMode,
  type BlockOp,
  type BlockProgress,
  type FloatDType,
  type ResultWriter,
  type TriangleSkipMode,
} from '../blocks/index.js';
import { availableParallelism } from 'node:os';
import { CancelledError, OptionError } from '../core/errors.js';
import { checkOneOf } from '../core/validate.js';
import { MaxTaskCount } from '../pxl/launchPlan.js';
import { createContext, type Context } from '../pxl/context.js';
import type { Job } from '../pxl/job.js';
import type { DevicePtr } from '../pxl/devicePtr.js';
import type { KernelModule } from '../pxl/kernelModule.js';
import { L2_INNER, pcfOp, type PcfOp } from './integrate.js';
import { PCF_DTYPES } from './pcf.js';
import { planDevices, requestedDtype, type DeviceKind, type DevicePlan } from './devicePlan.js';
import { uploadPcfSet, type DevicePcfSet } from './devicePcfSet.js';
import { gpuKernelFor, gpuOutputBudget, GpuPcfBlockOp } from './gpuBlockOp.js';
import { checkPairwiseOptions } from './pairwiseOptions.js';
import { PcfBlockOp } from './pcfBlockOp.js';
import { pcfAt, pcfSetFrom, type PcfLike, type PcfSet } from './pcfSet.js';

/** Options every pairwise operation takes. */
export interface PairwiseOptions {
  /** Element type of the computation and the result. Default: the input's dtype (float64 for plain arrays). */
  dtype?: FloatDType;
  /**
   * Context whose MU cores run the blocks. Default: a CPU Context created for this call (one Sub
   * per CPU) and destroyed after it.
   */
  context?: Context;
  /**
   * Jobs to spread blocks over, each acting as one device that takes the next block as soon as it
   * is free. Default: one Job per free Sub of the Context. Devices balance load block by block,
   * while the cores of one Job split each block evenly, so one-core devices keep every core busy
   * even when the cores run at different speeds (as shared machines' cores do).
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
   * - a Context: one device per Sub it has free (a Job of one Sub each, made for the call; a GPU
   *   has one Sub);
   * - `'cpu'` or `'gpu'`: a Context of that kind opened for the call (CPU: one Sub per CPU), and
   *   its devices as for a Context.
   *
   * `onProgress` reports the `device` that computed each block: its index in this list once every
   * Context entry is expanded in place into its devices.
   *
   * When a GPU takes part the computation is float32: the input is converted to float32, the result
   * is float32, and `dtype: 'float64'` is refused with UnsupportedError. CPU devices then integrate
   * those float32 inputs in float64 and round each entry once, while the GPU sums in float32, so
   * entries agree with a CPU-only or GPU-only run to float32 rounding (a few ulps per rectangle).
   * Replaces `context`, `jobs` and `device`, which cannot be passed with it.
   *
   * @example
   * const gpu = await createContext({ backend: 'webgpu' });
   * const cpu = await createContext({ topology: { subs: 2, clustersPerSub: 1, coresPerCluster: 1 } });
   * const d = await pdist(X, { devices: [cpu.createJob(1), cpu.createJob(1), gpu] });
   */
  devices?: readonly PairwiseDevice[];
}

/** A device entry of {@link PairwiseOptions.devices}. */
export type PairwiseDevice = Job | Context | 'cpu' | 'gpu';

export interface DistanceOptions extends PairwiseOptions {
  /** Exponent of the Lp distance, >= 1. Integer p (1, 2, 3, ...) runs without a general power function. Default 1. */
  p?: number;
}

export interface CdistOptions extends DistanceOptions {
  /** `'distance'` (Lp, the default) or `'l2Inner'` (the L2 inner product, as l2Kernel). */
  op?: 'distance' | 'l2Inner';
}

/** PCFs as a validated set, or as a list of PCFs or breakpoint lists. */
export type PcfInput = PcfSet | readonly PcfLike[];

const CPU_OUTPUT_CAP = 1 << 22;
const DEFAULT_MIN_BLOCK_SIDE = 64;
/** On a GPU a block is one launch with a task per pair: fewer, larger blocks keep it busy. */
const GPU_SPLITS = 8;
const GPU_MIN_BLOCK_SIDE = 256;
const moduleOf = new WeakMap<Context, Promise<KernelModule>>();
const kernelsUrl = new URL(import.meta.url.endsWith('.ts') ? './blockKernels.ts' : './blockKernels.js', import.meta.url);
const gpuKernelsUrl = new URL(import.meta.url.endsWith('.ts') ? './wgslBlockKernels.ts' : './wgslBlockKernels.js', import.meta.url);

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
export async function pdist(X: PcfInput, options: DistanceOptions = {}): Promise<DistanceMatrix> {
  options = checkPairwiseOptions('pdist', { X }, options, ['p']);
  const op = pcfOp(options.p ?? 1);
  const plan = planDevices(options);
  const set = toSet(X, requestedDtype(plan, options));
  const result = new DistanceMatrix(set.count, resultDtype(set, options));
  await run(set, set, op, 'lowerTriangle', 'lowerTriangleSkipDiag', new DistanceMatrixWriter(result), plan, options);
  return result;
}

/**
 * The L2 inner-product kernel matrix of X, packed lower triangle with the diagonal: entry (i, j),
 * i >= j, at i(i+1)/2 + j.
 *
 * @example (await l2Kernel([[[0, 4], [3, 0]], [[0, 2], [3, 0]]])).toSquare() // [[48, 24], [24, 12]]
 */
export async function l2Kernel(X: PcfInput, options: PairwiseOptions = {}): Promise<SymmetricMatrix> {
  options = checkPairwiseOptions('l2Kernel', { X }, options, []);
  const plan = planDevices(options);
  const set = toSet(X, requestedDtype(plan, options));
  const result = new SymmetricMatrix(set.count, resultDtype(set, options));
  await run(set, set, L2_INNER, 'lowerTriangle', 'lowerTriangle', new SymmetricMatrixWriter(result), plan, options);
  return result;
}

/**
 * Every pair of X against Y: a dense tensor of shape [...X.shape, ...Y.shape] (multi-dimensional
 * inputs are nested arrays of PCFs, or PcfSets with a shape).
 */
export async function cdist(X: PcfInput, Y: PcfInput, options: CdistOptions = {}): Promise<DenseTensor> {
  options = checkPairwiseOptions('cdist', { X, Y }, options, ['p', 'op']);
  const kind = checkOneOf('op', options.op ?? 'distance', ['distance', 'l2Inner']);
  const op = kind === 'l2Inner' ? L2_INNER : pcfOp(options.p ?? 1);
  const plan = planDevices(options);
  const xs = toSet(X, requestedDtype(plan, options));
  const ys = toSet(Y, options.dtype ?? xs.dtype);
  if (xs.dtype !== ys.dtype) throw new OptionError(`X and Y must have the same dtype, got '${xs.dtype}' and '${ys.dtype}'; pass dtype to convert both`);
  const result = new DenseTensor([...xs.shape, ...ys.shape], resultDtype(xs, options));
  await run(xs, ys, op, 'full', 'none', new DenseWriter(result, ys.count), plan, options);
  return result;
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

/** One Context taking part in a run, with the Jobs that are its devices. */
interface ContextRun {
  readonly kind: DeviceKind;
  readonly ctx: Context;
  /** Opened for this call (destroyed after it). */
  readonly own: boolean;
  readonly jobs: Job[];
  /** Jobs made for this call on a caller's Context (destroyed after it). */
  readonly ownJobs: Job[];
  readonly uploads: { readonly pointers: readonly DevicePtr[] }[];
  op?: BlockOp<unknown>;
}

async function run(rows: PcfSet, cols: PcfSet, op: PcfOp, mode: BlockMode, skip: TriangleSkipMode, writer: ResultWriter, plan: DevicePlan, options: PairwiseOptions): Promise<void> {
  const signal = options.signal;
  if (signal?.aborted === true) throw new CancelledError('the pairwise computation was cancelled before it started', { cause: signal.reason });
  if (rows.count === 0 || cols.count === 0 || (mode === 'lowerTriangle' && skip === 'lowerTriangleSkipDiag' && rows.count < 2)) return;

  const runs = new Map<Context | DeviceKind, ContextRun>();
  /** The devices in order: which Context runs each, and its Job there. */
  const slots: { run: ContextRun; job: Job }[] = [];
  try {
    for (const entry of plan.entries) {
      const key = entry.context ?? entry.kind;
      let r = runs.get(key);
      if (r === undefined) {
        const ctx = entry.context ?? (await createContext(entry.kind === 'gpu' ? { backend: 'webgpu' } : { topology: { subs: availableParallelism(), clustersPerSub: 1, coresPerCluster: 1 } }));
        r = { kind: entry.kind, ctx, own: entry.context === undefined, jobs: [], ownJobs: [], uploads: [] };
        runs.set(key, r);
      }
      if (entry.job !== undefined) {
        if (r.jobs.includes(entry.job)) continue;
        r.jobs.push(entry.job);
        slots.push({ run: r, job: entry.job });
        continue;
      }
      const free = r.ctx.availableSubCount;
      if (free === 0) throw new OptionError(plan.entries.length === 1 ? 'the Context has no free Sub to run on: destroy a Job or pass jobs' : 'a Context in devices has no free Sub to run on: destroy a Job or list its Jobs instead');
      for (let k = 0; k < free; k++) {
        const job = r.ctx.createJob(1);
        r.ownJobs.push(job);
        r.jobs.push(job);
        slots.push({ run: r, job });
      }
    }

    const dtype = resultDtype(rows, options);
    const bytes = dtype === 'float32' ? 4 : 8;
    const budgets = [...runs.values()].map((r) => (r.kind === 'gpu' ? gpuOutputBudget(r.ctx.availableMemSize) : Math.max(1, Math.min(CPU_OUTPUT_CAP, maxOutputElementsFor(r.ctx.availableMemSize, bytes)))));
    const scheduler = new BlockScheduler({
      nRows: rows.count,
      nCols: cols.count,
      mode,
      maxOutputElements: options.maxOutputElements ?? Math.min(...budgets),
      nSplitsHint: options.nSplitsHint ?? slots.reduce((n, s) => n + (s.run.kind === 'gpu' ? GPU_SPLITS : 32), 0),
      minBlockSide: options.minBlockSide ?? (plan.gpu ? GPU_MIN_BLOCK_SIDE : DEFAULT_MIN_BLOCK_SIDE),
    });
    if (plan.gpu && scheduler.maxBlockElements > MaxTaskCount) {
      throw new OptionError(`on the GPU a block is one launch of at most ${MaxTaskCount} pairs, but these options give blocks of ${scheduler.maxBlockElements}: lower maxOutputElements or minBlockSide (at most 1023)`);
    }

    for (const r of runs.values()) {
      const gpu = r.kind === 'gpu';
      const kernel = gpu ? gpuKernelFor(op).kernel : 'pcf_block';
      const mod = await kernelsFor(r.ctx, gpu ? gpuKernelsUrl : kernelsUrl);
      for (const job of r.jobs) if (!job.kernelNames.includes(kernel)) job.load(mod);
      const deviceDtype = gpu ? 'float32' : 'float64';
      const rowData = await uploadPcfSet(r.ctx, rows, deviceDtype);
      r.uploads.push(rowData);
      const colData = cols === rows ? rowData : await uploadPcfSet(r.ctx, cols, deviceDtype);
      if (colData !== rowData) r.uploads.push(colData);
      r.op = gpu
        ? new GpuPcfBlockOp(r.ctx, r.jobs, rowData as DevicePcfSet<'float32'>, colData as DevicePcfSet<'float32'>, op, skip)
        : new PcfBlockOp(r.ctx, r.jobs, rowData as DevicePcfSet<'float64'>, colData as DevicePcfSet<'float64'>, op, skip, dtype, rows.dtype);
    }
    const blockOp = new MultiDeviceBlockOp(slots.map((s) => ({ op: s.run.op!, device: s.run.jobs.indexOf(s.job) })));
    await runBlockPipeline(blockOp, scheduler, writer, {
      skip,
      devices: blockOp.devices,
      ...(signal === undefined ? {} : { signal }),
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
    });
  } finally {
    for (const r of runs.values()) {
      if (r.own) {
        await r.ctx.destroy();
      } else {
        for (const u of r.uploads) for (const ptr of u.pointers) r.ctx.memFree(ptr);
        for (const job of r.ownJobs) r.ctx.destroyJob(job);
      }
    }
  }
}

function kernelsFor(ctx: Context, url: URL): Promise<KernelModule> {
  let mod = moduleOf.get(ctx);
  if (mod === undefined) {
    mod = ctx.createModule(url);
    moduleOf.set(ctx, mod);
    mod.catch(() => moduleOf.delete(ctx));
  }
  return mod;
}

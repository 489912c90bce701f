import {
  BlockScheduler,
  DenseTensor,
  DenseWriter,
  DistanceMatrix,
  DistanceMatrixWriter,
  maxOutputElementsFor,
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
import { CancelledError, OptionError, UnsupportedError } from '../core/errors.js';
import { checkOneOf } from '../core/validate.js';
import { MaxTaskCount } from '../pxl/launchPlan.js';
import { createContext, type Context } from '../pxl/context.js';
import type { Job } from '../pxl/job.js';
import type { DevicePtr } from '../pxl/devicePtr.js';
import type { KernelModule } from '../pxl/kernelModule.js';
import { L2_INNER, pcfOp, type PcfOp } from './integrate.js';
import { PCF_DTYPES } from './pcf.js';
import { gpuOutputBudget, GpuPcfBlockOp, uploadGpuPcfSet } from './gpuBlockOp.js';
import { PcfBlockOp, uploadPcfSet } from './pcfBlockOp.js';
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
}

export interface DistanceOptions extends PairwiseOptions {
  /** Exponent of the Lp distance, >= 1. Integer p (1, 2, 3, ...) runs without a general power function. Default 1. */
  p?: number;
}

export interface CdistOptions extends DistanceOptions {
  /** `'distance'` (Lp, the default) or `'l2Inner'` (the L2 inner product, as l2Kernel). */
  op?: 'distance' | 'l2Inner';
}

type PcfInput = PcfSet | readonly PcfLike[];

const CPU_OUTPUT_CAP = 1 << 22;
const DEFAULT_MIN_BLOCK_SIDE = 64;
/** On a GPU a block is one launch with a task per pair: fewer, larger blocks keep it busy. */
const GPU_SPLITS = 8;
const GPU_MIN_BLOCK_SIDE = 256;
const moduleOf = new WeakMap<Context, Promise<KernelModule>>();
const kernelsUrl = new URL(import.meta.url.endsWith('.ts') ? './blockKernels.ts' : './blockKernels.js', import.meta.url);
const gpuKernelsUrl = new URL(import.meta.url.endsWith('.ts') ? './wgslBlockKernels.ts' : './wgslBlockKernels.js', import.meta.url);

/**
 * Pairwise Lp distances between the PCFs of X: the compressed lower triangle without the diagonal,
 * entry (i, j), i > j, at i(i-1)/2 + j.
 *
 * @example
 * const d = await pdist([[[0, 10], [2, 5], [3, 0]], [[0, 5], [6, 0]]]);
 * d.get(1, 0) // 25
 * @throws (rejects) PcfError for an invalid PCF, OptionError for p < 1, CancelledError on abort.
 */
export async function pdist(X: PcfInput, options: DistanceOptions = {}): Promise<DistanceMatrix> {
  const op = pcfOp(options.p ?? 1);
  const set = toSet(X, requestedDtype(options));
  const result = new DistanceMatrix(set.count, resultDtype(set, options));
  await run(set, set, op, 'lowerTriangle', 'lowerTriangleSkipDiag', new DistanceMatrixWriter(result), options);
  return result;
}

/**
 * The L2 inner-product kernel matrix of X, packed lower triangle with the diagonal: entry (i, j),
 * i >= j, at i(i+1)/2 + j.
 *
 * @example (await l2Kernel([[[0, 4], [3, 0]], [[0, 2], [3, 0]]])).toSquare() // [[48, 24], [24, 12]]
 */
export async function l2Kernel(X: PcfInput, options: PairwiseOptions = {}): Promise<SymmetricMatrix> {
  const set = toSet(X, requestedDtype(options));
  const result = new SymmetricMatrix(set.count, resultDtype(set, options));
  await run(set, set, L2_INNER, 'lowerTriangle', 'lowerTriangle', new SymmetricMatrixWriter(result), options);
  return result;
}

/**
 * Every pair of X against Y: a dense tensor of shape [...X.shape, ...Y.shape] (multi-dimensional
 * inputs are nested arrays of PCFs, or PcfSets with a shape).
 */
export async function cdist(X: PcfInput, Y: PcfInput, options: CdistOptions = {}): Promise<DenseTensor> {
  const kind = checkOneOf('op', options.op ?? 'distance', ['distance', 'l2Inner']);
  const op = kind === 'l2Inner' ? L2_INNER : pcfOp(options.p ?? 1);
  const xs = toSet(X, requestedDtype(options));
  const ys = toSet(Y, options.dtype ?? xs.dtype);
  if (xs.dtype !== ys.dtype) throw new OptionError(`X and Y must have the same dtype, got '${xs.dtype}' and '${ys.dtype}'; pass dtype to convert both`);
  const result = new DenseTensor([...xs.shape, ...ys.shape], resultDtype(xs, options));
  await run(xs, ys, op, 'full', 'none', new DenseWriter(result, ys.count), options);
  return result;
}

function onGpu(options: PairwiseOptions): boolean {
  const device = options.device === undefined ? undefined : checkOneOf('device', options.device, ['cpu', 'gpu']);
  const backend = options.context?.getAttribute('backend');
  if (device !== undefined && backend !== undefined && (device === 'gpu') !== (backend === 'webgpu')) {
    throw new OptionError(`device '${device}' does not match the context, whose backend is '${backend}'; pass a context of that kind or leave device out`);
  }
  return device === 'gpu' || backend === 'webgpu';
}

/** The dtype to convert the input to: the caller's, or float32 on a GPU, which has no float64. */
function requestedDtype(options: PairwiseOptions): FloatDType | undefined {
  if (!onGpu(options)) return options.dtype;
  if (options.dtype === 'float64') {
    throw new UnsupportedError("dtype 'float64' cannot run on the GPU: WGSL has no 64-bit floats; pass dtype: 'float32', or device: 'cpu' for float64");
  }
  return 'float32';
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

async function run(rows: PcfSet, cols: PcfSet, op: PcfOp, mode: BlockMode, skip: TriangleSkipMode, writer: ResultWriter, options: PairwiseOptions): Promise<void> {
  const signal = options.signal;
  if (signal?.aborted === true) throw new CancelledError('the pairwise computation was cancelled before it started', { cause: signal.reason });
  if (rows.count === 0 || cols.count === 0 || (mode === 'lowerTriangle' && skip === 'lowerTriangleSkipDiag' && rows.count < 2)) return;

  const gpu = onGpu(options);
  const ctx = options.context ?? (await createContext(gpu ? { backend: 'webgpu' } : { topology: { subs: availableParallelism(), clustersPerSub: 1, coresPerCluster: 1 } }));
  const ownJobs = options.jobs === undefined ? Array.from({ length: ctx.availableSubCount }, () => ctx.createJob(1)) : [];
  const jobs = options.jobs ?? ownJobs;
  if (jobs.length === 0) throw new OptionError(options.jobs === undefined ? 'the Context has no free Sub to run on: destroy a Job or pass jobs' : 'jobs must list at least one Job');
  const uploads: { readonly pointers: readonly DevicePtr[] }[] = [];
  try {
    const kernel = gpu ? 'pcf_block_l1' : 'pcf_block';
    const mod = await kernelsFor(ctx, gpu ? gpuKernelsUrl : kernelsUrl);
    for (const job of jobs) if (!job.kernelNames.includes(kernel)) job.load(mod);
    const dtype = resultDtype(rows, options);
    const bytes = dtype === 'float32' ? 4 : 8;
    const scheduler = new BlockScheduler({
      nRows: rows.count,
      nCols: cols.count,
      mode,
      maxOutputElements: options.maxOutputElements ?? (gpu ? gpuOutputBudget(ctx.availableMemSize) : Math.max(1, Math.min(CPU_OUTPUT_CAP, maxOutputElementsFor(ctx.availableMemSize, bytes)))),
      nSplitsHint: options.nSplitsHint ?? (gpu ? GPU_SPLITS : 32) * jobs.length,
      minBlockSide: options.minBlockSide ?? (gpu ? GPU_MIN_BLOCK_SIDE : DEFAULT_MIN_BLOCK_SIDE),
    });
    if (gpu && scheduler.maxBlockElements > MaxTaskCount) {
      throw new OptionError(`on the GPU a block is one launch of at most ${MaxTaskCount} pairs, but these options give blocks of ${scheduler.maxBlockElements}: lower maxOutputElements or minBlockSide (at most 1023)`);
    }
    const upload = gpu ? uploadGpuPcfSet : uploadPcfSet;
    const r = await upload(ctx, rows);
    uploads.push(r);
    const c = cols === rows ? r : await upload(ctx, cols);
    if (c !== r) uploads.push(c);
    const blockOp: BlockOp<unknown> = gpu
      ? new GpuPcfBlockOp(ctx, jobs, r as Awaited<ReturnType<typeof uploadGpuPcfSet>>, c as Awaited<ReturnType<typeof uploadGpuPcfSet>>, op, skip)
      : new PcfBlockOp(ctx, jobs, r as Awaited<ReturnType<typeof uploadPcfSet>>, c as Awaited<ReturnType<typeof uploadPcfSet>>, op, skip, dtype, rows.dtype);
    await runBlockPipeline(blockOp, scheduler, writer, {
      skip,
      devices: jobs.length,
      ...(signal === undefined ? {} : { signal }),
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
    });
  } finally {
    if (options.context === undefined) {
      await ctx.destroy();
    } else {
      for (const u of uploads) for (const ptr of u.pointers) ctx.memFree(ptr);
      for (const job of ownJobs) ctx.destroyJob(job);
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

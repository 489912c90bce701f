/**
 * The options every pairwise operation (pdist, cdist, l2Kernel) takes, and their checks, run once
 * at the top of each call before any Context is opened or any block runs: the PCF inputs must be PCF collections, the options an
 * object of known keys whose values have the right types. A bad callback or signal is refused here,
 * not discovered by the block pipeline after work has started.
 */
import type { BlockProgress, FloatDType } from '../blocks/index.js';
import { ArgumentError, OptionError } from '../core/errors.js';
import { checkAbortSignal, checkBoolean, checkFunction, checkInteger, checkOneOf, checkOptionsObject, describe } from '../core/validate.js';
import { Context } from '../pxl/context.js';
import { Job } from '../pxl/job.js';
import type { ClusterOptions } from './clusterHook.js';
import { pcfOp } from './integrate.js';
import { PCF_DTYPES } from './pcf.js';
import { checkPcfSet, isPcfSetLike } from './pcfSet.js';

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
  /** Blocks the output budget is split into. Default 32 per CPU device, as masspcf does per GPU, and 2 per GPU (fewer, larger launches). */
  nSplitsHint?: number;
  /**
   * Output scalars one block may hold. Default: the least of each device's budget (on CPU cores
   * from the Context's free memory, capped at 4 Mi) and the share of `memory` one block buffer gets.
   */
  maxOutputElements?: number;
  /**
   * Floor on the block side, so each launch has rows enough for every core. Default 64, 256 when a
   * GPU takes part; with `out`, up to 1,024 (fewer, larger writes), while about 4 bands per device remain.
   */
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
   *   a GPU has one Sub); none when it has no Sub free and Jobs of it are listed here too, which
   *   then run the call instead of waiting, perhaps for themselves, for a Sub;
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

/** The options every pairwise operation takes (the keys of `PairwiseOptions`). */
export const PAIRWISE_OPTION_KEYS = [
  'dtype', 'context', 'jobs', 'signal', 'onProgress', 'nSplitsHint', 'maxOutputElements', 'minBlockSide', 'device', 'devices',
  'out', 'resume', 'memory', 'cluster',
] as const;

/** Smallest `memory` budget: below it a block would hold a handful of pairs. */
const MIN_MEMORY = 2 ** 20;

/** Words users reach for, and the option that does what they mean. */
const ALIASES: Readonly<Record<string, string>> = {
  threads: 'devices', workers: 'devices', ctx: 'context', abortSignal: 'signal', progress: 'onProgress', onprogress: 'onProgress',
  exponent: 'p', backend: 'device', output: 'out', file: 'out', outFile: 'out', memoryLimit: 'memory', budget: 'memory',
};

/** Options as the checks read them; the operation's own interface types them for callers. */
interface LooseOptions {
  readonly [key: string]: unknown;
}

/**
 * Checks the inputs and options of one pairwise call and returns the options (`{}` when left out).
 *
 * @param fnName the public function, named by every message (`'pdist'`).
 * @param inputs the PCF arguments by name, in order: `{ X }`, or `{ X, Y }` for cdist.
 * @param options what the caller passed as options.
 * @param extraKeys option keys of this function beyond {@link PAIRWISE_OPTION_KEYS} (`['p']`).
 * @throws ArgumentError for an input that is not a PcfSet or an array of PCFs (with a hint for a
 *   file name or a `{ pcfs }` document); PcfError for a malformed PcfSet; OptionError for options
 *   that are not an object, an unknown option (naming the nearest valid one) or a value of the
 *   wrong type or range.
 * @example options = checkPairwiseOptions('pdist', { X }, options, ['p']);
 */
export function checkPairwiseOptions<T extends object>(fnName: string, inputs: Readonly<Record<string, unknown>>, options: T | undefined, extraKeys: readonly string[]): T {
  for (const [name, value] of Object.entries(inputs)) checkPcfInput(fnName, name, value, 'Y' in inputs);
  const o = checkOptionsObject(`${fnName} options`, options, [...extraKeys, ...PAIRWISE_OPTION_KEYS], ALIASES) as T & LooseOptions;
  if (o.dtype !== undefined) checkOneOf('dtype', o.dtype, PCF_DTYPES);
  if (o.context !== undefined && !(o.context instanceof Context)) {
    throw new OptionError(`context must be a Context from createContext(), got ${describe(o.context)}`);
  }
  if (o.jobs !== undefined) {
    if (!Array.isArray(o.jobs)) throw new OptionError(`jobs must be an array of Jobs (from context.createJob()), got ${describe(o.jobs)}`);
    o.jobs.forEach((job: unknown, i) => {
      if (!(job instanceof Job)) throw new OptionError(`jobs[${i}] must be a Job, got ${describe(job)}`);
    });
  }
  if (o.signal !== undefined) checkAbortSignal('signal', o.signal);
  if (o.onProgress !== undefined) checkFunction('onProgress', o.onProgress);
  if (o.nSplitsHint !== undefined) checkInteger('nSplitsHint', o.nSplitsHint, 1, Number.MAX_SAFE_INTEGER);
  if (o.maxOutputElements !== undefined) checkInteger('maxOutputElements', o.maxOutputElements, 1, Number.MAX_SAFE_INTEGER);
  if (o.minBlockSide !== undefined) checkInteger('minBlockSide', o.minBlockSide, 0, Number.MAX_SAFE_INTEGER);
  if (o.device !== undefined) checkOneOf('device', o.device, ['cpu', 'gpu']);
  if (o.op !== undefined) checkOneOf('op', o.op, ['distance', 'l2Inner']);
  if (o.out !== undefined && (typeof o.out !== 'string' || o.out === '')) throw new OptionError(`out must be the path of a .npy file to write, got ${describe(o.out)}`);
  if (o.resume !== undefined) {
    checkBoolean('resume', o.resume);
    if (o.resume && o.out === undefined) throw new OptionError('resume continues a partial result file, so it needs out (the .npy file to finish)');
  }
  if (o.cluster !== undefined) {
    if (o.cluster === null || typeof o.cluster !== 'object') throw new OptionError(`cluster must be an object such as { nats: 'nats://host:4222' }, got ${describe(o.cluster)}`);
    for (const key of ['context', 'jobs', 'device', 'devices'] as const) {
      if (o[key] !== undefined) throw new OptionError(`cluster runs the blocks on the cluster's workers, so ${key} (this process's devices) cannot be passed with it`);
    }
  }
  if (o.memory !== undefined) checkInteger('memory', o.memory, MIN_MEMORY, Number.MAX_SAFE_INTEGER);
  if (o.layout !== undefined) {
    if (o.out === undefined) throw new OptionError(`layout says how out is written; without out, ${fnName} returns its ${fnName === 'pdist' ? 'DistanceMatrix' : 'SymmetricMatrix'}, which has no layout to choose`);
    if (fnName === 'l2Kernel' && o.layout === 'condensed') throw new OptionError("l2Kernel writes only layout 'square': scipy's condensed form drops the diagonal, which a kernel matrix needs");
    checkOneOf('layout', o.layout, ['square', 'condensed']);
  }
  if (o.p !== undefined) {
    if (o.op === 'l2Inner') throw new OptionError("p is the exponent of op 'distance'; leave it out with op 'l2Inner', which has no exponent");
    pcfOp(o.p as number);
  }
  return o;
}

/** An input that is a PcfSet (checked whole) or an array (its PCFs are checked as it is read). */
function checkPcfInput(fnName: string, name: string, value: unknown, pair: boolean): void {
  if (Array.isArray(value)) return;
  if (isPcfSetLike(value)) {
    checkPcfSet(value, `${fnName} ${name}`);
    return;
  }
  const what = `${fnName}: ${name} must be a PcfSet or an array of PCFs (each an array of [t, v] pairs), got ${describe(value)}`;
  if (value === undefined && pair) {
    throw new ArgumentError(`${what}; cdist compares every PCF of X with every PCF of Y (for the pairs within one collection, use pdist)`);
  }
  if (typeof value === 'string') throw new ArgumentError(`${what}; to read a JSON file of PCFs, pass await readPcfFile(${describe(value)})`);
  if (value !== null && typeof value === 'object' && Array.isArray((value as { pcfs?: unknown }).pcfs)) {
    throw new ArgumentError(`${what} with a "pcfs" array; pass that array itself (${name}.pcfs), or parse the document with parsePcfJson`);
  }
  throw new ArgumentError(what);
}

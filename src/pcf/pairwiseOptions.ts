/**
 * The argument checks of pdist, cdist and l2Kernel, run once at the top of each call before any
 * Context is opened or any block runs: the PCF inputs must be PCF collections, the options an
 * object of known keys whose values have the right types. A bad callback or signal is refused here,
 * not discovered by the block pipeline after work has started.
 */
import { ArgumentError, OptionError } from '../core/errors.js';
import { checkAbortSignal, checkBoolean, checkFunction, checkInteger, checkOneOf, checkOptionsObject, describe } from '../core/validate.js';
import { Context } from '../pxl/context.js';
import { Job } from '../pxl/job.js';
import { pcfOp } from './integrate.js';
import { PCF_DTYPES } from './pcf.js';
import { checkPcfSet, isPcfSetLike } from './pcfSet.js';

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

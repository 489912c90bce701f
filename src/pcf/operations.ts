// The blocks' modules one by one, not their index: the index also holds the file sinks (node:fs),
// which the browser bundle leaves out; files go through resultFile.ts (a refusal in browsers).
import { DenseTensor } from '../blocks/denseTensor.js';
import { DistanceMatrix } from '../blocks/distanceMatrix.js';
import { SymmetricMatrix } from '../blocks/symmetricMatrix.js';
import { DenseWriter, DistanceMatrixWriter, SymmetricMatrixWriter } from '../blocks/resultWriter.js';
import type { FloatDType, ResultWriter } from '../blocks/index.js';
import { OptionError } from '../core/errors.js';
import { checkOneOf } from '../core/validate.js';
import { L2_INNER, pcfOp } from './integrate.js';
import { PCF_DTYPES } from './pcf.js';
import { planDevices, requestedDtype } from './devicePlan.js';
import { checkPairwiseOptions, type PairwiseOptions } from './pairwiseOptions.js';
import { resultDtype, runPairwise } from './pairwiseRun.js';
import { pcfAt, pcfSetFrom, type PcfLike, type PcfSet } from './pcfSet.js';
import { checkResultFitsMemory, computeToFile, DEFAULT_MEMORY, openResultFile, type ResultFile, type ResultFileRequest } from './resultFile.js';
import type { NpyFileSink } from '../blocks/npyFileSink.js';

export type { ResultFile } from './resultFile.js';
export type { PairwiseDevice, PairwiseOptions } from './pairwiseOptions.js';

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
  const run = (writer: ResultWriter, sink?: NpyFileSink) => runPairwise(set, set, op, 'lowerTriangle', 'lowerTriangleSkipDiag', writer, plan, options, sink);
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
  const run = (writer: ResultWriter, sink?: NpyFileSink) => runPairwise(set, set, L2_INNER, 'lowerTriangle', 'lowerTriangle', writer, plan, options, sink);
  if (options.out !== undefined) return toFile({ fnName: 'l2Kernel', rows: set, cols: set, op: L2_INNER, layout: 'square', dtype }, options, run);
  checkResultFitsMemory('l2Kernel', set, set, (set.count * (set.count + 1)) / 2, dtype, options.memory ?? DEFAULT_MEMORY);
  const result = new SymmetricMatrix(set.count, dtype);
  await run(new SymmetricMatrixWriter(result));
  return result;
}

/**
 * Every pair of X against Y: a dense tensor of shape [...X.shape, ...Y.shape]. A multi-dimensional
 * input is a PcfSet with a shape: `pcfSetFromNested` makes one from nested arrays of PCFs, as
 * `pxl cdist` does for nested JSON; a plain array is a list of PCFs.
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
  const run = (writer: ResultWriter, sink?: NpyFileSink) => runPairwise(xs, ys, op, 'full', 'none', writer, plan, options, sink);
  if (options.out !== undefined) return toFile({ fnName: 'cdist', rows: xs, cols: ys, op, layout: 'dense', dtype }, options, run);
  checkResultFitsMemory('cdist', xs, ys, xs.count * ys.count, dtype, options.memory ?? DEFAULT_MEMORY);
  const result = new DenseTensor([...xs.shape, ...ys.shape], dtype);
  await run(new DenseWriter(result, ys.count));
  return result;
}

/** The `out` path of the three operations: the result streamed into a file through a sink. */
async function toFile(
  request: Omit<ResultFileRequest, 'out' | 'resume' | 'memory' | 'fileOrder'>,
  options: PairwiseOptions,
  run: (writer: ResultWriter, sink: NpyFileSink) => Promise<void>,
): Promise<ResultFile> {
  const out = options.out!;
  const sink = await openResultFile({ ...request, out, resume: options.resume ?? false, memory: options.memory ?? DEFAULT_MEMORY, fileOrder: options.cluster === undefined }, options.signal);
  return computeToFile(sink, out, () => run(sink, sink));
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


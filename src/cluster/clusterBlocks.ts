/**
 * `runBlocksOnCluster`: the blocks of a kernel module's BlockOp computed by `pxl worker` processes
 * that allow the module, gathered into a dense matrix, or streamed into a `.npy` file (resumable)
 * as pdist's `out` is. The cluster side of user operations, as the `cluster` option is for pdist,
 * cdist and l2Kernel.
 */
import { resolve } from 'node:path';
import { BlockScheduler, DenseTensor, DenseWriter, hashParts, NpyFileSink, npyFileLayout, type BlockProgress, type FloatDType } from '../blocks/index.js';
import { OptionError } from '../core/errors.js';
import { checkBoolean, checkInteger, checkOneOf, checkOptionsObject, describe } from '../core/validate.js';
import type { ClusterOptions } from '../pcf/clusterHook.js';
import { checkOut, computeToFile, DEFAULT_MEMORY, type ResultFile } from '../pcf/resultFile.js';
import { MaxSquareSide } from '../pxl/launchPlan.js';
import { runModuleCoordinator } from './coordinator.js';

/** Options of {@link runBlocksOnCluster}. */
export interface ClusterBlocksOptions {
  /** The kernel module, spelled as the workers' `--modules` lists it (a package name or a path on every machine). */
  readonly module: string;
  /** The module's {@link ClusterOpFactory} export. Default `'default'`. */
  readonly export?: string;
  /** Handed to the factory on every worker; must survive JSON. Default null. */
  readonly params?: unknown;
  /** Size of the result matrix. */
  readonly nRows: number;
  readonly nCols: number;
  /** Element type of the result. Default `'float64'`. */
  readonly dtype?: FloatDType;
  /** Side of the square blocks. Default an eighth of the larger side, within [64, 1023]. */
  readonly blockSide?: number;
  readonly cluster: ClusterOptions;
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: BlockProgress) => void;
  /**
   * Streams the matrix into this `.npy` file (C order, `nRows x nCols`) instead of returning it,
   * block by block at final offsets, as pdist's `out` does; the call then resolves to a
   * {@link ResultFile}. A cancelled or failed call removes its partial file.
   */
  readonly out?: string;
  /**
   * With `out`: continue the partial file and journal a killed coordinator left for the same
   * module, export, params, sizes and file, computing only the blocks the journal lacks. Default false.
   */
  readonly resume?: boolean;
  /** With `out`: bytes of blocks in flight to disk. Default 512 MiB. */
  readonly memory?: number;
}

const KEYS = ['module', 'export', 'params', 'nRows', 'nCols', 'dtype', 'blockSide', 'cluster', 'signal', 'onProgress', 'out', 'resume', 'memory'] as const;

/**
 * Computes every block of the `nRows x nCols` matrix of a kernel module's BlockOp on the workers
 * of `cluster` (see docs/cluster.md): each worker that allows the module makes the op with its
 * factory and computes the blocks it takes; a worker that does not refuses them, and the run fails
 * with its reason.
 *
 * @example
 * // table.mjs, on every machine: export default ({ params }) => ({ initStorage, outputBuffer, execBlock });
 * // workers: pxl worker --nats nats://nats:4222 --modules /opt/kernels/table.mjs
 * const m = await runBlocksOnCluster({ module: '/opt/kernels/table.mjs', params: { scale: 2 }, nRows: 5000, nCols: 5000, cluster: { nats: 'nats://nats:4222' } });
 * @throws (rejects) OptionError for bad options; what the coordinator of the `cluster` option
 *   throws (DeviceUnavailableError, UnsupportedError with a worker's reason, CancelledError).
 */
export function runBlocksOnCluster(options: ClusterBlocksOptions & { readonly out: string }): Promise<ResultFile>;
export function runBlocksOnCluster(options: ClusterBlocksOptions): Promise<DenseTensor>;
export async function runBlocksOnCluster(options: ClusterBlocksOptions): Promise<DenseTensor | ResultFile> {
  const o = checkOptionsObject('runBlocksOnCluster options', options, KEYS);
  if (typeof o.module !== 'string' || o.module.trim() === '') throw new OptionError(`module must name a kernel module (a package name or a path), got ${describe(o.module)}`);
  const name = o.export ?? 'default';
  if (typeof name !== 'string' || !/^[A-Za-z_$][\w$]{0,99}$/.test(name)) throw new OptionError(`export must be a JavaScript name, got ${describe(name)}`);
  let params: unknown = null;
  if (o.params !== undefined) {
    try {
      params = JSON.parse(JSON.stringify(o.params)) as unknown;
    } catch (error) {
      throw new OptionError(`params must survive JSON (they travel in each work item): ${(error as Error).message}`);
    }
  }
  const nRows = checkInteger('nRows', o.nRows, 1, 2 ** 31);
  const nCols = checkInteger('nCols', o.nCols, 1, 2 ** 31);
  const dtype = checkOneOf('dtype', o.dtype ?? 'float64', ['float32', 'float64'] as const);
  const n = Math.max(nRows, nCols);
  const side = o.blockSide === undefined ? Math.min(n, MaxSquareSide, Math.max(64, Math.ceil(n / 8))) : checkInteger('blockSide', o.blockSide, 1, 65536);
  if (o.cluster === undefined) throw new OptionError('runBlocksOnCluster needs cluster: { nats: URL }');
  const op = { name: 'module', module: o.module.trim(), export: name, params, dtype } as const;
  const target = { fnName: 'runBlocksOnCluster', skip: 'none', dtype, cluster: o.cluster, signal: o.signal, onProgress: o.onProgress } as const;
  if (o.out !== undefined) return toFile(o, op, nRows, nCols, side, target);
  if (o.resume !== undefined || o.memory !== undefined) throw new OptionError(`${o.resume !== undefined ? 'resume' : 'memory'} goes with out (a .npy file to stream the matrix into)`);
  const scheduler = new BlockScheduler({ nRows, nCols, mode: 'full', maxOutputElements: side * side, nSplitsHint: 1, minBlockSide: side });
  const result = new DenseTensor([nRows, nCols], dtype);
  await runModuleCoordinator({ ...target, writer: new DenseWriter(result, nCols), sink: undefined }, op, scheduler, side);
  return result;
}

/** The `out` path: the blocks streamed into a `.npy` file through the sink pdist's `out` uses. */
async function toFile(
  o: ClusterBlocksOptions,
  op: { readonly name: 'module'; readonly module: string; readonly export: string; readonly params: unknown; readonly dtype: FloatDType },
  nRows: number,
  nCols: number,
  side: number,
  target: { readonly fnName: string; readonly skip: 'none'; readonly dtype: FloatDType; readonly cluster: ClusterOptions; readonly signal: AbortSignal | undefined; readonly onProgress: ((progress: BlockProgress) => void) | undefined },
): Promise<ResultFile> {
  const out = o.out!;
  const resume = o.resume === undefined ? false : checkBoolean('resume', o.resume);
  const memory = o.memory === undefined ? DEFAULT_MEMORY : checkInteger('memory', o.memory, 1 << 20, Number.MAX_SAFE_INTEGER);
  checkOut(out, 'runBlocksOnCluster', o.signal);
  const layout = npyFileLayout('dense', op.dtype, nRows, nCols, [nRows, nCols]);
  const sink = await NpyFileSink.open({
    target: resolve(out),
    layout,
    // What the file holds is named by the operation alone: it has no input sets to hash.
    identity: { inputs: await hashParts([JSON.stringify([op.module, op.export, op.params])]), options: `runBlocksOnCluster ${op.export} of ${op.module}, ${op.dtype}, ${nRows} x ${nCols}, blocks of side ${side}` },
    resume,
    queueBytes: Math.floor(memory / 2),
    fileOrder: false,
    what: `the ${nRows} x ${nCols} ${op.dtype} result of ${op.export} of ${op.module}`,
    waysOut: [...(op.dtype === 'float64' ? [{ how: "dtype: 'float32'", bytes: layout.bytes / 2 }] : []), { how: 'out naming a file on a disk with more free space' }],
  });
  const scheduler = new BlockScheduler({ nRows, nCols, mode: 'full', maxOutputElements: side * side, nSplitsHint: 1, minBlockSide: side });
  return computeToFile(sink, out, () => runModuleCoordinator({ ...target, writer: sink, sink }, op, scheduler, side));
}

/**
 * `runBlocksOnCluster`: the blocks of a kernel module's BlockOp computed by `pxl worker` processes
 * that allow the module, gathered into a dense matrix. The cluster side of user operations, as the
 * `cluster` option is for pdist, cdist and l2Kernel.
 */
import { BlockScheduler, DenseTensor, DenseWriter, type BlockProgress, type FloatDType } from '../blocks/index.js';
import { OptionError } from '../core/errors.js';
import { checkInteger, checkOneOf, checkOptionsObject, describe } from '../core/validate.js';
import type { ClusterOptions } from '../pcf/clusterHook.js';
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
}

const KEYS = ['module', 'export', 'params', 'nRows', 'nCols', 'dtype', 'blockSide', 'cluster', 'signal', 'onProgress'] as const;

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
export async function runBlocksOnCluster(options: ClusterBlocksOptions): Promise<DenseTensor> {
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
  const side = o.blockSide === undefined ? Math.min(n, 1023, Math.max(64, Math.ceil(n / 8))) : checkInteger('blockSide', o.blockSide, 1, 65536);
  if (o.cluster === undefined) throw new OptionError('runBlocksOnCluster needs cluster: { nats: URL }');
  const scheduler = new BlockScheduler({ nRows, nCols, mode: 'full', maxOutputElements: side * side, nSplitsHint: 1, minBlockSide: side });
  const result = new DenseTensor([nRows, nCols], dtype);
  await runModuleCoordinator(
    { fnName: 'runBlocksOnCluster', skip: 'none', dtype, writer: new DenseWriter(result, nCols), sink: undefined, cluster: o.cluster, signal: o.signal, onProgress: o.onProgress },
    { name: 'module', module: o.module.trim(), export: name, params, dtype },
    scheduler,
    side,
  );
  return result;
}

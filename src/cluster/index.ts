/**
 * Several machines on NATS JetStream: the coordinator behind the `cluster` option of the pairwise
 * operations, and the worker behind `pxl worker`. The NATS clients load on first use.
 */
import './register.js';
import type { DenseTensor } from '../blocks/index.js';
import type { ResultFile } from '../pcf/resultFile.js';
import type { ClusterBlocksOptions } from './clusterBlocks.js';
import type { WorkerOptions } from './worker.js';

export type { WorkerOptions } from './worker.js';
export type { ClusterBlocksOptions } from './clusterBlocks.js';
export type { ClusterOpFactory, ClusterOpSetup } from './kernelModules.js';
export type { ClusterOptions, ClusterStatus, ClusterTlsOptions } from '../pcf/clusterHook.js';

/**
 * Runs a pxl worker in this process until `options.signal` aborts (see docs/cluster.md): it takes
 * blocks of every run on the NATS server `options.nats` and computes them on `cores` local cores.
 *
 * @example
 * const stop = new AbortController();
 * process.once('SIGTERM', () => stop.abort());
 * await runWorker({ nats: 'nats://127.0.0.1:4222', signal: stop.signal });
 * @throws (rejects) OptionError for bad options; DeviceUnavailableError when the server cannot be reached.
 */
export async function runWorker(options: WorkerOptions): Promise<void> {
  const worker = await import('./worker.js');
  return worker.runWorker(options);
}

/**
 * Computes the blocks of a kernel module's BlockOp on the workers that allow the module (see
 * docs/cluster.md and {@link ClusterOpFactory}); resolves to the dense `nRows x nCols` result, or
 * with `out` to a {@link ResultFile} describing the `.npy` file the blocks were streamed into
 * (resumable with `resume` after the coordinator was killed).
 * @throws (rejects) as runBlocksOnCluster in clusterBlocks.ts.
 */
export function runBlocksOnCluster(options: ClusterBlocksOptions & { readonly out: string }): Promise<ResultFile>;
export function runBlocksOnCluster(options: ClusterBlocksOptions): Promise<DenseTensor>;
export async function runBlocksOnCluster(options: ClusterBlocksOptions): Promise<DenseTensor | ResultFile> {
  const blocks = await import('./clusterBlocks.js');
  return blocks.runBlocksOnCluster(options);
}

/**
 * `pxl blocks`: the matrix of a kernel module's BlockOp computed by `pxl worker` processes through
 * NATS JetStream (runBlocksOnCluster), streamed into a `.npy` file. Loaded only when that command
 * runs, since it brings in the NATS clients.
 */
import { performance } from 'node:perf_hooks';
import { runBlocksOnCluster } from '../cluster/index.js';
import { clusterRun } from './clusterCliOptions.js';
import type { BlocksCliOptions, CommandEnv } from './commandOptions.js';
import { formatSummary, ProgressBar } from './progress.js';
import { UsageError } from './terminal.js';

/** `--params`, which travels to every worker's factory as JSON. */
function parseParams(text: string | undefined): unknown {
  if (text === undefined) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UsageError(`--params must be JSON, as the module's factory receives it (e.g. --params '{"scale": 2}'): ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** `pxl blocks MODULE --rows N --cols M -o FILE.npy --nats URL`. */
export async function blocksCommand(env: CommandEnv, module: string, options: BlocksCliOptions): Promise<void> {
  const params = parseParams(options.params);
  const name = `${module}${options.export === undefined ? '' : ` (${options.export})`}`;
  const bar = new ProgressBar('blocks', env.io, options.quiet !== true);
  const started = performance.now();
  try {
    await runBlocksOnCluster({
      module,
      ...(options.export !== undefined && { export: options.export }),
      params,
      nRows: options.rows,
      nCols: options.cols,
      dtype: options.dtype,
      ...(options.blockSide !== undefined && { blockSide: options.blockSide }),
      out: options.output,
      resume: options.resume === true,
      memory: options.memory,
      signal: env.signal,
      ...(bar.onProgress && { onProgress: bar.onProgress }),
      cluster: clusterRun(env, options, options.nats, bar),
    });
  } finally {
    bar.stop();
  }
  if (options.quiet !== true) {
    const seconds = (performance.now() - started) / 1000;
    env.io.stderr.write(`${formatSummary({ command: 'blocks', inputs: `${name}, ${options.rows} x ${options.cols}`, pairs: options.rows * options.cols, seconds, output: options.output })}\n`);
  }
}

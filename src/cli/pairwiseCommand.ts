/**
 * `pxl pdist`, `pxl cdist` and `pxl l2-kernel`: each validates its options, reads its inputs, calls
 * one pxl operation and writes the result; all computing is the library's. Loaded only when one of
 * them runs.
 */
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { BlockProgress } from '../blocks/blockPipeline.js';
import type { FloatDType } from '../blocks/floatArray.js';
import { checkMemory } from '../blocks/capacityCheck.js';
import type { ClusterOptions } from '../cluster/index.js';
import { cdist, l2Kernel, pdist } from '../pcf/operations.js';
import type { PcfSet } from '../pcf/pcfSet.js';
import { checkWritable } from './atomicFile.js';
import { clusterReporter, natsConnection } from './clusterCliOptions.js';
import type { CdistCliOptions, CommandEnv, CommonOptions, L2KernelOptions, PdistOptions } from './commandOptions.js';
import { readPcfInput } from './pcfFiles.js';
import { scipyCondensed, squareLayout } from './layouts.js';
import { type OutputArray, type OutputFormat, outputFormatOf, writeArray } from './output.js';
import { formatSummary, ProgressBar } from './progress.js';
import { UsageError } from './terminal.js';
import { plural } from './wording.js';

/** Fails fast, before reading or computing anything, on an output that cannot be written. */
async function prepareOutput(output: string, inputs: readonly string[], allowed?: readonly OutputFormat[]): Promise<OutputFormat> {
  const format = outputFormatOf(output, allowed);
  if (inputs.some((input) => resolve(input) === resolve(output))) {
    throw new UsageError(`the output ${output} is also an input; writing it would replace the input, so choose another path`);
  }
  await checkWritable(output);
  return format;
}

/** The API options every pairwise command passes. */
interface CallOptions {
  dtype: FloatDType;
  signal: AbortSignal;
  memory: number;
  onProgress?: (p: BlockProgress) => void;
  cluster?: ClusterOptions;
}

interface PairwiseJob<T> {
  readonly command: string;
  readonly inputs: string;
  readonly pairs: number;
  /** Elements of the arranged result, for the memory check of a result written as JSON. */
  readonly elements: number;
  /** The result streamed into OUTPUT (.npy), with `out` and `resume` added to `call`. */
  readonly toFile: (call: CallOptions & { out: string; resume: boolean }) => Promise<unknown>;
  /** The result in memory (for .json). */
  readonly compute: (call: CallOptions) => Promise<T>;
  readonly arrange: (result: T) => OutputArray;
}

/**
 * Computes with a progress bar, then prints the summary line. A .npy OUTPUT is written block by
 * block as the blocks finish; a .json one is computed in memory (after checking that it fits, with
 * the copy the layout makes) and then written, atomically either way.
 */
async function runPairwise<T>(env: CommandEnv, options: CommonOptions, format: OutputFormat, job: PairwiseJob<T>): Promise<void> {
  if (options.nats !== undefined && format !== 'npy') {
    throw new UsageError('--nats writes the result block by block into a .npy file as workers deliver it; give -o FILE.npy');
  }
  if (options.nats === undefined) {
    for (const [flag, value] of [['--nats-creds', options.natsCreds], ['--nats-user', options.natsUser], ['--nats-token', options.natsToken], ['--nats-ca', options.natsCa], ['--ack-wait', options.ackWait]] as const) {
      if (value !== undefined) throw new UsageError(`${flag} belongs to a cluster run; add --nats URL, or leave it out`);
    }
  }
  if (options.resume === true && format !== 'npy') {
    throw new UsageError('--resume continues a partial .npy output; a .json output is written whole at the end, so there is nothing to resume');
  }
  if (format === 'json') {
    const bytes = job.elements * (options.dtype === 'float64' ? 8 : 4);
    checkMemory(2 * bytes, job.elements, `the ${options.dtype} JSON result of ${job.command} on ${job.inputs}, held in memory to be written as text,`, [
      { how: `-o ${options.output.replace(/\.json$/i, '.npy')} (written block by block, never whole in memory)` },
      ...(options.dtype === 'float64' ? [{ how: '--dtype float32', bytes }] : []),
    ]);
  }
  const bar = new ProgressBar(job.command, env.io, options.quiet !== true);
  const started = performance.now();
  const cluster: ClusterOptions | undefined = options.nats === undefined ? undefined : {
    nats: options.nats,
    ...natsConnection(options),
    ...(options.ackWait !== undefined && { ackWait: options.ackWait }),
    ...(options.replicas !== undefined && { replicas: options.replicas }),
    onStatus: clusterReporter(env, options.quiet === true),
  };
  const call: CallOptions = { dtype: options.dtype, signal: env.signal, memory: options.memory, ...(bar.onProgress && { onProgress: bar.onProgress }), ...(cluster && { cluster }) };
  let result: T | undefined;
  try {
    if (format === 'npy') await job.toFile({ ...call, out: options.output, resume: options.resume === true });
    else result = await job.compute(call);
  } finally {
    bar.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  if (result !== undefined) await writeArray(options.output, format, job.arrange(result), env.signal);
  if (options.quiet !== true) {
    env.io.stderr.write(`${formatSummary({ command: job.command, inputs: job.inputs, pairs: job.pairs, seconds, output: options.output })}\n`);
  }
}

/** `pxl pdist INPUT -o OUTPUT`. */
export async function pdistCommand(env: CommandEnv, input: string, options: PdistOptions): Promise<void> {
  const format = await prepareOutput(options.output, [input]);
  const set = await readPcfInput(input, options.dtype);
  const n = set.count;
  await runPairwise(env, options, format, {
    command: 'pdist',
    inputs: plural(n, 'PCF'),
    pairs: (n * (n - 1)) / 2,
    elements: options.layout === 'condensed' ? (n * (n - 1)) / 2 : n * n,
    toFile: (call) => pdist(set, { ...call, p: options.p, layout: options.layout }),
    compute: (call) => pdist(set, { ...call, p: options.p }),
    arrange: (matrix) => (options.layout === 'condensed' ? scipyCondensed(matrix) : squareLayout(matrix)),
  });
}

/** `pxl l2-kernel INPUT -o OUTPUT`. */
export async function l2KernelCommand(env: CommandEnv, input: string, options: L2KernelOptions): Promise<void> {
  if (options.layout !== 'square') {
    throw new UsageError('l2-kernel writes only --layout square: scipy\'s condensed form drops the diagonal, which a kernel matrix needs');
  }
  const format = await prepareOutput(options.output, [input]);
  const set = await readPcfInput(input, options.dtype);
  const n = set.count;
  await runPairwise(env, options, format, {
    command: 'l2-kernel',
    inputs: plural(n, 'PCF'),
    pairs: (n * (n + 1)) / 2,
    elements: n * n,
    toFile: (call) => l2Kernel(set, call),
    compute: (call) => l2Kernel(set, call),
    arrange: squareLayout,
  });
}

/** `pxl cdist X Y -o OUTPUT`. */
export async function cdistCommand(env: CommandEnv, x: string, y: string, options: CdistCliOptions): Promise<void> {
  if (options.op === 'l2-inner' && options.pGiven) {
    throw new UsageError('--p is the exponent of --op distance; it cannot be combined with --op l2-inner');
  }
  const format = await prepareOutput(options.output, [x, y]);
  const xs = await readPcfInput(x, options.dtype);
  const ys: PcfSet = resolve(x) === resolve(y) ? xs : await readPcfInput(y, options.dtype);
  // The API refuses p with op 'l2Inner', as the CLI refuses --p with --op l2-inner.
  const op = options.op === 'l2-inner' ? { op: 'l2Inner' as const } : { op: 'distance' as const, p: options.p };
  await runPairwise(env, options, format, {
    command: 'cdist',
    inputs: `${xs.count} x ${plural(ys.count, 'PCF')}`,
    pairs: xs.count * ys.count,
    elements: xs.count * ys.count,
    toFile: (call) => cdist(xs, ys, { ...call, ...op }),
    compute: (call) => cdist(xs, ys, { ...call, ...op }),
    arrange: (tensor) => ({ data: tensor.data, shape: tensor.shape }),
  });
}

/**
 * `pxl pdist`, `pxl cdist` and `pxl l2-kernel`: each validates its options, reads its inputs, calls
 * one pxl operation and writes the result; all computing is the library's. Loaded only when one of
 * them runs.
 */
import { realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { BlockProgress } from '../blocks/blockPipeline.js';
import type { FloatDType } from '../blocks/floatArray.js';
import { checkDiskSpace, checkMemory } from '../blocks/capacityCheck.js';
import { showDawnOutput } from '../backends/webgpu/dawnOutput.js';
import type { ClusterOptions } from '../cluster/index.js';
import { untilAborted } from '../core/untilAborted.js';
import { cdist, l2Kernel, pdist } from '../pcf/operations.js';
import type { PcfSet } from '../pcf/pcfSet.js';
import type { ResultFile } from '../pcf/resultFile.js';
import { checkWritable } from './atomicFile.js';
import { clusterRun } from './clusterCliOptions.js';
import type { CdistCliOptions, CommandEnv, CommonOptions, L2KernelOptions, PdistOptions } from './commandOptions.js';
import { type CliDevices, checkDeviceOptions, dtypeFor, openDevices } from './cliDevices.js';
import { readPcfInput } from './pcfFiles.js';
import { scipyCondensed, squareLayout } from './layouts.js';
import { chooseOutputFormat, type OutputArray, type OutputFormat, writeArray, writeArrayTo } from './output.js';
import { STDIO, STDOUT_NAME, streamSink } from './stdio.js';
import { formatSummary, ProgressBar } from './progress.js';
import { commandTimeline } from './timeline.js';
import { UsageError } from './terminal.js';
import { plural } from './wording.js';

/** What the checks before reading settle: the output format and the element type. */
interface Plan {
  readonly format: OutputFormat;
  readonly dtype: FloatDType;
  readonly toStdout: boolean;
  /** Computed in memory and written at the end: a .json OUTPUT, or standard output (which cannot seek). */
  readonly inMemory: boolean;
}

/**
 * Checks the options against each other and fails fast, before reading or computing anything, on
 * an output that cannot be written.
 */
async function prepare(options: CommonOptions, inputs: readonly string[]): Promise<Plan> {
  if (options.nats !== undefined && (options.cores !== undefined || options.device !== 'cpu')) {
    throw new UsageError('--cores and --device choose this machine\'s devices, but with --nats the blocks run on workers: leave them out here and give them to pxl worker');
  }
  checkDeviceOptions(options.device, options.cores);
  const dtype = dtypeFor(options.device, options.dtype);
  const format = chooseOutputFormat(options.output, options.format);
  const toStdout = options.output === STDIO;
  if (options.nats !== undefined && (format !== 'npy' || toStdout)) {
    throw new UsageError(`--nats writes the result block by block into a .npy file as workers deliver it; give -o FILE.npy${toStdout ? ' instead of -o -' : ''}`);
  }
  if (options.nats === undefined) {
    const clusterFlags = [
      ['--nats-creds', options.natsCreds], ['--nats-user', options.natsUser], ['--nats-pass', options.natsPass], ['--nats-token', options.natsToken],
      ['--nats-ca', options.natsCa], ['--nats-cert', options.natsCert], ['--nats-key', options.natsKey], ['--ack-wait', options.ackWait], ['--replicas', options.replicas],
    ] as const;
    for (const [flag, value] of clusterFlags) {
      if (value !== undefined) throw new UsageError(`${flag} belongs to a cluster run; add --nats URL, or leave it out`);
    }
  }
  if (options.resume === true && (format !== 'npy' || toStdout)) {
    throw new UsageError(`--resume continues a partial .npy output file; ${toStdout ? 'standard output' : 'a .json output'} is written whole at the end, so there is nothing to resume`);
  }
  if (!toStdout) {
    if (await replacesAnInput(options.output, inputs)) {
      throw new UsageError(`the output ${options.output} is also an input; writing it would replace the input, so choose another path`);
    }
    await checkWritable(options.output);
    // The API's `out` takes only .npy names: refused here in the CLI's words, before any reading.
    if (format === 'npy' && !options.output.toLowerCase().endsWith('.npy')) {
      throw new UsageError(`a .npy output is written block by block into a file named FILE.npy; give -o a name ending in .npy instead of ${options.output}, or write to standard output with -o - --format npy`);
    }
  }
  return { format, dtype, toStdout, inMemory: format === 'json' || toStdout };
}

/**
 * Whether writing `output` would replace one of `inputs`: the output is renamed into place, so the
 * file it replaces is the entry at its path (a link there is replaced, not what it points to),
 * while an input is read through its links.
 */
async function replacesAnInput(output: string, inputs: readonly string[]): Promise<boolean> {
  const real = (path: string): Promise<string | undefined> => realpath(path).catch(() => undefined);
  const replaced = join(await real(dirname(resolve(output))) ?? dirname(resolve(output)), basename(output));
  for (const input of inputs) {
    if (input === STDIO) continue;
    if (resolve(input) === resolve(output) || (await real(input)) === replaced) return true;
  }
  return false;
}

/** The API options every pairwise command passes. */
type CallOptions = CliDevices['call'] & {
  dtype: FloatDType;
  signal: AbortSignal;
  memory: number;
  onProgress?: (p: BlockProgress) => void;
  cluster?: ClusterOptions;
};

interface PairwiseJob<T> {
  readonly command: string;
  readonly inputs: string;
  readonly pairs: number;
  /** Elements of the arranged result, for the memory check of a result held in memory. */
  readonly elements: number;
  /** A layout of fewer elements, offered when the result does not fit in memory. */
  readonly smaller?: { readonly how: string; readonly elements: number };
  /** The result streamed into OUTPUT (.npy), with `out` and `resume` added to `call`. */
  readonly toFile: (call: CallOptions & { out: string; resume: boolean }) => Promise<ResultFile>;
  /** The result in memory (for .json and standard output). */
  readonly compute: (call: CallOptions) => Promise<T>;
  readonly arrange: (result: T) => OutputArray;
}

/**
 * Checks the options, opens the devices, reads the inputs (`read`), computes with a progress bar,
 * then prints the summary line. The CPU cores start (worker threads, kernels) while the inputs are
 * read, so that start-up overlaps the reading. A .npy OUTPUT is written block by block as the
 * blocks finish; a .json one, and anything written to standard output, is computed in memory (after
 * checking that it fits, with the copy the layout or the encoding makes) and then written:
 * atomically into a file, front to back into standard output.
 */
async function runPairwise<T>(env: CommandEnv, options: CommonOptions, inputs: readonly string[], read: (dtype: FloatDType) => Promise<PairwiseJob<T>>): Promise<void> {
  const timeline = commandTimeline(env.io.stderr);
  timeline.mark('command started');
  if (options.verbose === true) showDawnOutput();
  const plan = await prepare(options, inputs);
  timeline.mark('options checked');
  const { format, dtype, toStdout, inMemory } = plan;
  const cluster: ClusterOptions | undefined = options.nats === undefined ? undefined : { nats: options.nats };
  // The coordinator plugs itself into the cluster option when its layer loads; the commands load lazily.
  if (cluster !== undefined) await import('../cluster/register.js');
  const devices: CliDevices | undefined = cluster === undefined ? await openDevices(options.device, options.cores, env.signal) : undefined;
  timeline.mark('devices opening');
  let seconds: number;
  let result: T | undefined;
  let file: ResultFile | undefined;
  let pairsComputed = 0;
  let job: PairwiseJob<T>;
  try {
    job = await untilAborted(read(dtype), env.signal, 'reading the input was cancelled');
    timeline.mark('input read');
    if (inMemory) {
      const bytes = job.elements * (dtype === 'float64' ? 8 : 4);
      const held = toStdout ? `written to standard output as ${format}` : 'to be written as text';
      checkMemory(2 * bytes, job.elements, `the ${dtype} result of ${job.command} on ${job.inputs}, held in memory ${held},`, [
        { how: `-o ${toStdout ? 'FILE' : options.output.replace(/\.json$/i, '')}.npy (written block by block, never whole in memory)`, elements: 0 },
        ...(job.smaller === undefined ? [] : [{ how: job.smaller.how, bytes: 2 * job.smaller.elements * (dtype === 'float64' ? 8 : 4), elements: job.smaller.elements }]),
        ...(dtype === 'float64' ? [{ how: '--dtype float32', bytes }] : []),
        // A quarter of the result, which may fit where either half does not.
        ...(dtype === 'float64' && job.smaller !== undefined ? [{ how: 'both', bytes: 2 * job.smaller.elements * 4, elements: job.smaller.elements }] : []),
      ]);
      if (!toStdout) {
        // The text's length is known only once written; every entry takes a digit and a separator.
        await checkDiskSpace(options.output, dirname(resolve(options.output)), 2 * job.elements, `the .json text of the ${dtype} result of ${job.command} on ${job.inputs}, at least 2 bytes an entry,`, [
          { how: '-o naming a file on a disk with more free space' },
        ]);
      }
    }
    await devices?.ready;
    timeline.mark('devices ready');
    const bar = new ProgressBar(job.command, env.io, options.quiet !== true);
    const started = performance.now();
    const clusterCall = cluster === undefined ? undefined : clusterRun(env, options, cluster.nats, bar);
    const shown = timeline.on ? firstBlockMark(bar.onProgress, () => timeline.mark('first block done')) : bar.onProgress;
    // The pairs of the blocks this run computes (a resumed run leaves out those it took over), for the summary's rate.
    const onProgress = (p: BlockProgress): void => {
      pairsComputed = p.pairsTotal;
      shown?.(p);
    };
    const call: CallOptions = { dtype, signal: env.signal, memory: options.memory, ...devices?.call, onProgress, ...(clusterCall && { cluster: clusterCall }) };
    try {
      if (!inMemory) file = await job.toFile({ ...call, out: options.output, resume: options.resume === true });
      else result = await job.compute(call);
    } finally {
      bar.stop();
    }
    seconds = (performance.now() - started) / 1000;
    timeline.mark('computed');
  } finally {
    await devices?.dispose();
  }
  timeline.mark('devices closed');
  if (result !== undefined) {
    const array = job.arrange(result);
    if (toStdout) await writeArrayTo(streamSink(env.io.stdout, env.signal), STDOUT_NAME, format, array);
    else await writeArray(options.output, format, array, env.signal);
    timeline.mark('written');
  }
  if (options.quiet !== true) {
    const tookOver = file !== undefined && file.blocksResumed > 0;
    const pairs = tookOver ? pairsComputed : job.pairs;
    const summary = formatSummary({ command: job.command, inputs: job.inputs, pairs, seconds, output: toStdout ? STDOUT_NAME : options.output });
    // What --resume found: a resumed run counts and rates only the pairs it computed, and a run
    // with nothing to resume starts over without another word.
    const resumed = file === undefined || options.resume !== true ? '' : `; --resume: ${file.blocksResumed === 0 ? 'no finished block to take over, all computed' : `${file.blocksResumed} of ${plural(file.blocks, 'block')} taken over from the journal`}`;
    env.io.stderr.write(`${summary}${devices === undefined ? '' : `, computed on ${devices.description}`}${resumed}\n`);
  }
}

/** `onProgress` (if any) with `first` called once, at the first report of a finished block. */
function firstBlockMark(onProgress: ((p: BlockProgress) => void) | undefined, first: () => void): (p: BlockProgress) => void {
  let marked = false;
  return (p) => {
    if (!marked && p.blocksDone > 0) {
      marked = true;
      first();
    }
    onProgress?.(p);
  };
}

/** What an input named - reads. */
function stdinOf(env: CommandEnv): AsyncIterable<Uint8Array> {
  return env.io.stdin ?? process.stdin;
}

/** `pxl pdist INPUT -o OUTPUT`. */
export async function pdistCommand(env: CommandEnv, input: string, options: PdistOptions): Promise<void> {
  await runPairwise(env, options, [input], async (dtype) => {
    const set = await readPcfInput(input, dtype, stdinOf(env));
    const n = set.count;
    return {
      command: 'pdist',
      inputs: plural(n, 'PCF'),
      pairs: (n * (n - 1)) / 2,
      elements: options.layout === 'condensed' ? (n * (n - 1)) / 2 : n * n,
      ...(options.layout === 'square' && { smaller: { how: '--layout condensed', elements: (n * (n - 1)) / 2 } }),
      toFile: (call) => pdist(set, { ...call, p: options.p, layout: options.layout }),
      compute: (call) => pdist(set, { ...call, p: options.p }),
      arrange: (matrix) => (options.layout === 'condensed' ? scipyCondensed(matrix) : squareLayout(matrix)),
    };
  });
}

/** `pxl l2-kernel INPUT -o OUTPUT`. */
export async function l2KernelCommand(env: CommandEnv, input: string, options: L2KernelOptions): Promise<void> {
  if (options.layout !== 'square') {
    throw new UsageError('l2-kernel writes only --layout square: scipy\'s condensed form drops the diagonal, which a kernel matrix needs');
  }
  await runPairwise(env, options, [input], async (dtype) => {
    const set = await readPcfInput(input, dtype, stdinOf(env));
    const n = set.count;
    return {
      command: 'l2-kernel',
      inputs: plural(n, 'PCF'),
      pairs: (n * (n + 1)) / 2,
      elements: n * n,
      toFile: (call) => l2Kernel(set, call),
      compute: (call) => l2Kernel(set, call),
      arrange: squareLayout,
    };
  });
}

/** `pxl cdist X Y -o OUTPUT`. */
export async function cdistCommand(env: CommandEnv, x: string, y: string, options: CdistCliOptions): Promise<void> {
  if (options.op === 'l2-inner' && options.pGiven) {
    throw new UsageError('--p is the exponent of --op distance; it cannot be combined with --op l2-inner');
  }
  // The API refuses p with op 'l2Inner', as the CLI refuses --p with --op l2-inner.
  const op = options.op === 'l2-inner' ? { op: 'l2Inner' as const } : { op: 'distance' as const, p: options.p };
  await runPairwise(env, options, [x, y], async (dtype) => {
    // - as both X and Y is one standard input, read once: X against itself, as for one file.
    const xs = await readPcfInput(x, dtype, stdinOf(env));
    const ys: PcfSet = x === y || (x !== STDIO && y !== STDIO && resolve(x) === resolve(y)) ? xs : await readPcfInput(y, dtype, stdinOf(env));
    return {
      command: 'cdist',
      inputs: `${xs.count} x ${plural(ys.count, 'PCF')}`,
      pairs: xs.count * ys.count,
      elements: xs.count * ys.count,
      toFile: (call) => cdist(xs, ys, { ...call, ...op }),
      compute: (call) => cdist(xs, ys, { ...call, ...op }),
      arrange: (tensor) => ({ data: tensor.data, shape: tensor.shape }),
    };
  });
}

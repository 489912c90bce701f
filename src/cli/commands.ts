/**
 * The subcommands. Each one validates its options, reads its inputs, calls one pxl operation and
 * writes the result; all computing is the library's.
 */
import { totalmem } from 'node:os';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { BlockProgress } from '../blocks/blockPipeline.js';
import type { FloatDType } from '../blocks/floatArray.js';
import { checkMemory } from '../blocks/capacityCheck.js';
import { runWorker, type ClusterOptions, type ClusterStatus } from '../cluster/index.js';
import { OutOfMemoryError } from '../core/errors.js';
import { cdist, l2Kernel, pdist } from '../pcf/operations.js';
import { MAX_SET_BREAKPOINTS, type PcfSet } from '../pcf/pcfSet.js';
import { randomPcfs } from '../pcf/random.js';
import { checkWritable } from './atomicFile.js';
import { pcfFileFormat, readPcfInput, writePcfOutput } from './pcfFiles.js';
import { MATRIX_LAYOUTS, type MatrixLayout, scipyCondensed, squareLayout } from './layouts.js';
import { type OutputArray, type OutputFormat, outputFormatOf, writeArray } from './output.js';
import { parseSize } from './memorySize.js';
import { formatSummary, ProgressBar } from './progress.js';
import { type CliIo, UsageError } from './terminal.js';

/** What every command runs with. */
export interface CommandEnv {
  readonly io: CliIo;
  /** Aborted by Ctrl-C or the caller: the command stops and writes nothing. */
  readonly signal: AbortSignal;
}

interface CommonOptions {
  output: string;
  dtype: FloatDType;
  quiet?: boolean;
  memory: number;
  resume?: boolean;
  nats?: string;
  natsCreds?: string;
  natsUser?: string;
  natsPass?: string;
  natsToken?: string;
  natsCa?: string;
  natsCert?: string;
  natsKey?: string;
  ackWait?: number;
  replicas?: number;
}

function parseP(value: string): number {
  const p = Number(value);
  if (value.trim() === '' || !Number.isFinite(p) || p < 1) throw new InvalidArgumentError('p must be a number >= 1.');
  return p;
}

function integerParser(min: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`expected an integer >= ${min}.`);
    return n;
  };
}

const outputOption = (): Option => new Option('-o, --output <file>', 'file to write; the extension picks the format: .npy (written block by block, for any size) or .json (small results)').makeOptionMandatory();
const dtypeOption = (): Option => new Option('--dtype <dtype>', 'element type of the computation and of OUTPUT (float32 also rounds the input PCFs)').choices(['float32', 'float64']).default('float64');
const layoutOption = (): Option => new Option('--layout <layout>', 'square: the full n x n matrix; condensed: scipy\'s condensed vector').choices(MATRIX_LAYOUTS).default('square');
const pOption = (): Option => new Option('--p <p>', 'exponent of the Lp distance, a number >= 1').default(1).argParser(parseP);
const quietOption = (): Option => new Option('-q, --quiet', 'print neither the progress bar nor the summary line');
const memoryOption = (): Option => new Option('--memory <size>', 'memory for block buffers and blocks in flight to disk, e.g. 512M or 2G').default(512 * 2 ** 20, '512M').argParser(parseSize);
/** The NATS connection options of the pairwise commands (with --nats) and of `pxl worker`. */
const natsOptions = (): Option[] => [
  new Option('--nats-creds <file>', 'NATS credentials file (JWT and NKey seed, as nsc writes it)'),
  new Option('--nats-user <user>', 'NATS user name (with --nats-pass)'),
  new Option('--nats-pass <password>', 'NATS password (with --nats-user)'),
  new Option('--nats-token <token>', 'NATS authentication token'),
  new Option('--nats-ca <file>', 'PEM file of the certificate authority that signed the NATS server\'s certificate'),
  new Option('--nats-cert <file>', 'PEM client certificate, for a server that verifies clients (with --nats-key)'),
  new Option('--nats-key <file>', 'PEM private key of --nats-cert'),
];
const clusterOptions = (): Option[] => [
  new Option('--nats <url>', 'run the blocks on `pxl worker` processes through this NATS JetStream server (needs -o FILE.npy); see docs/cluster.md'),
  ...natsOptions(),
  new Option('--replicas <n>', 'with --nats: copies a NATS cluster keeps of the run\'s streams (at most its size)').argParser(integerParser(1)),
  new Option('--ack-wait <ms>', 'with --nats: milliseconds before a silent worker\'s block goes to another worker').argParser(integerParser(100)),
];

type NatsCliOptions = Pick<CommonOptions, 'natsCreds' | 'natsUser' | 'natsPass' | 'natsToken' | 'natsCa' | 'natsCert' | 'natsKey'>;

/** The connection part of the cluster options, from the --nats-* flags. */
function natsConnection(options: NatsCliOptions): Omit<ClusterOptions, 'nats'> {
  const tls = { ...(options.natsCa && { caFile: options.natsCa }), ...(options.natsCert && { certFile: options.natsCert }), ...(options.natsKey && { keyFile: options.natsKey }) };
  return {
    ...(options.natsCreds && { credsFile: options.natsCreds }),
    ...(options.natsUser && { user: options.natsUser }),
    ...(options.natsPass && { pass: options.natsPass }),
    ...(options.natsToken && { token: options.natsToken }),
    ...(Object.keys(tls).length > 0 && { tls }),
  };
}

/** What a cluster run tells the user on stderr: waiting for workers, who joined, each worker's share. */
function clusterReporter(env: CommandEnv, quiet: boolean): (status: ClusterStatus) => void {
  return (status) => {
    if (quiet) return;
    if (status.kind === 'waiting') env.io.stderr.write(`pxl: no worker on ${status.url} yet; waiting (start one with: pxl worker --nats ${status.url})\n`);
    else if (status.kind === 'workers') env.io.stderr.write(`pxl: ${plural(status.workers.length, 'live worker')}${status.workers.length > 0 ? `: ${status.workers.join(', ')}` : ''}\n`);
    else env.io.stderr.write(`pxl: blocks per worker: ${status.shares.map((s) => `${s.worker} ${s.blocks}`).join(', ') || 'none (all resumed)'}\n`);
  };
}

const resumeOption = (): Option => new Option('--resume', 'continue the .npy output a killed run left (its partial file and journal), computing only the blocks it lacks');

function plural(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

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

interface PdistOptions extends CommonOptions {
  p: number;
  layout: MatrixLayout;
}

async function pdistCommand(env: CommandEnv, input: string, options: PdistOptions): Promise<void> {
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

interface L2KernelOptions extends CommonOptions {
  layout: MatrixLayout;
}

async function l2KernelCommand(env: CommandEnv, input: string, options: L2KernelOptions): Promise<void> {
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

interface CdistCliOptions extends CommonOptions {
  p: number;
  op: 'distance' | 'l2-inner';
}

async function cdistCommand(env: CommandEnv, x: string, y: string, options: CdistCliOptions, command: Command): Promise<void> {
  if (options.op === 'l2-inner' && command.getOptionValueSource('p') === 'cli') {
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

interface RandomOptions {
  n: number;
  points: number;
  seed: number;
  output: string;
  quiet?: boolean;
}

async function randomPcfsCommand(env: CommandEnv, options: RandomOptions): Promise<void> {
  const breakpoints = options.n * options.points;
  if (breakpoints > MAX_SET_BREAKPOINTS) {
    throw new UsageError(`--n ${options.n} --points ${options.points} make ${breakpoints} breakpoints; a PCF set holds at most ${MAX_SET_BREAKPOINTS}, so lower --n or --points`);
  }
  // Times and values in float64, and offsets: refused before allocating what the machine cannot hold.
  const bytes = breakpoints * 16 + 4 * (options.n + 1);
  if (bytes > totalmem()) {
    throw new OutOfMemoryError(bytes, totalmem(), `--n ${options.n} --points ${options.points} need ${bytes} bytes of memory, more than this machine's ${totalmem()}; lower --n or --points`);
  }
  pcfFileFormat(options.output, 'write');
  await checkWritable(options.output);
  const set = randomPcfs({ n: options.n, points: options.points, seed: options.seed, dtype: 'float64' });
  await writePcfOutput(options.output, set, env.signal);
  if (options.quiet !== true) {
    env.io.stderr.write(`random-pcfs: ${plural(set.count, 'PCF')} of ${plural(options.points, 'breakpoint')} (seed ${options.seed}) -> ${options.output}\n`);
  }
}

interface WorkerCliOptions extends NatsCliOptions {
  nats: string;
  cores?: number;
  device: 'cpu';
  id?: string;
  verbose?: boolean;
  quiet?: boolean;
}

/** Runs a worker until the command's signal (SIGTERM, Ctrl-C) aborts; that is a normal end (exit 0). */
async function workerCommand(env: CommandEnv, options: WorkerCliOptions): Promise<void> {
  await runWorker({
    nats: options.nats,
    ...natsConnection(options),
    ...(options.cores !== undefined && { cores: options.cores }),
    device: options.device,
    ...(options.id !== undefined && { id: options.id }),
    signal: env.signal,
    verbose: options.verbose === true,
    log: (line) => {
      if (options.quiet !== true) env.io.stderr.write(`pxl worker: ${line}\n`);
    },
  });
}

/** `command` with `options` added after those it has (so they come last in its help). */
function addOptions(command: Command, options: readonly Option[]): Command {
  for (const option of options) command.addOption(option);
  return command;
}

/** Adds pdist, cdist, l2-kernel, worker and random-pcfs to `program`. */
export function addCommands(program: Command, env: CommandEnv): void {
  addOptions(program.command('pdist')
    .description('Lp distances between every pair of PCFs in INPUT: a symmetric matrix with a zero diagonal')
    .argument('<input>', 'PCF file: .json (an array of PCFs or {"pcfs": [...]}, each PCF an array of [t, v] pairs) or .npz (arrays offsets, times, values)')
    .addOption(outputOption())
    .addOption(pOption())
    .addOption(dtypeOption())
    .addOption(layoutOption())
    .addOption(memoryOption())
    .addOption(resumeOption())
    .addOption(quietOption())
    .action((input: string, options: PdistOptions) => pdistCommand(env, input, options)), clusterOptions());

  addOptions(program.command('cdist')
    .description('Every PCF of X against every PCF of Y: a dense array of shape [...X.shape, ...Y.shape]')
    .argument('<x>', 'PCF file, .json or .npz (nested arrays of PCFs in .json give X a multi-dimensional shape)')
    .argument('<y>', 'PCF file, as X')
    .addOption(outputOption())
    .addOption(pOption())
    .addOption(new Option('--op <op>', 'distance: the Lp distance; l2-inner: the L2 inner product').choices(['distance', 'l2-inner']).default('distance'))
    .addOption(dtypeOption())
    .addOption(memoryOption())
    .addOption(resumeOption())
    .addOption(quietOption())
    .action((x: string, y: string, options: CdistCliOptions, command: Command) => cdistCommand(env, x, y, options, command)), clusterOptions());

  addOptions(program.command('l2-kernel')
    .description('L2 inner products of every pair of PCFs in INPUT, diagonal included: a symmetric kernel matrix')
    .argument('<input>', 'PCF file, .json or .npz, as for pdist')
    .addOption(outputOption())
    .addOption(dtypeOption())
    .addOption(new Option('--layout <layout>', 'square: the full n x n matrix (condensed is refused: scipy\'s condensed form has no diagonal)').choices(MATRIX_LAYOUTS).default('square'))
    .addOption(memoryOption())
    .addOption(resumeOption())
    .addOption(quietOption())
    .action((input: string, options: L2KernelOptions) => l2KernelCommand(env, input, options)), clusterOptions());

  addOptions(program.command('worker')
    .description('Join the pool of a NATS JetStream server and compute blocks of pdist, cdist and l2-kernel runs started with --nats, until SIGTERM or Ctrl-C (which let blocks in flight finish)')
    .requiredOption('--nats <url>', 'the NATS server, e.g. nats://nats.example:4222 (comma-separated for several)')
    .addOption(new Option('--cores <n>', 'cores to compute on, one block each at a time (default: every CPU)').argParser(integerParser(1)))
    .addOption(new Option('--device <device>', 'where blocks run').choices(['cpu']).default('cpu'))
    .addOption(new Option('--id <name>', 'this worker\'s name in heartbeats and summaries (default HOST:PID)'))
    .addOption(new Option('--verbose', 'also log each block as it starts and is delivered'))
    .addOption(quietOption())
    .action((options: WorkerCliOptions) => workerCommand(env, options)), natsOptions());

  program.command('random-pcfs')
    .description('Seeded random PCFs as demo data: times in [0, 10), values in [0, 1), the last value 0')
    .requiredOption('--n <n>', `number of PCFs (n × points at most ${MAX_SET_BREAKPOINTS}, the most breakpoints a PCF set holds)`, integerParser(0))
    .requiredOption('--points <m>', 'breakpoints per PCF', integerParser(1))
    .addOption(new Option('--seed <s>', 'generator seed; the same seed gives the same PCFs everywhere').default(0).argParser(integerParser(0)))
    .addOption(new Option('-o, --output <file>', 'file to write: .json as {"pcfs": [...]}, or .npz as np.savez writes offsets, times, values').makeOptionMandatory())
    .addOption(quietOption())
    .action((options: RandomOptions) => randomPcfsCommand(env, options));
}

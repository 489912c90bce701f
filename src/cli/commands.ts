/**
 * The subcommands and their options, declared only: each action loads its implementation
 * (pairwiseCommand.ts, blocksCommand.ts, randomPcfsCommand.ts, workerCommand.ts, webCommand.ts) when it runs, so `pxl --version`,
 * `pxl --help` and a mistyped option load neither the PCF operations nor the NATS clients.
 */
import { availableParallelism } from 'node:os';
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { BlocksCliOptions, CdistCliOptions, CommandEnv, InfoOptions, L2KernelOptions, PdistOptions, RandomOptions, WorkerCliOptions } from './commandOptions.js';
import { MATRIX_LAYOUTS } from './layouts.js';
import { parseSize } from './memorySize.js';
import type { WebOptions } from './webCommand.js';

export type { CommandEnv } from './commandOptions.js';

/**
 * The most breakpoints a PCF set holds (MAX_SET_BREAKPOINTS of src/pcf/pcfSet.ts, which this file
 * does not import so that declaring the commands stays cheap; test/cliOptions.test.ts keeps them equal).
 */
export const HELP_MAX_SET_BREAKPOINTS = 0x7fff_ffff;

function parseP(value: string): number {
  const p = Number(value);
  if (value.trim() === '' || !Number.isFinite(p) || p < 1) throw new InvalidArgumentError('p must be a number >= 1.');
  return p;
}

/** A commander parser of integers >= `min`. */
export function integerParser(min: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`expected an integer >= ${min}.`);
    return n;
  };
}

const outputOption = (): Option => new Option('-o, --output <file>', 'required: the file to write, or - for standard output. The extension picks the format: .npy (written block by block, for any size) or .json (small results); see --format').makeOptionMandatory();
const formatOption = (): Option => new Option('--format <format>', 'format of OUTPUT, needed with -o - (standard output, where the result is held in memory and written at the end); default: the extension of -o').choices(['npy', 'json']);
const dtypeOption = (): Option => new Option('--dtype <dtype>', 'element type of the computation and of OUTPUT, float32 also rounding the input PCFs (default: float64 on the CPU, float32 with --device gpu or all)').choices(['float32', 'float64']);
const layoutOption = (): Option => new Option('--layout <layout>', 'square: the full n x n matrix; condensed: scipy\'s condensed vector').choices(MATRIX_LAYOUTS).default('square');
const pOption = (): Option => new Option('--p <p>', 'exponent of the Lp distance, a number >= 1').default(1).argParser(parseP);
/** -q for a command whose only chatter on stderr is `what`; errors are printed whatever it says. */
export const quietOption = (what: string): Option => new Option('-q, --quiet', `print no ${what} (errors are still printed)`);
const pairwiseQuiet = (): Option => quietOption('progress bar, summary line or cluster status lines on stderr');
/** The API's least `memory` (src/pcf/pairwiseOptions.ts), refused here in --memory's terms. */
const MIN_MEMORY = 2 ** 20;
const memoryOption = (): Option => new Option('--memory <size>', 'memory for block buffers and blocks in flight to disk, e.g. 512M or 2G (at least 1M)').default(512 * 2 ** 20, '512M').argParser((text) => {
  const bytes = parseSize(text);
  if (bytes < MIN_MEMORY) throw new InvalidArgumentError(`it is ${bytes} bytes; the least is 1M (${MIN_MEMORY} bytes), below which a block would hold a handful of pairs.`);
  return bytes;
});
/**
 * A commander parser of --cores: 1 to the cores of this machine. More would be threads taking turns
 * on the same cores, each with its own memory (999 of them take gigabytes), and summaries and
 * `pxl info` would count cores the machine does not have.
 */
export function coresParser(value: string): number {
  const n = Number(value);
  const most = availableParallelism();
  if (value.trim() === '' || !Number.isSafeInteger(n) || n < 1 || n > most) {
    throw new InvalidArgumentError(`expected a whole number of CPU cores from 1 to ${most}, the cores of this machine (leave out --cores to use all of them).`);
  }
  return n;
}
/** --cores N: how many CPU cores compute, one worker thread each. */
export const coresOption = (description = `CPU cores to compute on, one worker thread each, at most all ${availableParallelism()} of this machine (default: all)`): Option =>
  new Option('--cores <n>', description).argParser(coresParser);
/** --device: where the blocks run, among `choices`. */
export const deviceOption = (choices: readonly string[], description: string): Option => new Option('--device <device>', description).choices(choices).default('cpu');
/** --verbose where a command may look for a GPU: Dawn and the drivers print to stderr as they load. */
const GPU_VERBOSE = 'show what the GPU libraries (Dawn, Vulkan, EGL, Mesa) print while pxl looks for a GPU, which pxl otherwise keeps off a terminal or pipe (PXL_DEBUG=1 does the same)';
const verboseOption = (): Option => new Option('--verbose', `with --device gpu or all: ${GPU_VERBOSE}`);
const pairwiseDevice = (): Option => deviceOption(['cpu', 'gpu', 'all'], 'cpu: the CPU cores; gpu: the GPU through WebGPU (float32; needs the optional webgpu package); all: CPU cores and GPU together, each taking the next block when free');
/** The NATS connection options of the pairwise commands (with --nats) and of `pxl worker`. */
export const natsOptions = (): Option[] => [
  new Option('--nats-creds <file>', 'NATS credentials file (JWT and NKey seed, as nsc writes it)'),
  new Option('--nats-user <user>', 'NATS user name (with --nats-pass)'),
  new Option('--nats-pass <password>', 'NATS password (with --nats-user)'),
  new Option('--nats-token <token>', 'NATS authentication token'),
  new Option('--nats-ca <file>', 'PEM file of the certificate authority that signed the NATS server\'s certificate'),
  new Option('--nats-cert <file>', 'PEM client certificate, for a server that verifies clients (with --nats-key)'),
  new Option('--nats-key <file>', 'PEM private key of --nats-cert'),
];
/** --replicas and --ack-wait of a run on a cluster. */
const clusterRunOptions = (): Option[] => [
  new Option('--replicas <n>', 'with --nats: copies a NATS cluster keeps of the run\'s streams (default 1; at most its number of servers, and 5)').argParser(integerParser(1)),
  new Option('--ack-wait <ms>', 'with --nats: milliseconds before a silent worker\'s block goes to another worker (default 10000; 100 to 3600000)').argParser(integerParser(100)),
];
const clusterOptions = (): Option[] => [
  new Option('--nats <url>', 'run the blocks on `pxl worker` processes through this NATS JetStream server (needs -o FILE.npy); see docs/cluster.md'),
  ...natsOptions(),
  ...clusterRunOptions(),
];

const resumeOption = (): Option => new Option('--resume', 'continue the .npy output a killed run left (its partial file and journal), computing only the blocks it lacks');

/** `command` with `options` added after those it has (so they come last in its help). */
function addOptions(command: Command, options: readonly Option[]): Command {
  for (const option of options) command.addOption(option);
  return command;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (value.trim() === '' || !Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError('expected a port number from 0 to 65535 (0 picks a free one).');
  return port;
}

/** Adds pdist, cdist, l2-kernel, worker, blocks, random-pcfs, info and web to `program`. */
export function addCommands(program: Command, env: CommandEnv): void {
  addOptions(program.command('pdist')
    .description('Lp distances between every pair of PCFs in INPUT: a symmetric matrix with a zero diagonal')
    .argument('<input>', 'PCF file: .json (an array of PCFs or {"pcfs": [...]}, each PCF an array of [t, v] pairs; nested arrays are taken as the list of their PCFs in order) or .npz (arrays offsets, times, values); - reads either from standard input')
    .addOption(outputOption())
    .addOption(formatOption())
    .addOption(pOption())
    .addOption(dtypeOption())
    .addOption(layoutOption())
    .addOption(coresOption())
    .addOption(pairwiseDevice())
    .addOption(memoryOption())
    .addOption(resumeOption())
    .addOption(pairwiseQuiet())
    .addOption(verboseOption())
    .action(async (input: string, options: PdistOptions) => (await import('./pairwiseCommand.js')).pdistCommand(env, input, options)), clusterOptions());

  addOptions(program.command('cdist')
    .description('Every PCF of X against every PCF of Y: a dense array of shape [...X.shape, ...Y.shape]')
    .argument('<x>', 'PCF file, .json or .npz (nested arrays of PCFs in .json give X a multi-dimensional shape); - reads either from standard input')
    .argument('<y>', 'PCF file, as X (- as both X and Y: X against itself)')
    .addOption(outputOption())
    .addOption(formatOption())
    .addOption(pOption())
    .addOption(new Option('--op <op>', 'distance: the Lp distance; l2-inner: the L2 inner product').choices(['distance', 'l2-inner']).default('distance'))
    .addOption(dtypeOption())
    .addOption(coresOption())
    .addOption(pairwiseDevice())
    .addOption(memoryOption())
    .addOption(resumeOption())
    .addOption(pairwiseQuiet())
    .addOption(verboseOption())
    .action(async (x: string, y: string, options: Omit<CdistCliOptions, 'pGiven'>, command: Command) => (await import('./pairwiseCommand.js')).cdistCommand(env, x, y, { ...options, pGiven: command.getOptionValueSource('p') === 'cli' })), clusterOptions());

  addOptions(program.command('l2-kernel')
    .description('L2 inner products of every pair of PCFs in INPUT, diagonal included: a symmetric kernel matrix')
    .argument('<input>', 'PCF file, .json or .npz, as for pdist')
    .addOption(outputOption())
    .addOption(formatOption())
    .addOption(dtypeOption())
    .addOption(new Option('--layout <layout>', 'square, the only layout l2-kernel writes: the full n x n matrix (scipy\'s condensed form drops the diagonal, which a kernel matrix needs)').default('square'))
    .addOption(coresOption())
    .addOption(pairwiseDevice())
    .addOption(memoryOption())
    .addOption(resumeOption())
    .addOption(pairwiseQuiet())
    .addOption(verboseOption())
    .action(async (input: string, options: L2KernelOptions) => (await import('./pairwiseCommand.js')).l2KernelCommand(env, input, options)), clusterOptions());

  addOptions(program.command('worker')
    .description('Join the pool of a NATS JetStream server and compute blocks of pdist, cdist and l2-kernel runs started with --nats (and of pxl blocks runs of the kernel modules in --modules), until SIGTERM or Ctrl-C (which let blocks in flight finish)')
    .requiredOption('--nats <url>', 'required: the NATS server, e.g. nats://nats.example:4222 (comma-separated for several)')
    .addOption(coresOption(`CPU cores to compute on, one block each at a time, at most all ${availableParallelism()} of this machine (default: all)`))
    .addOption(new Option('--device <device>', 'where blocks run: cpu (--cores cores); gpu (WebGPU; float32 runs only); all: both, each taking the next block when free, the GPU leaving float64 and kernel-module runs to the cores').choices(['cpu', 'gpu', 'all']).default('cpu'))
    .addOption(new Option('--id <name>', 'this worker\'s name in heartbeats and summaries (default HOST:PID)'))
    .addOption(new Option('--modules <list>', 'kernel modules whose BlockOps this worker runs, comma-separated package names or paths, spelled as coordinators name them (default: built-in operations only)'))
    .addOption(new Option('--verbose', `also log each block as it starts and is delivered, and with --device gpu or all ${GPU_VERBOSE}`))
    .addOption(quietOption('log lines on stderr'))
    .action(async (options: WorkerCliOptions) => (await import('./workerCommand.js')).workerCommand(env, options)), natsOptions());

  addOptions(program.command('blocks')
    .description('The matrix of a kernel module\'s BlockOp, computed by `pxl worker` processes that allow the module (--modules) through a NATS JetStream server, streamed into a .npy file (C order, ROWS x COLS); see docs/cluster.md')
    .argument('<module>', 'the kernel module, spelled as the workers\' --modules lists it (a package name or a path on every machine)')
    .addOption(new Option('--export <name>', 'the module\'s export that makes the BlockOp (default: its default export)'))
    .addOption(new Option('--params <json>', 'JSON handed to that factory on every worker (default: null)'))
    .requiredOption('--rows <n>', 'required: rows of the matrix', integerParser(1))
    .requiredOption('--cols <n>', 'required: columns of the matrix', integerParser(1))
    .addOption(new Option('--dtype <dtype>', 'element type of the matrix').choices(['float32', 'float64']).default('float64'))
    .addOption(new Option('--block-side <n>', 'side of the square blocks (default: an eighth of the larger side, within 64 to 1023)').argParser(integerParser(1)))
    .addOption(new Option('-o, --output <file>', 'required: the .npy file to write (to a temporary file renamed into place when complete)').makeOptionMandatory())
    .requiredOption('--nats <url>', 'required: the NATS server the workers joined, e.g. nats://nats.example:4222')
    .addOption(memoryOption())
    .addOption(resumeOption())
    .addOption(quietOption('progress bar, summary line or cluster status lines on stderr'))
    .action(async (module: string, options: BlocksCliOptions) => (await import('./blocksCommand.js')).blocksCommand(env, module, options)), [...natsOptions(), ...clusterRunOptions()]);

  program.command('random-pcfs')
    .description('Seeded random PCFs as demo data: times in [0, 10), values in [0, 1), the last value 0')
    .requiredOption('--n <n>', `required: number of PCFs (n × points at most ${HELP_MAX_SET_BREAKPOINTS}, the most breakpoints a PCF set holds)`, integerParser(0))
    .requiredOption('--points <m>', 'required: breakpoints per PCF', integerParser(1))
    .addOption(new Option('--seed <s>', 'generator seed; the same seed gives the same PCFs everywhere').default(0).argParser(integerParser(0)))
    .addOption(new Option('-o, --output <file>', 'required: the file to write, or - for standard output: .json as {"pcfs": [...]}, or .npz as np.savez writes offsets, times, values').makeOptionMandatory())
    .addOption(new Option('--format <format>', 'format of OUTPUT, needed with -o -; default: the extension of -o').choices(['json', 'npz']))
    .addOption(quietOption('line on stderr saying what was written'))
    .action(async (options: RandomOptions) => (await import('./randomPcfsCommand.js')).randomPcfsCommand(env, options));

  program.command('info')
    .description('What pxl runs on here: its version and Node\'s (and webgpu\'s, if installed), the CPU cores a run would use, memory, and (when asked with --device gpu or all) the GPU')
    .addOption(coresOption(`count a CPU Context of this many cores, as --cores makes for pdist, cdist and l2-kernel, at most all ${availableParallelism()} of this machine (default: all)`))
    .addOption(deviceOption(['cpu', 'gpu', 'all'], 'cpu: report the CPU cores only; gpu or all: also look for a GPU through WebGPU (this loads Dawn and the drivers); gpu skips the CPU'))
    .addOption(new Option('--json', 'print one JSON document instead of lines'))
    .addOption(verboseOption())
    .action(async (options: InfoOptions) => (await import('./infoCommand.js')).infoCommand(env, options));

  program.command('web')
    .description('Serve the page that computes and shows distance and L2 kernel matrices in a browser (on every core, and the GPU through WebGPU), with the cross-origin isolation headers it needs, until Ctrl-C; everything is served from here, nothing from the network')
    .addOption(new Option('--port <port>', 'TCP port to listen on; 0 picks a free one').default(8080).argParser(parsePort))
    .addOption(new Option('--host <host>', 'address to listen on; browsers isolate (and so give every core to) pages of localhost or https only, so from another machine the page runs on one thread').default('127.0.0.1'))
    .action(async (options: WebOptions) => (await import('./webCommand.js')).webCommand(env, options));
}

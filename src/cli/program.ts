/**
 * The `pxl` commander program and the run of one command line through it, with Ctrl-C handling.
 * main.ts loads this file for every command line but `pxl --version`.
 */
import { Command } from 'commander';
import { removeHeldPartialFilesSync } from '../blocks/partialFiles.js';
import { addCommands, type CommandEnv } from './commands.js';
import { ignoreClosedPipe } from './closedPipe.js';
import { type CliIo, ExitCode, reportError } from './terminal.js';
import { packageVersion } from './version.js';

const EPILOG = `
Input: a JSON file holding an array of PCFs or an object {"pcfs": [...]}; each
PCF is an array of [t, v] pairs, one of them at t = 0. Nested arrays of PCFs
give cdist's inputs a shape ([2, 3], ...); pdist and l2-kernel take them as the
list of their PCFs in order. Or an .npz file of arrays offsets, times and
values (as np.savez writes them). - reads either from standard input.

Output, chosen by the extension of -o, or by --format:
  .npy   a NumPy array of float64 or float32 (--dtype), for numpy.load (also
         with mmap_mode='r'); written block by block, so it may exceed memory
  .json  nested arrays, one per axis, for small results held in memory
-o - writes to standard output, in the --format given (held in memory first).
Where it runs: --cores N CPU cores (default all), --device gpu or all for the
GPU; pxl info shows what this machine has.
pdist layouts: square is the n x n matrix with a zero diagonal; condensed is
scipy's condensed vector: entry (i, j), i < j, at n*i - i*(i+1)/2 + (j - i - 1),
as scipy.spatial.distance.squareform reads it.
The output goes to a temporary file that is renamed into place when complete,
so it is never left partial. Free disk space (and memory, for .json and -o -) is
checked before computing. Ctrl-C or SIGTERM stops the run and removes the temporary
file (a second one ends at once, still removing it). A run killed hard leaves
its .npy temporary file and a journal of finished blocks: run the same command
with --resume to finish it; without --resume they are removed.

Exit codes: 0 done, 1 runtime or input error, 2 usage error, 130 cancelled, 141 standard
output closed by its reader before the result was written (as "| head" does).`;

/**
 * A fresh `pxl` program writing to `env.io`. Commander's errors are thrown (never `process.exit`),
 * printed as `pxl: <message>`; subcommands inherit these settings because they are made first.
 */
export function buildProgram(env: CommandEnv): Command {
  const { io } = env;
  const program = new Command('pxl')
    .description('Pairwise distances and kernels of piecewise constant functions (PCFs), on every CPU core.')
    .version(packageVersion(), '-V, --version', 'print the version of pxl')
    .helpOption('-h, --help', 'show help for the command')
    .helpCommand('help [command]', 'show help for a command')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: (text, write) => write(text.replace(/^error: /, 'pxl: ')),
    })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', EPILOG);
  addCommands(program, env);
  return program;
}

/**
 * Parses `args` and runs the command they name with `io` resolved (see main.ts's `run`); resolves
 * to the exit code and never rejects.
 */
export async function runProgram(args: readonly string[], io: Partial<CliIo>): Promise<number> {
  const resolved: CliIo = {
    stdout: io.stdout ?? process.stdout,
    stderr: io.stderr ?? process.stderr,
    // process.stdin is opened only when an input is named - (pairwiseCommand.ts).
    ...(io.stdin === undefined ? {} : { stdin: io.stdin }),
    ...(io.signal === undefined ? {} : { signal: io.signal }),
    interceptSigint: io.interceptSigint ?? true,
  };
  ignoreClosedPipe(resolved.stdout, resolved.stderr);
  const controller = new AbortController();
  const forward = (): void => controller.abort(io.signal?.reason);
  if (io.signal?.aborted === true) forward();
  else io.signal?.addEventListener('abort', forward, { once: true });
  // The first Ctrl-C (or SIGTERM) cancels: the operation stops between blocks, no output is
  // written and the temporary file is removed. A second one does not wait for that: the partial
  // files are removed synchronously and run() resolves at once (bin/pxl.js then exits).
  let signals = 0;
  let settled = false;
  let forceExit: () => void = () => undefined;
  const forced = new Promise<number>((resolve) => {
    forceExit = () => resolve(ExitCode.cancelled);
  });
  const onSignal = (name: NodeJS.Signals): void => {
    if (++signals === 1) controller.abort(new Error(name));
    else if (signals === 2) {
      removeHeldPartialFilesSync();
      forceExit();
    }
  };
  if (resolved.interceptSigint === true) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  try {
    const parsed = buildProgram({ io: resolved, signal: controller.signal })
      .parseAsync([...args], { from: 'user' })
      // After a forced end the command still winds down in the background: it reports nothing.
      .then(() => ExitCode.ok as number, (error: unknown) => (settled ? ExitCode.cancelled : reportError(error, resolved)));
    const outcome = await Promise.race([parsed.then((code) => ({ code, forced: false })), forced.then((code) => ({ code, forced: true }))]);
    if (outcome.forced) resolved.stderr.write('pxl: cancelled\n');
    return outcome.code;
  } finally {
    settled = true;
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    io.signal?.removeEventListener('abort', forward);
  }
}

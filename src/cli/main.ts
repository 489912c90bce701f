/**
 * The `pxl` command line, run in-process. `bin/pxl.js` is a thin wrapper that calls {@link run}
 * with the process's arguments and sets the exit code. `pxl --version` is answered here, before
 * commander and the commands are loaded, so that it starts about as fast as Node itself.
 */
import { ignoreClosedPipe } from './closedPipe.js';
import type { CliIo } from './terminal.js';
import { packageVersion } from './version.js';

/**
 * Runs the `pxl` command line with `args` (the arguments after `pxl`, as
 * `process.argv.slice(2)`) and resolves to the exit code; it never calls `process.exit`, and it
 * never rejects: every error is printed on `io.stderr` as one `pxl: <message>` line.
 *
 * @param io streams and cancellation; defaults: process.stdout, process.stderr, Ctrl-C cancels.
 * @returns 0 on success, 1 for runtime and input errors, 2 for usage errors, 130 when cancelled,
 *   141 when standard output was closed by its reader before a result was all written.
 * @example process.exitCode = await run(['pdist', 'pcfs.json', '-o', 'd.npy']);
 */
export async function run(args: readonly string[], io: Partial<CliIo> = {}): Promise<number> {
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
    const stdout = io.stdout ?? process.stdout;
    ignoreClosedPipe(stdout, io.stderr ?? process.stderr);
    stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  const { runProgram } = await import('./program.js');
  return runProgram(args, io);
}

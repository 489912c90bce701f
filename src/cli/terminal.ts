/**
 * What the CLI talks to: two text streams and an abort signal, injectable so tests run commands
 * in-process. Also the exit codes, and the one place that turns an error into a `pxl: ...` line.
 */
import { CommanderError } from 'commander';
import { CancelledError, OptionError, PxlError } from '../core/errors.js';
import { isClosedPipe } from './closedPipe.js';

/** A text stream the CLI writes to; `process.stdout` and `process.stderr` qualify. */
export interface CliStream {
  /** Text, or the bytes of a result written with `-o -`. */
  write(chunk: string | Uint8Array): unknown;
  /** True on a terminal: only then is a progress bar drawn. */
  readonly isTTY?: boolean;
  /** Terminal width, for the progress bar. */
  readonly columns?: number;
}

/** Streams and cancellation for one {@link run} of the CLI. */
export interface CliIo {
  /** Help, version and `pxl info` text, and a result written with `-o -`. Default `process.stdout`. */
  readonly stdout: CliStream;
  /** Progress bar, summary and error messages. Default `process.stderr`. */
  readonly stderr: CliStream;
  /** What an input named `-` reads. Default `process.stdin`. */
  readonly stdin?: AsyncIterable<Uint8Array>;
  /** Aborting it cancels the running command as Ctrl-C does. Default: none. */
  readonly signal?: AbortSignal;
  /**
   * Turn the first SIGINT (Ctrl-C) or SIGTERM into a cancellation while the command runs; a second
   * one removes the command's partial files at once and makes run() resolve with 130 without
   * waiting for the command to wind down. Default true.
   */
  readonly interceptSigint?: boolean;
}

/** Exit codes of `pxl`. */
export const ExitCode = {
  /** The command did what it was asked. */
  ok: 0,
  /** A runtime or input error: unreadable or malformed input, an unwritable output, a failed computation. */
  failure: 1,
  /** A usage error: unknown command or option, missing argument, bad option value. */
  usage: 2,
  /** Cancelled by SIGINT or the injected signal (128 + SIGINT, as shells report it). */
  cancelled: 130,
  /**
   * Standard output was closed by its reader before the result was all written (`| head`): 128 +
   * SIGPIPE, as shells report a tool that a closed pipe ended. Nothing is printed.
   */
  pipeClosed: 141,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * A usage error found by the CLI itself (an output extension it cannot write, options that do not
 * go together): exit code 2, like commander's own usage errors.
 */
export class UsageError extends OptionError {}

/** The exit code for an error thrown while parsing or running a command. */
export function exitCodeFor(error: unknown): ExitCode {
  if (error instanceof CommanderError) return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
  if (error instanceof CancelledError) return ExitCode.cancelled;
  if (isClosedPipe(error)) return ExitCode.pipeClosed;
  // Every option of a command comes from the command line, so an invalid one is a usage error.
  if (error instanceof OptionError) return ExitCode.usage;
  return ExitCode.failure;
}

/**
 * Prints `error` as one `pxl: <message>` line on stderr (no stack: the messages of pxl's errors
 * already say which file, which PCF and what is wrong) and returns its exit code. Commander has
 * printed its own errors by the time they get here.
 */
export function reportError(error: unknown, io: CliIo): ExitCode {
  const code = exitCodeFor(error);
  // A reader that went away early wants no more output, an error message included.
  if (error instanceof CommanderError || code === ExitCode.pipeClosed) return code;
  if (code === ExitCode.cancelled) {
    io.stderr.write('pxl: cancelled\n');
  } else if (error instanceof PxlError) {
    io.stderr.write(`pxl: ${error.message}\n`);
  } else {
    // Not one of pxl's own errors: a bug or an environment failure. Say so, but stay on one line.
    const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    io.stderr.write(`pxl: unexpected error: ${text}\n`);
  }
  return code;
}


/**
 * `-` as a file name: a command reads its PCFs from standard input, or writes its result to
 * standard output, so pxl fits in a pipe. Standard output cannot seek, so what goes there is
 * written front to back (the caller holds a result in memory first); a reader that goes away
 * early (`| head`) ends the write with an error rather than a crash.
 */
import { CancelledError, InputFormatError } from '../core/errors.js';
import type { FileSink } from './atomicFile.js';
import { stdoutFailure } from './closedPipe.js';
import type { CliStream } from './terminal.js';

/** The file name that means standard input (as an input) or standard output (as -o). */
export const STDIO = '-';

/** How messages name standard input and output. */
export const STDIN_NAME = 'standard input';
export const STDOUT_NAME = 'standard output';

/** A stream a command may write bytes to, waiting for 'drain' when it is full (process.stdout is one). */
interface ByteStream extends CliStream {
  once?(event: 'drain' | 'error' | 'close', listener: (arg?: unknown) => void): unknown;
  off?(event: 'drain' | 'error' | 'close', listener: (arg?: unknown) => void): unknown;
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A sink writing to `stream` in order, with backpressure: each write waits until the stream has
 * taken the chunk in or asks for more ('drain'). Rejects with InputFormatError when the stream
 * fails (a closed pipe: EPIPE), and with CancelledError once `signal` has aborted.
 */
export function streamSink(stream: ByteStream, signal?: AbortSignal): FileSink {
  let failure: Error | undefined;
  const fail = (error: unknown): void => {
    failure ??= new InputFormatError(`cannot write: ${stdoutFailure(error)}`, STDOUT_NAME, { cause: error });
  };
  stream.once?.('error', fail);
  return {
    write: async (chunk) => {
      if (failure !== undefined) throw failure;
      if (signal?.aborted === true) throw new CancelledError('writing to standard output was cancelled', { cause: signal.reason });
      const more = stream.write(chunk);
      if (more !== false || stream.once === undefined) return;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          stream.off?.('drain', done);
          stream.off?.('error', done);
          stream.off?.('close', done);
          resolve();
        };
        stream.once!('drain', done);
        stream.once!('error', done);
        stream.once!('close', done);
      });
      if (failure !== undefined) throw failure;
    },
  };
}

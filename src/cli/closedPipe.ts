/**
 * A reader that closes its end of a pipe early (`pxl ... | head`) makes the next write fail with
 * EPIPE. That is the reader's choice, not a failure of pxl: the command stops quietly instead of
 * printing an error or a stack. Kept apart from terminal.ts so that `pxl --version`, answered before
 * commander loads, can use it too.
 */
import { isDiskFull } from '../core/diskFull.js';

/** Whether `error` (or an error it was caused by) is a write to a pipe whose reader has closed it. */
export function isClosedPipe(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if ((e as NodeJS.ErrnoException).code === 'EPIPE') return true;
  }
  return false;
}

/** Why writing standard output failed, with what to change when its disk is full (`> file`). */
export function stdoutFailure(error: unknown): string {
  return `${error instanceof Error ? error.message : String(error)}${isDiskFull(error) ? '; free space on the disk standard output is redirected to, or redirect it to another disk' : ''}`;
}

const guarded = new WeakSet<object>();

/**
 * Keeps a closed pipe on standard output (`stream`) from ending the process with an unhandled
 * 'error' event: text written to it (help, `pxl info`) fails after the command has returned, when
 * nobody is waiting to hear it. Any other failure (a full disk behind `> file`) is told on `stderr`
 * and makes the exit code 1, unless a result being written listens for it and reports it itself.
 * Once per stream.
 */
export function ignoreClosedPipe(stream: object, stderr: { write(text: string): unknown }): void {
  const emitter = stream as Partial<Pick<NodeJS.EventEmitter, 'on' | 'listenerCount'>>;
  if (typeof emitter.on !== 'function' || guarded.has(stream)) return;
  guarded.add(stream);
  emitter.on.call(stream, 'error', (error: unknown) => {
    if (isClosedPipe(error) || (emitter.listenerCount?.call(stream, 'error') ?? 0) > 1) return;
    stderr.write(`pxl: cannot write to standard output: ${stdoutFailure(error)}\n`);
    process.once('exit', () => {
      process.exitCode = 1;
    });
  });
}

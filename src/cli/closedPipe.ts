/**
 * A reader that closes its end of a pipe early (`pxl ... | head`) makes the next write fail with
 * EPIPE. That is the reader's choice, not a failure of pxl: the command stops quietly instead of
 * printing an error or a stack. Kept apart from terminal.ts so that `pxl --version`, answered before
 * commander loads, can use it too.
 */

/** Whether `error` (or an error it was caused by) is a write to a pipe whose reader has closed it. */
export function isClosedPipe(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if ((e as NodeJS.ErrnoException).code === 'EPIPE') return true;
  }
  return false;
}

const guarded = new WeakSet<object>();

/**
 * Keeps a closed pipe on `stream` from ending the process with an unhandled 'error' event: text
 * written to it (help, `pxl info`) fails after the command has returned, when nobody is waiting
 * to hear it. Other errors are thrown as before. Once per stream.
 */
export function ignoreClosedPipe(stream: object): void {
  const emitter = stream as Partial<Pick<NodeJS.EventEmitter, 'on'>>;
  if (typeof emitter.on !== 'function' || guarded.has(stream)) return;
  guarded.add(stream);
  emitter.on.call(stream, 'error', (error: unknown) => {
    if (!isClosedPipe(error)) throw error;
  });
}

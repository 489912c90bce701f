/**
 * Reading a large input (a JSON file of hundreds of megabytes, on several threads) does not look at
 * the command's signal; a Ctrl-C then waited for the whole read. The command races it instead.
 */
import { CancelledError } from '../core/errors.js';

/**
 * `work`'s result, or a CancelledError as soon as `signal` aborts. Work still running then is left
 * to finish or fail unseen: the command is ending (a cancelled `pxl` exits at once).
 *
 * @throws (rejects) what `work` rejects with; CancelledError saying `what` was cancelled.
 * @example const set = await untilAborted(readPcfFile(path), signal, 'reading the input');
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const stop = (): void => reject(new CancelledError(`${what} was cancelled`, { cause: signal.reason }));
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}

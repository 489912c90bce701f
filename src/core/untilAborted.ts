/**
 * Waiting for work that does not look at an AbortSignal itself (a Sub another call holds, the
 * read of a large input), so that a cancel is answered at once instead of when the work ends.
 */
import { CancelledError } from './errors.js';

/**
 * `work`'s result, or a CancelledError with `message` as soon as `signal` aborts. Work still
 * running then is left to finish or fail unseen.
 *
 * @throws (rejects) what `work` rejects with; the CancelledError.
 * @example const set = await untilAborted(readPcfFile(path), signal, 'reading the input was cancelled');
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined, message: string): Promise<T> {
  if (signal === undefined) return work;
  return new Promise<T>((resolve, reject) => {
    const stop = (): void => reject(new CancelledError(message, { cause: signal.reason }));
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}

import { ArgumentError, CommandBufferError, PxlError, StateError } from '../core/errors.js';
import { CommandBuffer } from './commandBuffer.js';
import { Fence } from './fence.js';
import { Semaphore } from './semaphore.js';
import { checkFunction, checkOptionsObject, describe } from '../core/validate.js';

/** Options of {@link dispatch}. Every field is optional. */
export interface DispatchOptions {
  /** Semaphores that must all be signalled before the buffer starts. Default none: it starts at once. */
  readonly wait?: readonly Semaphore[];
  /** Semaphores signalled after the commands and the dispatch callback (failed if the dispatch failed). */
  readonly signal?: readonly Semaphore[];
  /**
   * Completed last, after the signal semaphores; failed with the dispatch's CommandBufferError, or
   * with the Context's StateError when the Context is destroyed before the dispatch completed.
   */
  readonly fence?: Fence;
  /**
   * Called once the commands finished (or the dispatch failed), before the signal semaphores and
   * the fence; gets the failure, if any. An exception it throws is reported as a warning.
   */
  readonly callback?: (error: PxlError | undefined) => void;
}

const DISPATCH_OPTIONS: readonly (keyof DispatchOptions)[] = ['wait', 'signal', 'fence', 'callback'];

/**
 * Dispatches a finalized command buffer. It starts once every `wait` semaphore is signalled, even
 * when the dispatch that signals them is made later; then it runs its commands in order, calls the
 * dispatch callback, signals its `signal` semaphores and completes its fence, in that order.
 * Command buffers are not ordered with one another except through semaphores.
 *
 * Failure: when a command fails, the rest of the buffer is skipped and the callback, semaphores and
 * fence receive a CommandBufferError (`reason: 'failed'`). When a `wait` semaphore is failed, the
 * buffer does not run and passes the failure on (`reason: 'upstream'`) in the same order. When the
 * buffer's Context is destroyed before the dispatch completed (it may wait on a semaphore nobody
 * will signal), they receive the Context's StateError at once, and the dispatch is over.
 *
 * @throws StateError (synchronously, nothing dispatched) when the buffer's Context was destroyed,
 *   when the buffer is not finalized or is
 *   still dispatched, or the fence is pending with another dispatch; ArgumentError for a wait or
 *   signal entry that is not a Semaphore, or a fence that is not a Fence; OptionError for options
 *   that are not an object, an unknown option, or a callback that is not a function.
 * @example
 * ```ts
 * const s = new Semaphore();
 * const fence = new Fence();
 * dispatch(second, { wait: [s], fence });
 * dispatch(first, { signal: [s] });
 * await fence.wait(); // first ran, then second
 * ```
 */
export function dispatch(buffer: CommandBuffer, dispatchOptions?: DispatchOptions): void {
  if (!(buffer instanceof CommandBuffer)) throw new ArgumentError(`dispatch: buffer must be a CommandBuffer (new CommandBuffer(ctx, job)), got ${describe(buffer)}`);
  const ctx = buffer.context;
  ctx.checkAlive();
  const options = checkOptionsObject('dispatch options', dispatchOptions, DISPATCH_OPTIONS);
  if (options.callback !== undefined) checkFunction('dispatch callback', options.callback);
  const wait = checkSemaphores('wait', options.wait);
  const signal = checkSemaphores('signal', options.signal);
  const fence = options.fence;
  if (fence !== undefined) {
    if (!(fence instanceof Fence)) throw new ArgumentError(`dispatch: fence must be a Fence (new Fence()), got ${describe(fence)}`);
    if (fence.state === 'pending') throw new StateError('dispatch: the fence is pending with another dispatch; reset() it after that one completes, or use a new Fence');
  }
  buffer.claim();
  fence?.begin();

  let finished = false;
  // Whichever comes first ends the dispatch: its own end, or the Context's destruction.
  const finish = (error: PxlError | undefined): void => {
    if (finished) return;
    finished = true;
    stopWatching();
    buffer.release();
    try {
      options.callback?.(error);
    } catch (err) {
      process.emitWarning(`dispatch callback threw: ${String(err)}`);
    }
    for (const s of signal) s.settle(error);
    fence?.settle(error);
  };

  const start = (): void => {
    buffer.run().then(
      (failure) => {
        if (failure === undefined) return finish(undefined);
        const { index, command, error } = failure;
        const reason = error instanceof Error ? error.message : String(error);
        finish(new CommandBufferError(`command ${index} (${command.kind}) of the command buffer failed: ${reason}`, { reason: 'failed', commandIndex: index, command: command.kind }, { cause: error }));
      },
      (error: unknown) => finish(new CommandBufferError(`the command buffer failed: ${String(error)}`, { reason: 'failed' }, { cause: error })),
    );
  };

  const stopWatching = ctx.onDestroy(finish);

  // Count down the wait semaphores; the first failed one decides the upstream failure.
  let remaining = wait.length;
  let upstream: PxlError | undefined;
  if (remaining === 0) return start();
  for (const s of wait) {
    s.whenSettled((error) => {
      upstream ??= error;
      if (--remaining > 0 || finished) return;
      if (upstream === undefined) return start();
      finish(new CommandBufferError(`the command buffer did not run: a semaphore it waited on failed (${upstream.message})`, { reason: 'upstream' }, { cause: upstream }));
    });
  }
}

function checkSemaphores(name: string, list: readonly Semaphore[] | undefined): readonly Semaphore[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new ArgumentError(`dispatch: ${name} must be an array of Semaphores, got ${describe(list)}; wrap one in [ ]`);
  list.forEach((s, i) => {
    if (!(s instanceof Semaphore)) throw new ArgumentError(`dispatch: ${name}[${i}] must be a Semaphore (new Semaphore()), got ${describe(s)}`);
  });
  return [...list];
}

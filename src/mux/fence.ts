import { OptionError, StateError, type PxlError } from '../core/errors.js';
import { checkNumber } from '../core/validate.js';

/** Where a {@link Fence} stands. `'unused'`: no dispatch has been given it since creation or reset. */
export type FenceState = 'unused' | 'pending' | 'complete' | 'failed';

/**
 * A host-side completion flag of one dispatch: complete after the dispatch's commands, its
 * dispatch callback and its signal semaphores; failed when a command failed or a semaphore it
 * waited on failed. A fence belongs to one dispatch at a time; `reset()` makes it reusable.
 *
 * @example
 * ```ts
 * const fence = new Fence();
 * dispatch(cb, { fence });
 * if (!(await fence.tryWait(0))) await fence.wait(); // poll, then block
 * ```
 */
export class Fence {
  #state: FenceState = 'unused';
  #error: PxlError | undefined;
  #waiters: (() => void)[] = [];

  get state(): FenceState {
    return this.#state;
  }

  /** The failure of the dispatch when the state is `'failed'`. */
  get error(): PxlError | undefined {
    return this.#error;
  }

  /**
   * Resolves once the dispatch completed.
   * Waiting on an unused fence waits for the dispatch that will be given it. It takes no timeout:
   * `tryWait(timeoutMs)` waits at most that long.
   * @throws (rejects) the dispatch's failure (CommandBufferError) when it failed; OptionError when
   *   given an argument (a timeout would otherwise be ignored and the wait could last forever).
   */
  async wait(...args: never[]): Promise<void> {
    if (args.length > 0) throw new OptionError(`Fence.wait takes no arguments, got ${args.length}; to wait at most timeoutMs milliseconds, call tryWait(timeoutMs)`);
    if (this.#state !== 'complete' && this.#state !== 'failed') await new Promise<void>((r) => this.#waiters.push(r));
    if (this.#state === 'failed') throw this.#error;
  }

  /**
   * Waits at most `timeoutMs` milliseconds: resolves true when the dispatch completed, false when
   * it has not by then. `tryWait(0)` polls without waiting.
   * @throws (rejects) the dispatch's failure when it failed; OptionError (as a rejection) for a
   *   timeout that is not a finite number ≥ 0.
   */
  async tryWait(timeoutMs: number): Promise<boolean> {
    checkNumber('timeoutMs', timeoutMs, 0, Infinity);
    if (this.#state !== 'complete' && this.#state !== 'failed' && timeoutMs > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let wake: (() => void) | undefined;
      await new Promise<void>((r) => {
        wake = r;
        this.#waiters.push(r);
        timer = setTimeout(r, timeoutMs);
      });
      clearTimeout(timer);
      const i = this.#waiters.indexOf(wake!);
      if (i >= 0) this.#waiters.splice(i, 1);
    }
    if (this.#state === 'failed') throw this.#error;
    return this.#state === 'complete';
  }

  /**
   * Returns the fence to `'unused'`.
   * @throws StateError (synchronously) while a dispatch holding it is pending.
   */
  reset(): void {
    if (this.#state === 'pending') throw new StateError('Fence.reset: a dispatch holding this fence is still pending; wait() for it first');
    this.#state = 'unused';
    this.#error = undefined;
  }

  /** @internal Claimed by a dispatch. */
  begin(): void {
    this.#state = 'pending';
    this.#error = undefined;
  }

  /** @internal Completes (no error) or fails the fence and wakes its waiters. */
  settle(error: PxlError | undefined): void {
    this.#state = error === undefined ? 'complete' : 'failed';
    this.#error = error;
    for (const w of this.#waiters.splice(0)) w();
  }
}

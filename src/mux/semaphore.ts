import { ArgumentError, type PxlError } from '../core/errors.js';
import { describe } from '../core/validate.js';

/** Where a {@link Semaphore} stands: not yet signalled, signalled, or failed by its producer. */
export type SemaphoreState = 'unsignalled' | 'signalled' | 'failed';

type Waiter = (error: PxlError | undefined) => void;

/**
 * A one-shot GPU-style semaphore linking command buffers: a dispatch that lists it in `signal`
 * signals it after its commands and dispatch callback; a dispatch that lists it in `wait` starts
 * only once it is signalled. When the producing dispatch fails, the semaphore is failed instead and
 * carries that failure to every waiting dispatch, which then does not run.
 *
 * Contract: a semaphore is signalled (or failed) at most once; it stays so until `reset()`.
 * Waiters are notified in the order they registered, always asynchronously (never inside the call
 * that registers them).
 *
 * @example
 * ```ts
 * const ready = new Semaphore();
 * dispatch(consumer, { wait: [ready] });   // does not start yet
 * dispatch(producer, { signal: [ready] }); // consumer starts after producer completes
 * ```
 */
export class Semaphore {
  #state: SemaphoreState = 'unsignalled';
  #error: PxlError | undefined;
  #waiters: Waiter[] = [];

  /**
   * A new, unsignalled semaphore. It takes no arguments: it is binary and one-shot, with no count
   * or initial value.
   *
   * @throws ArgumentError when given an argument (a count such as `new Semaphore(5)` would
   *   otherwise be ignored, and a dispatch meant to wait for five signals would start after one).
   */
  constructor(...args: never[]) {
    if (args.length > 0) {
      throw new ArgumentError(`new Semaphore() takes no arguments, got ${args.length} (${args.map((a) => describe(a)).join(', ')}); a Semaphore is binary and one-shot, with no count: a dispatch that lists it in signal signals it once, and a dispatch that lists it in wait starts once it is signalled (use one Semaphore per dependency)`);
    }
  }

  get state(): SemaphoreState {
    return this.#state;
  }

  /** The failure this semaphore carries when its state is `'failed'`. */
  get error(): PxlError | undefined {
    return this.#error;
  }

  /**
   * Returns the semaphore to `'unsignalled'` so it can link another pair of dispatches.
   * Dispatches still waiting on it keep waiting for the next signal.
   */
  reset(): void {
    this.#state = 'unsignalled';
    this.#error = undefined;
  }

  /** @internal Signals (no error) or fails (with error) the semaphore and wakes its waiters. */
  settle(error: PxlError | undefined): void {
    if (this.#state !== 'unsignalled') return;
    this.#state = error === undefined ? 'signalled' : 'failed';
    this.#error = error;
    const waiters = this.#waiters.splice(0);
    // Asynchronous, so a long chain of failed dispatches unwinds without deep recursion.
    for (const w of waiters) queueMicrotask(() => w(error));
  }

  /** @internal Calls `waiter` once the semaphore is signalled or failed (asynchronously if it already is). */
  whenSettled(waiter: Waiter): void {
    if (this.#state === 'unsignalled') {
      this.#waiters.push(waiter);
    } else {
      const error = this.#error;
      queueMicrotask(() => waiter(error));
    }
  }
}

/**
 * The Subs of one Context that no Job owns. Jobs take Subs when they are created or grow and give
 * them back when they shrink or are destroyed; a Job always gets the lowest free ids.
 *
 * Subs can also be lent: a holder whose Jobs sit idle between uses (the shared Jobs of pairwise
 * operations) lends their Subs, which then count as free, and whoever takes more Subs than are
 * truly free reclaims loans, oldest first: the holder destroys those Jobs at once, giving the Subs
 * back. So idle Jobs kept for reuse never stand in anyone's way.
 */
import { NoSubAvailableError } from '../core/errors.js';

/** Subs lent by a holder: `count` of them, given back by `reclaim()`, which must do so synchronously. */
export interface SubLoan {
  readonly count: number;
  reclaim(): void;
}

/** @internal The free Subs of a device with `total` Subs, all free at first. */
export class SubPool {
  readonly #total: number;
  readonly #free: number[];
  /** Loans not yet withdrawn or reclaimed, oldest first. */
  readonly #loans = new Set<SubLoan>();
  #lent = 0;
  /** Settled by the next `give`: callers waiting for a Sub to come back. */
  #returned: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(total: number) {
    this.#total = total;
    this.#free = Array.from({ length: total }, (_, s) => s);
  }

  /** Subs no Job owns, and Subs lent (which `take` reclaims when it needs them). */
  get free(): number {
    return this.#free.length + this.#lent;
  }

  /**
   * The `count` lowest free Subs, now taken; loans are reclaimed first when too few are truly free.
   * @throws NoSubAvailableError when `count` is 0 or more than are free.
   */
  take(count: number): number[] {
    if (count === 0 || count > this.free) {
      throw new NoSubAvailableError(`cannot take ${count} Sub${count === 1 ? '' : 's'}: ${this.free} of ${this.#total} are free; destroy a Job or free Subs with job.subFree() first`);
    }
    for (const loan of this.#loans) {
      if (this.#free.length >= count) break;
      this.#withdraw(loan);
      loan.reclaim();
    }
    this.#free.sort((a, b) => a - b);
    return this.#free.splice(0, count);
  }

  /** Makes `subs` free again, and wakes every caller of `returned()`. */
  give(subs: readonly number[]): void {
    this.#free.push(...subs);
    const returned = this.#returned;
    if (subs.length === 0 || returned === undefined) return;
    this.#returned = undefined;
    returned.resolve();
  }

  /**
   * Lends `loan.count` Subs that idle Jobs hold. Returns the withdrawal: call it before using
   * those Jobs again; it answers false when the loan was reclaimed meanwhile (the Jobs are gone).
   */
  lend(loan: SubLoan): () => boolean {
    this.#loans.add(loan);
    this.#lent += loan.count;
    return () => this.#withdraw(loan);
  }

  /**
   * Resolves the next time Subs are given back (a Job shrinks or is destroyed). One promise serves
   * every waiter until then, so waiting adds no listener per call; callers check `free` again
   * after it resolves, since another waiter may have taken the Subs first.
   */
  returned(): Promise<void> {
    if (this.#returned === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.#returned = { promise, resolve };
    }
    return this.#returned.promise;
  }

  #withdraw(loan: SubLoan): boolean {
    if (!this.#loans.delete(loan)) return false;
    this.#lent -= loan.count;
    return true;
  }
}

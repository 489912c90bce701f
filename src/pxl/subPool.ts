/**
 * The Subs of one Context that no Job owns. Jobs take Subs when they are created or grow and give
 * them back when they shrink or are destroyed; a Job always gets the lowest free ids.
 */
import { NoSubAvailableError } from '../core/errors.js';

/** @internal The free Subs of a device with `total` Subs, all free at first. */
export class SubPool {
  readonly #total: number;
  readonly #free: number[];

  constructor(total: number) {
    this.#total = total;
    this.#free = Array.from({ length: total }, (_, s) => s);
  }

  /** Subs no Job owns. */
  get free(): number {
    return this.#free.length;
  }

  /**
   * The `count` lowest free Subs, now taken.
   * @throws NoSubAvailableError when `count` is 0 or more than are free.
   */
  take(count: number): number[] {
    if (count === 0 || count > this.#free.length) {
      throw new NoSubAvailableError(`cannot take ${count} Sub${count === 1 ? '' : 's'}: ${this.#free.length} of ${this.#total} are free; destroy a Job or free Subs with job.subFree() first`);
    }
    this.#free.sort((a, b) => a - b);
    return this.#free.splice(0, count);
  }

  /** Makes `subs` free again. */
  give(subs: readonly number[]): void {
    this.#free.push(...subs);
  }
}

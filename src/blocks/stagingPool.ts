/**
 * The writer thread's staging buffers: kept for reuse, since a fresh buffer per tile or block would
 * cost its page faults again, and at most `limit` of them, so staging stays within its budget.
 * Short of a buffer, the writer frees one by writing out what holds it (`evict`).
 */
import { allocFloatArray, type FloatArray, type FloatDType } from './floatArray.js';

/**
 * Staging buffers of `elements` elements each, at most `limit` of them.
 *
 * @example
 * const pool = new StagingPool('float64', tileElements, 2);
 * const data = pool.take(needed, () => (open.size > 0 ? (finish(oldest()), true) : false));
 * pool.give(data); // once written
 */
export class StagingPool {
  readonly #dtype: FloatDType;
  readonly #elements: number;
  readonly #limit: number;
  readonly #free: FloatArray[] = [];
  #allocated = 0;

  constructor(dtype: FloatDType, elements: number, limit: number) {
    this.#dtype = dtype;
    this.#elements = Math.max(1, elements);
    this.#limit = limit;
  }

  /**
   * A buffer of at least `elements`: a free one, else a new one while fewer than `limit` exist,
   * else one that `evict` frees (it writes out what holds one and gives it back, and returns
   * false when it has nothing to write; a new buffer is made then, past the limit).
   */
  take(elements: number, evict: () => boolean): FloatArray {
    while (this.#free.length === 0 && this.#allocated >= this.#limit && evict());
    let data = this.#free.pop();
    if (data !== undefined && data.length < elements) {
      // A block larger than planned (none is, unless the plan was left out): a buffer of its own.
      data = undefined;
      this.#allocated--;
    }
    if (data !== undefined) return data;
    this.#allocated++;
    return allocFloatArray(this.#dtype, Math.max(this.#elements, elements));
  }

  /** Gives buffers back for reuse. */
  give(...data: FloatArray[]): void {
    this.#free.push(...data);
  }
}

/**
 * A symmetric matrix with a zero diagonal, stored condensed: only the entries below the diagonal,
 * row by row, which is the layout of scipy's `squareform` vectors (up to the symmetric transpose)
 * and of masspcf's DistanceMatrix. pdist fills it.
 */
import { checkInteger } from '../core/validate.js';
import { DenseTensor } from './denseTensor.js';
import { type FloatArray, type FloatDType, floatDTypeOf, floatStorage } from './floatArray.js';

/**
 * Pairwise distances between `n` items. Entry (i, j) with `i > j` lives at `i * (i - 1) / 2 + j` of
 * {@link DistanceMatrix.condensed}; (j, i) reads the same value and (i, i) is always 0.
 *
 * @example
 * const d = new DistanceMatrix(3); // condensed: [(1,0), (2,0), (2,1)]
 * d.condensed[2] = 4;
 * d.get(1, 2); // 4
 * d.get(2, 2); // 0
 */
export class DistanceMatrix {
  readonly #n: number;
  readonly #condensed: FloatArray;

  /**
   * @param init a dtype (default `'float64'`) for a zero-filled matrix, or existing condensed data
   * of length `n * (n - 1) / 2` (not copied).
   * @throws {OptionError} when `n` is not an integer >= 0, or `init` is not a float dtype or array
   * of the right length.
   */
  constructor(n: number, init: FloatDType | FloatArray = 'float64') {
    this.#n = checkInteger('n', n, 0, Number.MAX_SAFE_INTEGER);
    this.#condensed = floatStorage(init, (n * (n - 1)) / 2, `a DistanceMatrix of n = ${n}`);
  }

  /** Number of items: the matrix is `n x n`. */
  get n(): number {
    return this.#n;
  }

  get dtype(): FloatDType {
    return floatDTypeOf(this.#condensed);
  }

  /** The `n * (n - 1) / 2` entries below the diagonal, row by row; writes change the matrix. */
  get condensed(): FloatArray {
    return this.#condensed;
  }

  /**
   * Entry (i, j): symmetric, 0 on the diagonal.
   *
   * @throws {OptionError} when `i` or `j` is not an integer in `[0, n - 1]`.
   */
  get(i: number, j: number): number {
    checkInteger('i', i, 0, this.#n - 1);
    checkInteger('j', j, 0, this.#n - 1);
    if (i === j) return 0;
    const hi = Math.max(i, j);
    return this.#condensed[(hi * (hi - 1)) / 2 + Math.min(i, j)] as number;
  }

  /** The full `n x n` matrix as a new row-major tensor of the same dtype. */
  toSquare(): DenseTensor {
    const n = this.#n;
    const square = new DenseTensor([n, n], this.dtype);
    const out = square.data;
    let k = 0;
    for (let i = 1; i < n; i++) {
      for (let j = 0; j < i; j++, k++) {
        const v = this.#condensed[k] as number;
        out[i * n + j] = v;
        out[j * n + i] = v;
      }
    }
    return square;
  }
}

/**
 * A symmetric matrix with a zero diagonal, stored condensed in scipy's order: only the entries
 * above the diagonal, row by row, exactly the vector `scipy.spatial.distance.pdist` returns and
 * `squareform` reads (the CLI's `--layout condensed` writes the same vector). pdist fills it.
 */
import { ArgumentError } from '../core/errors.js';
import { checkInteger } from '../core/validate.js';
import { DenseTensor } from './denseTensor.js';
import { type FloatArray, type FloatDType, floatDTypeOf, floatStorage } from './floatArray.js';

/**
 * Pairwise distances between `n` items. Entry (i, j) with `i < j` lives at
 * `n*i - i*(i+1)/2 + (j - i - 1)` of {@link DistanceMatrix.condensed} (scipy's condensed order);
 * (j, i) reads the same value and (i, i) is always 0.
 *
 * @example
 * const d = new DistanceMatrix(3); // condensed: [(0,1), (0,2), (1,2)]
 * d.condensed[1] = 4;
 * d.get(2, 0); // 4
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

  /**
   * The `n * (n - 1) / 2` entries above the diagonal, row by row (scipy's condensed order: (i, j)
   * with i < j at {@link condensedIndex}); writes change the matrix.
   */
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
    return this.#condensed[condensedAt(this.#n, Math.min(i, j), Math.max(i, j))] as number;
  }

  /** The full `n x n` matrix as a new row-major tensor of the same dtype. */
  toSquare(): DenseTensor {
    const n = this.#n;
    const square = new DenseTensor([n, n], this.dtype);
    const out = square.data;
    let k = 0;
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++, k++) {
        const v = this.#condensed[k] as number;
        out[i * n + j] = v;
        out[j * n + i] = v;
      }
    }
    return square;
  }
}

/**
 * Where scipy's condensed order keeps entry (i, j) of an `n x n` distance matrix, `i != j`: the
 * index `squareform` reads it from. (i, j) and (j, i) are the same entry; with `i < j` it is
 * `n*i - i*(i+1)/2 + (j - i - 1)`. The diagonal is not stored (it is always 0).
 *
 * @throws OptionError when `n` is not an integer >= 2, or `i` or `j` is not an integer in
 *   `[0, n - 1]`; ArgumentError when `i == j`.
 * @example condensedIndex(4, 1, 3) // 4: the order is (0,1) (0,2) (0,3) (1,2) (1,3) (2,3)
 * @example condensedIndex(4, 3, 1) // 4 as well
 */
export function condensedIndex(n: number, i: number, j: number): number {
  checkInteger('condensedIndex: n', n, 2, Number.MAX_SAFE_INTEGER);
  checkInteger('condensedIndex: i', i, 0, n - 1);
  checkInteger('condensedIndex: j', j, 0, n - 1);
  if (i === j) throw new ArgumentError(`condensedIndex: i and j are both ${i}; the diagonal (i, i) is not stored in the condensed order (its entry is always 0), so pass i != j`);
  return i < j ? condensedAt(n, i, j) : condensedAt(n, j, i);
}

/**
 * @internal {@link condensedIndex} without checks, for `0 <= i < j < n`: the per-entry path of pdist's
 * writers and of `DistanceMatrix.get`, whose indices are checked (or correct by construction) once.
 */
export function condensedAt(n: number, i: number, j: number): number {
  return n * i - (i * (i + 1)) / 2 + (j - i - 1);
}

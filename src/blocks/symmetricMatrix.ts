/**
 * A symmetric matrix stored packed: the entries on and below the diagonal, row by row. Kernel
 * matrices (l2Kernel) fill it; unlike a distance matrix, the diagonal carries information.
 */
import { checkInteger } from '../core/validate.js';
import { DenseTensor } from './denseTensor.js';
import { type FloatArray, type FloatDType, floatDTypeOf, floatStorage } from './floatArray.js';

/**
 * A symmetric `n x n` matrix. Entry (i, j) with `i >= j` lives at `i * (i + 1) / 2 + j` of
 * {@link SymmetricMatrix.packed}; (j, i) reads the same value.
 *
 * @example
 * const k = new SymmetricMatrix(2); // packed: [(0,0), (1,0), (1,1)]
 * k.packed[1] = 7;
 * k.get(0, 1); // 7
 */
export class SymmetricMatrix {
  readonly #n: number;
  readonly #packed: FloatArray;

  /**
   * @param init a dtype (default `'float64'`) for a zero-filled matrix, or existing packed data of
   * length `n * (n + 1) / 2` (not copied).
   * @throws {OptionError} when `n` is not an integer >= 0, or `init` is not a float dtype or array
   * of the right length.
   */
  constructor(n: number, init: FloatDType | FloatArray = 'float64') {
    this.#n = checkInteger('n', n, 0, Number.MAX_SAFE_INTEGER);
    this.#packed = floatStorage(init, (n * (n + 1)) / 2, `a SymmetricMatrix of n = ${n}`);
  }

  /** Number of items: the matrix is `n x n`. */
  get n(): number {
    return this.#n;
  }

  get dtype(): FloatDType {
    return floatDTypeOf(this.#packed);
  }

  /** The `n * (n + 1) / 2` entries on and below the diagonal, row by row; writes change the matrix. */
  get packed(): FloatArray {
    return this.#packed;
  }

  /**
   * Entry (i, j), symmetric.
   *
   * @throws {OptionError} when `i` or `j` is not an integer in `[0, n - 1]`.
   */
  get(i: number, j: number): number {
    checkInteger('i', i, 0, this.#n - 1);
    checkInteger('j', j, 0, this.#n - 1);
    const hi = Math.max(i, j);
    return this.#packed[(hi * (hi + 1)) / 2 + Math.min(i, j)] as number;
  }

  /** The full `n x n` matrix as a new row-major tensor of the same dtype. */
  toSquare(): DenseTensor {
    const n = this.#n;
    const square = new DenseTensor([n, n], this.dtype);
    const out = square.data;
    let k = 0;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j <= i; j++, k++) {
        const v = this.#packed[k] as number;
        out[i * n + j] = v;
        out[j * n + i] = v;
      }
    }
    return square;
  }
}

/**
 * The layouts a symmetric result can be written in. `square` is the full n x n matrix; `condensed`
 * is scipy's: the entries above the diagonal, row by row, so that for i < j entry (i, j) sits at
 * `n*i - i*(i+1)/2 + (j - i - 1)` (what `scipy.spatial.distance.squareform` reads). That is not
 * the order of {@link DistanceMatrix.condensed}, which runs over the lower triangle.
 */
import type { DistanceMatrix } from '../blocks/distanceMatrix.js';
import type { SymmetricMatrix } from '../blocks/symmetricMatrix.js';
import type { OutputArray } from './output.js';

/** How a symmetric matrix is written. */
export type MatrixLayout = 'square' | 'condensed';

/** Every {@link MatrixLayout}, for option choices. */
export const MATRIX_LAYOUTS: readonly MatrixLayout[] = ['square', 'condensed'];

/** The full symmetric matrix, shape `[n, n]` (zero diagonal for a distance matrix). */
export function squareLayout(matrix: DistanceMatrix | SymmetricMatrix): OutputArray {
  const square = matrix.toSquare();
  return { data: square.data, shape: square.shape };
}

/**
 * The distances in scipy's condensed order, shape `[n*(n-1)/2]`, same dtype.
 *
 * @example for n = 3 the order is (0,1), (0,2), (1,2)
 */
export function scipyCondensed(matrix: DistanceMatrix): OutputArray {
  const n = matrix.n;
  const lower = matrix.condensed;
  const length = (n * (n - 1)) / 2;
  const data = lower instanceof Float32Array ? new Float32Array(length) : new Float64Array(length);
  let k = 0;
  for (let i = 0; i < n; i++) {
    // (i, j) with i < j is the lower-triangle entry (j, i), stored at j*(j-1)/2 + i.
    for (let j = i + 1; j < n; j++) data[k++] = lower[(j * (j - 1)) / 2 + i]!;
  }
  return { data, shape: [length] };
}

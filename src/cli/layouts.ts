/**
 * The layouts a symmetric result can be written in. `square` is the full n x n matrix; `condensed`
 * is scipy's: the entries above the diagonal, row by row, so that for i < j entry (i, j) sits at
 * `n*i - i*(i+1)/2 + (j - i - 1)` (what `scipy.spatial.distance.squareform` reads), the order
 * {@link DistanceMatrix.condensed} keeps.
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
  // DistanceMatrix.condensed is already in scipy's order: written as it is.
  return { data: matrix.condensed, shape: [matrix.condensed.length] };
}

/**
 * The cells the heatmap draws: the matrix with rows and columns in clustered order, shrunk to at
 * most `side` x `side` cells by averaging blocks of entries when n is larger, so a large result
 * still shows its structure in a canvas of a few hundred pixels. Pure.
 */
import type { MatrixView } from './matrixView.js';

/** The cells of a heatmap and the range of their values. */
export interface HeatmapGrid {
  /** Cells per side: min(n, side). */
  readonly size: number;
  /** size x size cell values, row-major. */
  readonly cells: Float64Array;
  /** Smallest and largest finite cell value (both 0 when there is none). */
  readonly min: number;
  readonly max: number;
}

/**
 * Cell (r, c) averages the entries of ordered rows [r*n/size, (r+1)*n/size) and columns likewise.
 * Entries are read in the clustered `order` (order[p] is the item at position p).
 */
export function heatmapGrid(view: MatrixView, order: ArrayLike<number>, side: number): HeatmapGrid {
  const n = view.n;
  if (order.length !== n) throw new RangeError(`heatmapGrid: the order lists ${order.length} items, the matrix has ${n}`);
  if (!Number.isSafeInteger(side) || side < 1) throw new RangeError(`heatmapGrid: side must be an integer >= 1, got ${side}`);
  const size = Math.min(n, side);
  const cells = new Float64Array(size * size);
  const start = (k: number): number => Math.floor((k * n) / size);
  let min = Infinity;
  let max = -Infinity;
  for (let r = 0; r < size; r++) {
    const r0 = start(r);
    const r1 = start(r + 1);
    for (let c = r; c < size; c++) {
      const c0 = start(c);
      const c1 = start(c + 1);
      let sum = 0;
      for (let p = r0; p < r1; p++) {
        const i = order[p]!;
        for (let q = c0; q < c1; q++) sum += view.value(i, order[q]!);
      }
      const v = sum / ((r1 - r0) * (c1 - c0));
      // The matrix is symmetric and the blocks are too: compute the upper half and mirror it.
      cells[r * size + c] = v;
      cells[c * size + r] = v;
      if (Number.isFinite(v)) {
        if (v < min) min = v;
        if (v > max) max = v;
      }
    }
  }
  if (min > max) min = max = 0;
  return { size, cells, min, max };
}

/** The ordered position range [from, to) that cell index k of a grid of `size` covers. */
export function cellSpan(n: number, size: number, k: number): [number, number] {
  return [Math.floor((k * n) / size), Math.floor(((k + 1) * n) / size)];
}

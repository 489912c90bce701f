/**
 * Triangle skip modes say which (i, j) pairs inside a block a kernel computes. Block-level
 * filtering (`BlockMode`) only drops whole blocks above the diagonal; blocks that straddle it still
 * hold pairs a symmetric operation must leave out, and the kernel skips them pair by pair.
 */
import { checkOneOf } from '../core/validate.js';
import type { BlockInfo } from './blockScheduler.js';

/**
 * - `'none'`: every pair (cdist: rows and columns are different sets).
 * - `'lowerTriangleSkipDiag'`: pairs with `i > j` (distance matrices: the diagonal is zero).
 * - `'lowerTriangle'`: pairs with `i >= j` (kernel matrices: the diagonal is a self inner product).
 */
export type TriangleSkipMode = 'none' | 'lowerTriangleSkipDiag' | 'lowerTriangle';

/** Every {@link TriangleSkipMode}, for validation and iteration. */
export const TRIANGLE_SKIP_MODES: readonly TriangleSkipMode[] = ['none', 'lowerTriangleSkipDiag', 'lowerTriangle'];

/**
 * Whether a kernel in `mode` computes the pair at row `i`, column `j`.
 *
 * @example
 * computesPair('lowerTriangleSkipDiag', 2, 2); // false
 * computesPair('lowerTriangle', 2, 2);         // true
 */
export function computesPair(mode: TriangleSkipMode, i: number, j: number): boolean {
  switch (mode) {
    case 'none':
      return true;
    case 'lowerTriangleSkipDiag':
      return i > j;
    case 'lowerTriangle':
      return i >= j;
  }
}

/** `sum_{d=1..x} min(d, w)` for x >= 0, and 0 for x <= 0: the prefix sum `pairsInBlock` needs. */
function clampedPrefix(x: number, w: number): number {
  if (x <= 0) return 0;
  if (x <= w) return (x * (x + 1)) / 2;
  return (w * (w + 1)) / 2 + (x - w) * w;
}

/**
 * Number of pairs of `block` a kernel in `mode` computes, in closed form, so progress totals cost
 * O(blocks) even for huge blocks.
 *
 * Row `i` of the block computes the columns `j` in `[colFirst, i - s]` (s = 1 when the diagonal is
 * skipped, else 0), i.e. `min(max(i - s - colFirst + 1, 0), colCount)` of them; the sum over the
 * block's rows is a difference of the prefix sums of that clamped ramp.
 *
 * @throws {OptionError} for an unknown mode.
 * @example
 * pairsInBlock('lowerTriangleSkipDiag', { index: 0, rowFirst: 0, rowCount: 3, colFirst: 0, colCount: 3, diagonal: true }); // 3
 */
export function pairsInBlock(mode: TriangleSkipMode, block: BlockInfo): number {
  checkOneOf('mode', mode, TRIANGLE_SKIP_MODES);
  if (mode === 'none') return block.rowCount * block.colCount;
  const s = mode === 'lowerTriangleSkipDiag' ? 1 : 0;
  const first = block.rowFirst - s - block.colFirst + 1;
  const last = first + block.rowCount - 1;
  return clampedPrefix(last, block.colCount) - clampedPrefix(first - 1, block.colCount);
}

/**
 * Total pairs a kernel in `mode` computes over `blocks`: the denominator of progress reports.
 *
 * @example
 * pairsInBlocks('lowerTriangleSkipDiag', scheduler.blocks); // n * (n - 1) / 2 for a lowerTriangle schedule
 */
export function pairsInBlocks(mode: TriangleSkipMode, blocks: readonly BlockInfo[]): number {
  let total = 0;
  for (const block of blocks) total += pairsInBlock(mode, block);
  return total;
}

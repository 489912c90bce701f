/**
 * A result block as it travels from worker to coordinator: the values its kernel computed, row
 * after row, without the pairs a symmetric operation leaves out. Row `i` of a block computes the
 * columns `[colFirst, i - s]` (see triangleSkip.ts), a prefix of the row; the rest is zero. A
 * block that straddles the diagonal of a pdist or l2 kernel matrix thus goes as about half its
 * bytes, and moving the bytes (worker, server and coordinator) costs as much CPU as computing them
 * when PCFs are small: the blocks on the diagonal of a 4,000-PCF matrix in blocks of side 512 are
 * 11% of the result.
 *
 * Both sides work in place: the worker packs its output slot, the coordinator unpacks into the
 * block buffer the packed values arrived in (which has room for the whole block).
 */
import type { BlockInfo, FloatArray, TriangleSkipMode } from '../blocks/index.js';
import { pairsInBlock } from '../blocks/index.js';

/** How many values of `block` row `r` holds when packed: the prefix its kernel computes. */
function rowLength(skip: TriangleSkipMode, block: BlockInfo, r: number): number {
  if (skip === 'none') return block.colCount;
  const s = skip === 'lowerTriangleSkipDiag' ? 1 : 0;
  return Math.min(Math.max(block.rowFirst + r - s - block.colFirst + 1, 0), block.colCount);
}

/** Values of `block` as it travels: the pairs a kernel in `skip` computes. */
export function packedLength(skip: TriangleSkipMode, block: BlockInfo): number {
  return pairsInBlock(skip, block);
}

/**
 * Moves each row's computed prefix of `values` (the row-major block) to follow the previous one;
 * returns how many values lead `values` afterwards. Rows only move towards the start, first row
 * first, so no value is overwritten before it moved.
 */
export function packRows(values: FloatArray, skip: TriangleSkipMode, block: BlockInfo): number {
  let at = 0;
  for (let r = 0; r < block.rowCount; r++) {
    const len = rowLength(skip, block, r);
    const from = r * block.colCount;
    if (at !== from && len > 0) values.copyWithin(at, from, from + len);
    at += len;
  }
  return at;
}

/**
 * The inverse of {@link packRows}: spreads the packed rows leading `values` back to their places in
 * the row-major block and zeroes the values between them (the pairs not computed). Rows move
 * towards the end, last row first.
 */
export function unpackRows(values: FloatArray, skip: TriangleSkipMode, block: BlockInfo): void {
  if (skip === 'none') return;
  let at = packedLength(skip, block);
  for (let r = block.rowCount - 1; r >= 0; r--) {
    const len = rowLength(skip, block, r);
    at -= len;
    const to = r * block.colCount;
    if (at !== to && len > 0) values.copyWithin(to, at, at + len);
    values.fill(0, to + len, to + block.colCount);
  }
}

/**
 * Staging turns one block's dense result buffer into the pieces of a result file it fills: a
 * contiguous staging buffer and a list of runs, each run a stretch of the staging buffer that goes
 * to one stretch of the file. A square file receives each block twice (the block and its mirror
 * above the diagonal), a condensed file receives the block's columns (scipy's rows), a dense file
 * its rows.
 *
 * Staging is host work on the main thread, so it is a generator that yields after about
 * {@link STAGE_STEP_ELEMENTS} elements: the caller lets the event loop run between steps, so a
 * block of millions of pairs never stalls it.
 */
import { LogicError } from '../core/errors.js';
import type { BlockInfo } from './blockScheduler.js';
import { condensedAt } from './distanceMatrix.js';
import type { FloatArray } from './floatArray.js';
import type { NpyFileLayout } from './npyLayout.js';

/** Elements copied between two yields: a few milliseconds of strided copying. */
export const STAGE_STEP_ELEMENTS = 1 << 18;

/** `length` elements of the staging buffer from `from` go to element `at` of the file's data. */
export interface StagedRun {
  at: number;
  from: number;
  length: number;
}

/**
 * Elements a block occupies in the file: the staging buffer it needs.
 *
 * @example stagedElements(squareLayout, offDiagonalBlock) // 2 * rowCount * colCount
 */
export function stagedElements(layout: NpyFileLayout, block: BlockInfo): number {
  const { rowFirst, rowCount, colFirst, colCount } = block;
  switch (layout.kind) {
    case 'dense':
      return rowCount * colCount;
    case 'square':
      return isDiagonal(block) ? rowCount * colCount : 2 * rowCount * colCount;
    case 'condensed': {
      let n = 0;
      for (let c = 0; c < colCount; c++) n += Math.max(0, rowCount - Math.max(colFirst + c + 1 - rowFirst, 0));
      return n;
    }
  }
}

/**
 * A block of a lower-triangle schedule over equal row and column bands either lies wholly below
 * the diagonal or is a band against itself.
 */
function isDiagonal(block: BlockInfo): boolean {
  return block.rowFirst === block.colFirst && block.rowCount === block.colCount;
}

/** Appends a run, merging it into the previous one when both continue each other in file and staging. */
function push(runs: StagedRun[], at: number, from: number, length: number): void {
  if (length <= 0) return;
  const last = runs[runs.length - 1];
  if (last !== undefined && last.at + last.length === at && last.from + last.length === from) last.length += length;
  else runs.push({ at, from, length });
}

function skipped(block: BlockInfo, i: number, j: number, v: number, rule: string): LogicError {
  return new LogicError(`block ${block.index} (rows from ${block.rowFirst}, cols from ${block.colFirst}) holds ${v} at skipped entry (${i}, ${j}); ${rule}`);
}

/**
 * Copies `block`'s results from `buf` (row-major, `colCount` per row) into `staging` and appends
 * the file runs to `runs`, yielding after every {@link STAGE_STEP_ELEMENTS} or so elements.
 * `staging` must hold {@link stagedElements} elements of the layout's dtype.
 *
 * In a square file the diagonal comes from the block (0 for distances, the self inner product for
 * kernels); entries above the diagonal inside `buf` must be 0, as in the in-memory writers.
 *
 * @throws {LogicError} when the block leaves a non-zero where the layout keeps nothing.
 */
export function* stageBlock(layout: NpyFileLayout, block: BlockInfo, buf: FloatArray, staging: FloatArray, runs: StagedRun[]): Generator<void, void, void> {
  const { rowCount, colCount } = block;
  const rowsPerStep = Math.max(1, Math.floor(STAGE_STEP_ELEMENTS / Math.max(1, colCount)));
  const colsPerStep = Math.max(1, Math.floor(STAGE_STEP_ELEMENTS / Math.max(1, rowCount)));
  // The loops live in plain functions: V8 optimizes those while they run (on-stack replacement),
  // but not a generator's own loops, which would stay interpreted for a block's first pass.
  if (layout.kind === 'dense' || (layout.kind === 'square' && !isDiagonal(block))) {
    for (let r = 0; r < rowCount; r += rowsPerStep) {
      copyRows(layout, block, buf, staging, runs, r, Math.min(rowCount, r + rowsPerStep));
      yield;
    }
  }
  if (layout.kind === 'square' && !isDiagonal(block)) {
    for (let c = 0; c < colCount; c += colsPerStep) {
      copyMirror(layout, block, buf, staging, runs, c, Math.min(colCount, c + colsPerStep));
      yield;
    }
  }
  if (layout.kind === 'square' && isDiagonal(block)) {
    for (let r = 0; r < rowCount; r += rowsPerStep) {
      copySymmetricRows(layout, block, buf, staging, runs, r, Math.min(rowCount, r + rowsPerStep));
      yield;
    }
  }
  if (layout.kind === 'condensed') {
    let from = 0;
    for (let c = 0; c < colCount; c += colsPerStep) {
      from = copyCondensed(layout, block, buf, staging, runs, c, Math.min(colCount, c + colsPerStep), from);
      yield;
    }
  }
}

/** Block rows [r0, r1) as they are: one run per row (one run for the block when it spans every column). */
function copyRows(layout: NpyFileLayout, block: BlockInfo, buf: FloatArray, staging: FloatArray, runs: StagedRun[], r0: number, r1: number): void {
  const { rowFirst, colFirst, colCount } = block;
  staging.set(buf.subarray(r0 * colCount, r1 * colCount), r0 * colCount);
  for (let k = r0; k < r1; k++) push(runs, (rowFirst + k) * layout.nCols + colFirst, k * colCount, colCount);
}

/** The mirror of block columns [c0, c1): block column c is file row colFirst + c, from column rowFirst on. */
function copyMirror(layout: NpyFileLayout, block: BlockInfo, buf: FloatArray, staging: FloatArray, runs: StagedRun[], c0: number, c1: number): void {
  const { rowFirst, rowCount, colFirst, colCount } = block;
  const base = rowCount * colCount;
  for (let k = c0; k < c1; k++) {
    const from = base + k * rowCount;
    for (let r = 0; r < rowCount; r++) staging[from + r] = buf[r * colCount + k] as number;
    push(runs, (colFirst + k) * layout.nCols + rowFirst, from, rowCount);
  }
}

/** Rows [r0, r1) of a band against itself: the symmetric square sub-matrix, built from its lower triangle. */
function copySymmetricRows(layout: NpyFileLayout, block: BlockInfo, buf: FloatArray, staging: FloatArray, runs: StagedRun[], r0: number, r1: number): void {
  const { rowFirst, colFirst, colCount } = block;
  for (let k = r0; k < r1; k++) {
    const row = k * colCount;
    for (let c = 0; c <= k; c++) staging[row + c] = buf[row + c] as number;
    for (let c = k + 1; c < colCount; c++) {
      const v = buf[row + c] as number;
      if (v !== 0) throw skipped(block, rowFirst + k, colFirst + c, v, 'a square result takes only entries with i >= j from a block, so the kernel must leave the upper triangle at 0');
      staging[row + c] = buf[c * colCount + k] as number;
    }
    push(runs, (rowFirst + k) * layout.nCols + colFirst, row, colCount);
  }
}

/**
 * Block columns [c0, c1) into scipy's order: column j holds (i, j), i > j, which is scipy's (j, i),
 * consecutive along i from condensedAt(n, j, i). Returns where the next column goes in `staging`.
 */
function copyCondensed(layout: NpyFileLayout, block: BlockInfo, buf: FloatArray, staging: FloatArray, runs: StagedRun[], c0: number, c1: number, from: number): number {
  const { rowFirst, rowCount, colFirst, colCount } = block;
  for (let k = c0; k < c1; k++) {
    const j = colFirst + k;
    const first = Math.max(j + 1 - rowFirst, 0);
    for (let r = 0; r < Math.min(first, rowCount); r++) {
      const v = buf[r * colCount + k] as number;
      if (v !== 0) throw skipped(block, rowFirst + r, j, v, 'a condensed result keeps only entries with i > j, so the kernel must leave the diagonal and the upper triangle at 0');
    }
    if (first >= rowCount) continue;
    for (let r = first; r < rowCount; r++) staging[from + r - first] = buf[r * colCount + k] as number;
    push(runs, condensedAt(layout.nCols, j, rowFirst + first), from, rowCount - first);
    from += rowCount - first;
  }
  return from;
}

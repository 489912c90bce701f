/**
 * Staging turns one block's dense result buffer into the pieces of a result file it fills: a
 * contiguous staging buffer and a list of runs, each run a stretch of the staging buffer that goes
 * to one stretch of the file. A square file receives each block twice (the block and its mirror
 * above the diagonal), a condensed file receives the block's columns (scipy's rows), a dense file
 * its rows.
 *
 * Staging runs on the file writer's thread (fileWriterThread.ts), or for a small result on the main
 * thread a few lines at a time (mainThreadFileWriter.ts), so a block of millions of pairs never
 * stalls the event loop.
 */
import { LogicError } from '../core/errors.js';
import type { BlockInfo } from './blockScheduler.js';
import { condensedAt } from './distanceMatrix.js';
import type { FloatArray } from './floatArray.js';
import type { NpyFileLayout } from './npyLayout.js';

/** `length` elements of the staging buffer from `from` go to element `at` of the file's data. */
export interface StagedRun {
  at: number;
  from: number;
  length: number;
}

/** A staging buffer and the file runs it fills: a block's whole staging, or one half of it (see {@link stageBlockParts}). */
export interface StagedPart {
  readonly data: FloatArray;
  readonly runs: StagedRun[];
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
 * Lines of `block` that {@link stageLines} can stage apart: its rows, or for a condensed file its
 * columns (scipy's rows).
 *
 * @example stagingLines(condensedLayout, block) // block.colCount
 */
export function stagingLines(layout: NpyFileLayout, block: BlockInfo): number {
  return layout.kind === 'condensed' ? block.colCount : block.rowCount;
}

/**
 * Elements of `block`'s staging that one of its lines fills (the most, for a condensed file): what
 * a step of {@link stageLines} costs per line.
 *
 * @example lineElements(squareLayout, offDiagonalBlock) // 2 * colCount: the row and its mirror
 */
export function lineElements(layout: NpyFileLayout, block: BlockInfo): number {
  if (layout.kind === 'condensed') return block.rowCount;
  return layout.kind === 'square' && !isDiagonal(block) ? 2 * block.colCount : block.colCount;
}

/**
 * Copies `block`'s results from `buf` (row-major, `colCount` per row) into `staging` and appends
 * the file runs to `runs`. `staging` must hold {@link stagedElements} elements of the layout's dtype.
 *
 * In a square file the diagonal comes from the block (0 for distances, the self inner product for
 * kernels); entries above the diagonal inside `buf` must be 0, as in the in-memory writers.
 *
 * @throws {LogicError} when the block leaves a non-zero where the layout keeps nothing.
 */
export function stageBlock(layout: NpyFileLayout, block: BlockInfo, buf: FloatArray, staging: FloatArray, runs: StagedRun[]): void {
  stageLines(layout, block, buf, staging, 0, stagingLines(layout, block));
  stagedRuns(layout, block, runs);
}

/**
 * Copies lines `[first, end)` of `block` (see {@link stagingLines}) from `buf` into their places
 * in `staging`, where {@link stageBlock} would put them: staging a block's lines in several calls
 * fills `staging` exactly as one call does, so the main thread can stage a large block a step at
 * a time.
 *
 * @throws {LogicError} as {@link stageBlock}, for the lines staged.
 * @example
 * for (let first = 0; first < stagingLines(layout, block); first += 32) stageLines(layout, block, buf, staging, first, Math.min(first + 32, stagingLines(layout, block)));
 */
export function stageLines(layout: NpyFileLayout, block: BlockInfo, buf: FloatArray, staging: FloatArray, first: number, end: number): void {
  const { colCount } = block;
  switch (layout.kind) {
    case 'dense':
      staging.set(buf.subarray(first * colCount, end * colCount), first * colCount);
      return;
    case 'square':
      if (isDiagonal(block)) {
        copySymmetricRows(block, buf, staging, first, end);
      } else {
        staging.set(buf.subarray(first * colCount, end * colCount), first * colCount);
        copyMirror(block, buf, staging, first, end);
      }
      return;
    case 'condensed':
      copyCondensed(block, buf, staging, first, end);
  }
}

/**
 * Appends the file runs of `block`'s staging (as {@link stageBlock} fills it) to `runs`.
 *
 * @example stagedRuns(squareLayout, offDiagonalBlock, runs); // rowCount runs, then colCount mirror runs
 */
export function stagedRuns(layout: NpyFileLayout, block: BlockInfo, runs: StagedRun[]): void {
  const { rowFirst, rowCount, colFirst, colCount } = block;
  switch (layout.kind) {
    case 'dense':
      rowRuns(layout, block, runs);
      return;
    case 'square':
      rowRuns(layout, block, runs);
      if (isDiagonal(block)) return;
      mirrorRuns(layout, block, rowCount * colCount, runs);
      return;
    case 'condensed': {
      let from = 0;
      for (let k = 0; k < colCount; k++) {
        const kept = condensedKept(block, k);
        push(runs, condensedAt(layout.nCols, colFirst + k, rowFirst + rowCount - kept), from, kept);
        from += kept;
      }
    }
  }
}

/**
 * Stages `block` into buffers of `take(elements)` (each at least that long): an
 * off-diagonal block of a square file in two, the block's rows in one and its mirror in the other,
 * so that each half can be freed once its part of the file is written (fileOrderWrites.ts); any
 * other block in one, as {@link stageBlock} stages it.
 *
 * @throws {LogicError} as {@link stageBlock}.
 * @example stageBlockParts(squareLayout, offDiagonalBlock, buf, (n) => new Float64Array(n)).length // 2
 */
export function stageBlockParts(layout: NpyFileLayout, block: BlockInfo, buf: FloatArray, take: (elements: number) => FloatArray): StagedPart[] {
  if (layout.kind !== 'square' || isDiagonal(block)) {
    const part = { data: take(stagedElements(layout, block)), runs: [] };
    stageBlock(layout, block, buf, part.data, part.runs);
    return [part];
  }
  const { rowCount, colCount } = block;
  const direct = { data: take(rowCount * colCount), runs: [] };
  direct.data.set(buf.subarray(0, rowCount * colCount));
  rowRuns(layout, block, direct.runs);
  const mirror = { data: take(rowCount * colCount), runs: [] };
  copyMirror(block, buf, mirror.data, 0, rowCount, 0);
  mirrorRuns(layout, block, 0, mirror.runs);
  return [direct, mirror];
}

/** The mirror's runs, staged from `base` on: block column k is file row colFirst + k, from column rowFirst on. */
function mirrorRuns(layout: NpyFileLayout, block: BlockInfo, base: number, runs: StagedRun[]): void {
  const { rowFirst, rowCount, colFirst, colCount } = block;
  for (let k = 0; k < colCount; k++) push(runs, (colFirst + k) * layout.nCols + rowFirst, base + k * rowCount, rowCount);
}

/** The block's rows as they are: one run per row (one run for the block when it spans every column). */
function rowRuns(layout: NpyFileLayout, block: BlockInfo, runs: StagedRun[]): void {
  const { rowFirst, rowCount, colFirst, colCount } = block;
  for (let k = 0; k < rowCount; k++) push(runs, (rowFirst + k) * layout.nCols + colFirst, k * colCount, colCount);
}

/**
 * The mirror is a transpose, done in square tiles of this side: a tile's source rows and target
 * rows both stay in cache while it is copied, where a column at a time would fetch a cache line per
 * element (measured: about twice as fast for 1,024 x 1,024 float64 blocks).
 */
const MIRROR_TILE = 32;

/** Rows `[first, end)` of the block into its mirror from `base` on (after the block, unless given): block column k goes to `base + k * rowCount`. */
function copyMirror(block: BlockInfo, buf: FloatArray, staging: FloatArray, first: number, end: number, base = block.rowCount * block.colCount): void {
  const { rowCount, colCount } = block;
  for (let r0 = first; r0 < end; r0 += MIRROR_TILE) {
    const r1 = Math.min(end, r0 + MIRROR_TILE);
    for (let c0 = 0; c0 < colCount; c0 += MIRROR_TILE) {
      const c1 = Math.min(colCount, c0 + MIRROR_TILE);
      for (let k = c0; k < c1; k++) {
        const to = base + k * rowCount;
        for (let r = r0; r < r1; r++) staging[to + r] = buf[r * colCount + k] as number;
      }
    }
  }
}

/** Rows `[first, end)` of a band against itself: the symmetric square sub-matrix, built from its lower triangle. */
function copySymmetricRows(block: BlockInfo, buf: FloatArray, staging: FloatArray, first: number, end: number): void {
  const { rowFirst, colFirst, colCount } = block;
  for (let k = first; k < end; k++) {
    const row = k * colCount;
    for (let c = 0; c <= k; c++) staging[row + c] = buf[row + c] as number;
    for (let c = k + 1; c < colCount; c++) {
      const v = buf[row + c] as number;
      if (v !== 0) throw skipped(block, rowFirst + k, colFirst + c, v, 'a square result takes only entries with i >= j from a block, so the kernel must leave the upper triangle at 0');
    }
  }
  // The upper triangle is the lower one transposed, in tiles as in copyMirror: a column at a time
  // costs a cache line per element (a diagonal block of 1,024 float64 took 4.0 to 4.4 ms, as long
  // as an off-diagonal block with its mirror; in tiles 3.2 ms).
  for (let r0 = first; r0 < end; r0 += MIRROR_TILE) {
    const r1 = Math.min(end, r0 + MIRROR_TILE);
    for (let c0 = r0; c0 < colCount; c0 += MIRROR_TILE) {
      const c1 = Math.min(colCount, c0 + MIRROR_TILE);
      for (let k = r0; k < r1; k++) {
        const row = k * colCount;
        for (let c = Math.max(c0, k + 1); c < c1; c++) staging[row + c] = buf[c * colCount + k] as number;
      }
    }
  }
}

/** Elements of block column k that a condensed file keeps: rows i > j, the last ones of the column. */
function condensedKept(block: BlockInfo, k: number): number {
  return block.rowCount - Math.min(Math.max(block.colFirst + k + 1 - block.rowFirst, 0), block.rowCount);
}

/**
 * Block columns `[first, end)` into scipy's order: column j holds (i, j), i > j, which is scipy's
 * (j, i), consecutive along i from condensedAt(n, j, i). Each column's kept part follows the kept
 * parts of the columns before it in `staging`.
 */
function copyCondensed(block: BlockInfo, buf: FloatArray, staging: FloatArray, first: number, end: number): void {
  const { rowFirst, rowCount, colCount } = block;
  let from = 0;
  for (let k = 0; k < first; k++) from += condensedKept(block, k);
  for (let k = first; k < end; k++) {
    const j = block.colFirst + k;
    const start = rowCount - condensedKept(block, k);
    for (let r = 0; r < start; r++) {
      const v = buf[r * colCount + k] as number;
      if (v !== 0) throw skipped(block, rowFirst + r, j, v, 'a condensed result keeps only entries with i > j, so the kernel must leave the diagonal and the upper triangle at 0');
    }
    for (let r = start; r < rowCount; r++) staging[from + r - start] = buf[r * colCount + k] as number;
    from += rowCount - start;
  }
}

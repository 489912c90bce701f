/**
 * Result writers scatter one block's dense result buffer into the final output container. The
 * pipeline calls `write` once per block, as soon as that block's buffer is back on the host.
 *
 * Blocks of one schedule never overlap, so writes from different blocks never touch the same
 * output element and need no locking; a writer may be called for blocks in any order.
 */
import { LogicError, OptionError, invariant } from '../core/errors.js';
import { checkInteger } from '../core/validate.js';
import type { BlockInfo } from './blockScheduler.js';
import type { DenseTensor } from './denseTensor.js';
import { condensedAt, type DistanceMatrix } from './distanceMatrix.js';
import type { FloatArray } from './floatArray.js';
import type { SymmetricMatrix } from './symmetricMatrix.js';

/** Scatters block results into one output. */
export interface ResultWriter {
  /**
   * Copies `block`'s results from `buf` into the output. `buf` holds the block row-major: the
   * value of pair (rowFirst + r, colFirst + c) is at `r * colCount + c`; elements past
   * `rowCount * colCount` are ignored, so one buffer sized for the largest block can be reused.
   *
   * A writer that returns a promise (a file sink) holds the pipeline until it resolves: `buf` is
   * reused only then, which is how a slow writer applies backpressure.
   *
   * @throws {LogicError} when the block lies outside the output, the buffer is too short, or the
   * computation left a non-zero value where the output keeps nothing.
   */
  write(block: BlockInfo, buf: FloatArray): void | Promise<void>;

  /**
   * As {@link ResultWriter.write}, for a buffer that holds the block column-major: the value of
   * pair (rowFirst + r, colFirst + c) at `c * rowCount + r`. A writer has it where that layout is
   * the cheaper one to scatter; a device that can compute in either layout then uses it.
   */
  writeColumns?(block: BlockInfo, buf: FloatArray): void | Promise<void>;
}

function blockName(block: BlockInfo): string {
  const rows = `[${block.rowFirst}, ${block.rowFirst + block.rowCount - 1}]`;
  const cols = `[${block.colFirst}, ${block.colFirst + block.colCount - 1}]`;
  return `block ${block.index} (rows ${rows}, cols ${cols})`;
}

function checkBlock(block: BlockInfo, buf: FloatArray, nRows: number, nCols: number): void {
  invariant(
    block.rowFirst >= 0 && block.colFirst >= 0 && block.rowFirst + block.rowCount <= nRows && block.colFirst + block.colCount <= nCols,
    `${blockName(block)} lies outside the ${nRows} x ${nCols} output`,
  );
  invariant(
    buf.length >= block.rowCount * block.colCount,
    `${blockName(block)} needs a buffer of ${block.rowCount * block.colCount} elements, got ${buf.length}`,
  );
}

/**
 * Shared scatter for packed lower-triangle storage. Row i keeps columns `j <= i - skip` (skip = 1
 * drops the diagonal) at `i * (i + 1) / 2 - i * skip + j`, so the kept part of each block row is one
 * contiguous run in both the buffer and the storage and moves with a single `set`; the rest of the
 * row must be zero, because a non-zero there means the kernel computed a pair it should have skipped.
 */
function scatterTriangle(block: BlockInfo, buf: FloatArray, storage: FloatArray, n: number, skip: 0 | 1, rule: string): void {
  checkBlock(block, buf, n, n);
  checkSkippedZero(block, buf, skip, rule);
  const { rowFirst, rowCount, colFirst, colCount } = block;
  for (let r = 0; r < rowCount; r++) {
    const i = rowFirst + r;
    const rowStart = r * colCount;
    const kept = keptColumns(i, colFirst, colCount, skip);
    if (kept > 0) storage.set(buf.subarray(rowStart, rowStart + kept), (i * (i + 1)) / 2 - i * skip + colFirst);
  }
}

/** Columns of block row i (from colFirst) that a triangle keeps: j <= i - skip. */
function keptColumns(i: number, colFirst: number, colCount: number, skip: 0 | 1): number {
  return Math.min(Math.max(i - skip - colFirst + 1, 0), colCount);
}

/** A non-zero where a triangle keeps nothing means the kernel computed a pair it should have skipped. */
function checkSkippedZero(block: BlockInfo, buf: FloatArray, skip: 0 | 1, rule: string): void {
  const { rowFirst, rowCount, colFirst, colCount } = block;
  for (let r = 0; r < rowCount; r++) {
    const i = rowFirst + r;
    for (let c = keptColumns(i, colFirst, colCount, skip); c < colCount; c++) {
      const v = buf[r * colCount + c] as number;
      if (v !== 0) {
        throw new LogicError(`${blockName(block)} holds ${v} at skipped entry (${i}, ${colFirst + c}); ${rule}`);
      }
    }
  }
}

const DISTANCE_MATRIX_RULE = 'a DistanceMatrix keeps only entries with i > j, so the kernel must leave the diagonal and the upper triangle at 0';

/** Block rows a DistanceMatrixWriter moves per pass over the block's columns. */
const TRANSPOSE_TILE = 32;

/**
 * Writes blocks into a {@link DistanceMatrix}: entries with `i > j` only, each to the place of
 * (j, i) in scipy's condensed order. Along a block column j, consecutive rows i are consecutive in
 * that order, so each column's kept part moves as one run (read with the block's row stride).
 *
 * @example
 * const writer = new DistanceMatrixWriter(new DistanceMatrix(scheduler.nRows));
 * for (const block of scheduler.blocks) writer.write(block, resultOf(block));
 */
export class DistanceMatrixWriter implements ResultWriter {
  readonly #target: DistanceMatrix;

  constructor(target: DistanceMatrix) {
    this.#target = target;
  }

  /** @throws {LogicError} as {@link ResultWriter.write}; the diagonal and upper triangle must be exactly 0. */
  write(block: BlockInfo, buf: FloatArray): void {
    const n = this.#target.n;
    checkBlock(block, buf, n, n);
    checkSkippedZero(block, buf, 1, DISTANCE_MATRIX_RULE);
    const storage = this.#target.condensed;
    const { rowFirst, rowCount, colFirst, colCount } = block;
    // A column of a block is read with a stride of a whole block row; in tiles of TRANSPOSE_TILE
    // rows the lines read for one column are still cached for the next, where a whole column at
    // once (1,023 rows of a GPU block) missed the cache at every element.
    for (let rowTile = 0; rowTile < rowCount; rowTile += TRANSPOSE_TILE) {
      const rowEnd = Math.min(rowTile + TRANSPOSE_TILE, rowCount);
      for (let c = 0; c < colCount; c++) {
        const j = colFirst + c;
        const r0 = Math.max(j + 1 - rowFirst, rowTile);
        if (r0 >= rowEnd) continue;
        // (i, j) with i > j is scipy's (j, i), at condensedAt(n, j, i): i - (j + 1) past (j, j + 1).
        let at = condensedAt(n, j, rowFirst + r0);
        for (let r = r0; r < rowEnd; r++, at++) storage[at] = buf[r * colCount + c] as number;
      }
    }
  }

  /**
   * A column-major block: the kept part of each block column is one run in the buffer and in the
   * condensed order, so it moves as one `set`, where a row-major block is a transpose whose writes
   * miss the cache (5.4 ns a pair for GPU blocks of side 724 at N = 16,000, against the GPU's 9).
   *
   * @throws {LogicError} as {@link ResultWriter.write}.
   */
  writeColumns(block: BlockInfo, buf: FloatArray): void {
    const n = this.#target.n;
    checkBlock(block, buf, n, n);
    const storage = this.#target.condensed;
    const { rowFirst, rowCount, colFirst, colCount } = block;
    for (let c = 0; c < colCount; c++) {
      const j = colFirst + c;
      const column = c * rowCount;
      // Rows r < r0 hold (i, j) with i <= j, which the condensed order does not keep.
      const r0 = Math.min(Math.max(j + 1 - rowFirst, 0), rowCount);
      for (let r = 0; r < r0; r++) {
        const v = buf[column + r] as number;
        if (v !== 0) throw new LogicError(`${blockName(block)} holds ${v} at skipped entry (${rowFirst + r}, ${j}); ${DISTANCE_MATRIX_RULE}`);
      }
      if (r0 < rowCount) storage.set(buf.subarray(column + r0, column + rowCount), condensedAt(n, j, rowFirst + r0));
    }
  }
}

/**
 * Writes blocks into a {@link SymmetricMatrix}: entries with `i >= j` only.
 *
 * @example
 * const writer = new SymmetricMatrixWriter(new SymmetricMatrix(scheduler.nRows));
 */
export class SymmetricMatrixWriter implements ResultWriter {
  readonly #target: SymmetricMatrix;

  constructor(target: SymmetricMatrix) {
    this.#target = target;
  }

  /** @throws {LogicError} as {@link ResultWriter.write}; the upper triangle must be exactly 0. */
  write(block: BlockInfo, buf: FloatArray): void {
    const rule = 'a SymmetricMatrix keeps only entries with i >= j, so the kernel must leave the upper triangle at 0';
    scatterTriangle(block, buf, this.#target.packed, this.#target.n, 0, rule);
  }
}

/**
 * Writes blocks into a {@link DenseTensor} viewed as an `nRows x nCols` matrix: every entry, at
 * row-major offset `i * nCols + j`. For cdist the tensor's shape is `(*X.shape, *Y.shape)` and
 * `nCols` is the product of `Y.shape`; the flat offsets coincide, so no reshape is needed.
 *
 * @example
 * const out = new DenseTensor([2, 3, 4]);      // X.shape = [2, 3], Y.shape = [4]
 * const writer = new DenseWriter(out, 4);      // 6 x 4 pairs
 */
export class DenseWriter implements ResultWriter {
  readonly #target: DenseTensor;
  readonly #nRows: number;
  readonly #nCols: number;

  /**
   * @param nCols number of columns of the flattened matrix; default the last extent (1 for rank 0).
   * @throws {OptionError} when `nCols` is not an integer >= 0 dividing the tensor's size.
   */
  constructor(target: DenseTensor, nCols: number = target.shape[target.shape.length - 1] ?? 1) {
    checkInteger('nCols', nCols, 0, Number.MAX_SAFE_INTEGER);
    const size = target.size;
    if (nCols === 0 ? size !== 0 : size % nCols !== 0) {
      throw new OptionError(`nCols = ${nCols} does not divide the size ${size} of a tensor of shape [${target.shape.join(', ')}]`);
    }
    this.#target = target;
    this.#nCols = nCols;
    this.#nRows = nCols === 0 ? 0 : size / nCols;
  }

  /** @throws {LogicError} as {@link ResultWriter.write}. */
  write(block: BlockInfo, buf: FloatArray): void {
    checkBlock(block, buf, this.#nRows, this.#nCols);
    const { rowFirst, rowCount, colFirst, colCount } = block;
    const data = this.#target.data;
    for (let r = 0; r < rowCount; r++) {
      data.set(buf.subarray(r * colCount, (r + 1) * colCount), (rowFirst + r) * this.#nCols + colFirst);
    }
  }
}

/**
 * The block scheduler cuts an `nRows x nCols` pairwise matrix into 2-D blocks small enough for one
 * device output buffer, drops the blocks a symmetric operation never needs, and orders the rest so
 * the largest go first. It is pure arithmetic: nothing here allocates device memory or knows what
 * the rows and columns are.
 */
import { OptionError } from '../core/errors.js';
import { checkInteger, checkOneOf } from '../core/validate.js';

// The budget that feeds `maxOutputElements` is its own concept; re-exported so schedulers and
// budgets come from one import.
export { maxOutputElementsFor } from './outputBudget.js';

const MAX_COUNT = Number.MAX_SAFE_INTEGER;

/** An inclusive index range `[first, last]` along one axis of the matrix. */
export interface Band {
  readonly first: number;
  readonly last: number;
}

/**
 * Chops `[0, n)` into consecutive bands of `side` indices; the last band keeps the remainder.
 *
 * @throws {OptionError} when `side` is not an integer >= 1 or `n` not an integer >= 0.
 * @example
 * subdivide(3, 10); // [0,2] [3,5] [6,8] [9,9]
 * subdivide(5, 3);  // [0,2]
 * subdivide(4, 0);  // []
 */
export function subdivide(side: number, n: number): Band[] {
  checkInteger('side', side, 1, MAX_COUNT);
  checkInteger('n', n, 0, MAX_COUNT);
  const bands: Band[] = [];
  for (let first = 0; first < n; first += side) {
    bands.push(Object.freeze({ first, last: Math.min(first + side, n) - 1 }));
  }
  return bands;
}

/**
 * Which blocks a schedule keeps. `'lowerTriangle'` serves symmetric operations (pdist, kernel
 * matrices) on a square matrix and drops blocks wholly above the diagonal; `'full'` keeps every block
 * of a possibly rectangular matrix (cdist).
 */
export type BlockMode = 'lowerTriangle' | 'full';

/** Every {@link BlockMode}, for validation and iteration. */
export const BLOCK_MODES: readonly BlockMode[] = ['lowerTriangle', 'full'];

/** One block of a schedule: rows `[rowFirst, rowFirst + rowCount)` x cols `[colFirst, colFirst + colCount)`. */
export interface BlockInfo {
  /** Position of this block in {@link BlockScheduler.blocks}, i.e. in execution order. */
  readonly index: number;
  readonly rowFirst: number;
  readonly rowCount: number;
  readonly colFirst: number;
  readonly colCount: number;
  /**
   * True when the block straddles the diagonal in `'lowerTriangle'` mode, so a triangle skip mode
   * leaves some of its pairs out. Always false in `'full'` mode, where every pair is computed.
   */
  readonly diagonal: boolean;
}

/** Options of {@link BlockScheduler}; see {@link BLOCK_SCHEDULER_DEFAULTS} for the optional ones. */
export interface BlockSchedulerOptions {
  /** Number of row items (integer >= 0). */
  nRows: number;
  /** Number of column items (integer >= 0); must equal `nRows` in `'lowerTriangle'` mode. */
  nCols: number;
  mode: BlockMode;
  /** Output scalars one device buffer may hold (integer >= 1); see {@link maxOutputElementsFor}. */
  maxOutputElements: number;
  /** How many blocks the budget should be divided into (integer >= 1), e.g. devices x 32. Default 1. */
  nSplitsHint?: number;
  /** Floor on the block side (integer >= 0), so launches keep enough threads busy. Default 0: no floor. */
  minBlockSide?: number;
}

/** Resolved defaults of the optional {@link BlockSchedulerOptions}. */
export const BLOCK_SCHEDULER_DEFAULTS = Object.freeze({ nSplitsHint: 1, minBlockSide: 0 });

/** Largest integer `s` with `s * s <= x`; corrects the float square root, which can be one off. */
function isqrt(x: number): number {
  let s = Math.floor(Math.sqrt(x));
  while (s * s > x) s--;
  while ((s + 1) * (s + 1) <= x) s++;
  return s;
}

/**
 * A 2-D block decomposition of a pairwise matrix, computed once at construction.
 *
 * The block side is `floor(sqrt(maxOutputElements / nSplitsHint))`, raised to `minBlockSide`, then
 * clamped to `[1, max(nRows, nCols)]`. Rows and columns are cut into bands of that side; every
 * (row band, column band) pair is a block, except that `'lowerTriangle'` mode drops a block when
 * `colBand.first > rowBand.last`. Blocks are ordered by descending work `rowCount * colCount`, ties
 * kept in row-major grid order, so the biggest blocks start first and small ones fill in at the end.
 *
 * Note that `minBlockSide` may make one block exceed `maxOutputElements`: a poorly occupied device
 * costs more than a budget overrun the caller chose to allow.
 *
 * @throws {OptionError} for an out-of-range option, or `'lowerTriangle'` with `nRows !== nCols`.
 * @example
 * const s = new BlockScheduler({ nRows: 9, nCols: 9, mode: 'lowerTriangle', maxOutputElements: 9 });
 * s.blockSide;     // 3
 * s.blocks.length; // 6: the blocks on and below the diagonal
 */
export class BlockScheduler {
  readonly #nRows: number;
  readonly #nCols: number;
  readonly #mode: BlockMode;
  readonly #blockSide: number;
  readonly #rowBands: readonly Band[];
  readonly #colBands: readonly Band[];
  readonly #blocks: readonly BlockInfo[];

  constructor(options: BlockSchedulerOptions) {
    const nRows = checkInteger('nRows', options.nRows, 0, MAX_COUNT);
    const nCols = checkInteger('nCols', options.nCols, 0, MAX_COUNT);
    const mode = checkOneOf('mode', options.mode, BLOCK_MODES);
    const maxOutputElements = checkInteger('maxOutputElements', options.maxOutputElements, 1, MAX_COUNT);
    const nSplitsHint = checkInteger('nSplitsHint', options.nSplitsHint ?? BLOCK_SCHEDULER_DEFAULTS.nSplitsHint, 1, MAX_COUNT);
    const minBlockSide = checkInteger('minBlockSide', options.minBlockSide ?? BLOCK_SCHEDULER_DEFAULTS.minBlockSide, 0, MAX_COUNT);
    if (mode === 'lowerTriangle' && nRows !== nCols) {
      throw new OptionError(`mode 'lowerTriangle' needs a square matrix, got nRows = ${nRows} and nCols = ${nCols}; use mode 'full' for a rectangular one`);
    }
    this.#nRows = nRows;
    this.#nCols = nCols;
    this.#mode = mode;

    // floor(sqrt(a / b)) equals floor(sqrt(floor(a / b))), so integer division loses nothing.
    let side = isqrt(Math.floor(maxOutputElements / nSplitsHint));
    side = Math.max(side, minBlockSide);
    side = Math.max(1, Math.min(side, Math.max(nRows, nCols)));
    this.#blockSide = side;
    this.#rowBands = Object.freeze(subdivide(side, nRows));
    this.#colBands = Object.freeze(subdivide(side, nCols));

    const candidates: Omit<BlockInfo, 'index'>[] = [];
    for (const row of this.#rowBands) {
      for (const col of this.#colBands) {
        if (mode === 'lowerTriangle' && col.first > row.last) continue;
        candidates.push({
          rowFirst: row.first,
          rowCount: row.last - row.first + 1,
          colFirst: col.first,
          colCount: col.last - col.first + 1,
          // Kept lower-triangle blocks already have col.first <= row.last; they reach the
          // diagonal exactly when some column is >= some row.
          diagonal: mode === 'lowerTriangle' && col.last >= row.first,
        });
      }
    }
    // Array.prototype.sort is stable, so equal work keeps the row-major order of `candidates`.
    candidates.sort((a, b) => b.rowCount * b.colCount - a.rowCount * a.colCount);
    this.#blocks = Object.freeze(candidates.map((c, index) => Object.freeze({ index, ...c })));
  }

  get nRows(): number {
    return this.#nRows;
  }

  get nCols(): number {
    return this.#nCols;
  }

  get mode(): BlockMode {
    return this.#mode;
  }

  /** Side length of a full block; edge blocks are smaller. */
  get blockSide(): number {
    return this.#blockSide;
  }

  /** `subdivide(blockSide, nRows)`: the row ranges blocks are cut along. */
  get rowBands(): readonly Band[] {
    return this.#rowBands;
  }

  /** `subdivide(blockSide, nCols)`: the column ranges blocks are cut along. */
  get colBands(): readonly Band[] {
    return this.#colBands;
  }

  /** The blocks in execution order (descending work). They never overlap. */
  get blocks(): readonly BlockInfo[] {
    return this.#blocks;
  }

  /** Largest `rowCount` of any block (0 when there are none): sizes row-side buffers once. */
  get maxBlockRows(): number {
    return this.#blocks.reduce((m, b) => Math.max(m, b.rowCount), 0);
  }

  /** Largest `colCount` of any block (0 when there are none): sizes column-side buffers once. */
  get maxBlockCols(): number {
    return this.#blocks.reduce((m, b) => Math.max(m, b.colCount), 0);
  }

  /** Largest `rowCount * colCount` of any block (0 when there are none): sizes output buffers once. */
  get maxBlockElements(): number {
    return this.#blocks.reduce((m, b) => Math.max(m, b.rowCount * b.colCount), 0);
  }

  /**
   * Number of (i, j) cells the blocks cover, counting the parts of diagonal blocks that a triangle
   * skip mode leaves out; `pairsInBlocks` in `triangleSkip.ts` counts only the computed ones.
   */
  get totalPairs(): number {
    return this.#blocks.reduce((sum, b) => sum + b.rowCount * b.colCount, 0);
  }
}

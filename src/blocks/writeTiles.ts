/**
 * Write tiles: the blocks of a result file grouped into square tiles of the block grid, `side`
 * bands by `side` bands, so that the file writer holds a tile's blocks until all of them are in and
 * then writes each file row of the tile as one run `side` blocks long (a square file's mirror
 * half as well) instead of one short run per block row.
 *
 * Why: a block row is a few KiB (1,024 float64), and the kernel's cost per byte of a positional
 * write falls with its length. Writing an 800 MB square file the way blocks come (one run per
 * block row and per mirror row, 100,000 writes) cost 0.41 to 0.43 s of system time on the
 * development machine; in tiles of 2 x 2 blocks 0.29 to 0.33 s, 3 x 3 0.26 to 0.28 s, 4 x 4
 * 0.23 to 0.25 s, and whole file rows in order 0.19 to 0.24 s. Tiles bound the staging memory
 * (whole row bands would need megabytes per row), and both halves of a square file get long runs,
 * which a row-band order gives only to one of them.
 *
 * The blocks are handed out tile by tile, so a tile completes soon after it starts and at most a
 * tile or two per device are staged at a time; the block indices (and so the journal) do not change.
 * The tiles go in the order that completes the file from its start (see fillOrder), so the file
 * writer can drop the complete start from the page cache as it goes (pageCache.ts): at N = 40,000
 * (12.8 GB) the pages the run holds peak at about a quarter of the file instead of all of it.
 */
import type { BlockInfo } from './blockScheduler.js';
import { stagedElements } from './blockStaging.js';
import type { NpyFileLayout } from './npyLayout.js';

/** The tiles of a schedule's blocks; see {@link planWriteTiles}. */
export interface WriteTiles {
  /** Bands a tile spans along each axis (1: every block is a tile of its own). */
  readonly side: number;
  /**
   * The blocks to compute, tile by tile, in the order that fills the file from its start (see
   * fillOrder: row bands of tiles for a dense file, column bands for square and condensed ones),
   * blocks row-major within a tile.
   */
  readonly blocks: readonly BlockInfo[];
  /** Tile of each block, by block index; -1 for indices not among `blocks`. */
  readonly tileOf: Int32Array;
  /** Blocks of each tile among `blocks`: a tile is written once that many have come in. */
  readonly tileBlocks: Int32Array;
  /** Elements the largest tile occupies in the file: the size of a tile's staging buffer. */
  readonly tileElements: number;
  /**
   * Bytes at the start of the file that hold their final values once tiles `0 .. t - 1` are
   * written (entry `t`, `tileBlocks.length + 1` entries; blocks not among `blocks` count as written):
   * what the file writer may drop from the page cache (see pageCache.ts).
   */
  readonly completeBefore: Float64Array;
}

/** Tiles wider than this gain little more (whole rows in order cost nearly as much as 4 x 4 tiles). */
const MAX_TILE_SIDE = 4;

/**
 * The file fills from its start band by band when the tiles go in this order: a dense file (rows
 * of the matrix one after another) row band by row band; a square file column band by column band
 * of the lower triangle, since column band c brings the mirror half of file row band c, whose other
 * half came with the column bands before it; a condensed file (scipy's order: pairs (i, j) by j,
 * then i) also column band by column band. Returns a block's band along that order and the bytes
 * at the start of the file complete once every band before band `g` is in.
 */
function fillOrder(layout: NpyFileLayout, span: number): { band: (b: BlockInfo) => number; bytesBefore: (g: number) => number } {
  const { header, elementBytes, nRows, nCols } = layout;
  const at = (elements: number) => header.length + elements * elementBytes;
  if (layout.kind === 'dense') return { band: (b) => Math.floor(b.rowFirst / span), bytesBefore: (g) => at(Math.min(nRows, g * span) * nCols) };
  if (layout.kind === 'square') return { band: (b) => Math.floor(b.colFirst / span), bytesBefore: (g) => at(Math.min(nRows, g * span) * nCols) };
  return {
    band: (b) => Math.floor(b.colFirst / span),
    // Columns j < J of the lower triangle hold (n - 1) + (n - 2) + ... + (n - J) pairs.
    bytesBefore: (g) => {
      const columns = Math.min(nRows, g * span);
      return at(columns * (nRows - 1) - (columns * (columns - 1)) / 2);
    },
  };
}

function tilesOfSide(layout: NpyFileLayout, blocks: readonly BlockInfo[], blockSide: number, indices: number, side: number, scheduleOrder = side === 1): WriteTiles {
  const span = blockSide * side;
  const fill = fillOrder(layout, span);
  const across = (b: BlockInfo) => Math.floor((layout.kind === 'dense' ? b.colFirst : b.rowFirst) / span);
  // Tiles of one block keep the schedule's order (largest blocks first, for the load's balance).
  const ordered = scheduleOrder ? [...blocks] : [...blocks].sort((a, b) => fill.band(a) - fill.band(b) || across(a) - across(b) || a.rowFirst - b.rowFirst || a.colFirst - b.colFirst);
  const key = (b: BlockInfo) => [fill.band(b), across(b)] as const;
  const tileOf = new Int32Array(indices).fill(-1);
  const counts: number[] = [];
  const elements: number[] = [];
  let last: readonly [number, number] | undefined;
  for (const b of ordered) {
    const k = key(b);
    if (last === undefined || k[0] !== last[0] || k[1] !== last[1]) {
      counts.push(0);
      elements.push(0);
      last = k;
    }
    const tile = counts.length - 1;
    tileOf[b.index] = tile;
    counts[tile]!++;
    elements[tile]! += stagedElements(layout, b);
  }
  return { side, blocks: ordered, tileOf, tileBlocks: Int32Array.from(counts), tileElements: elements.reduce((m, e) => Math.max(m, e), 0), completeBefore: completeBefore(layout, ordered, tileOf, counts.length, fill) };
}

/** See {@link WriteTiles.completeBefore}; `ordered` holds each tile's blocks one after another. */
function completeBefore(layout: NpyFileLayout, ordered: readonly BlockInfo[], tileOf: Int32Array, tiles: number, fill: ReturnType<typeof fillOrder>): Float64Array {
  const bands = ordered.reduce((m, b) => Math.max(m, fill.band(b) + 1), 0);
  // Blocks still to write per band; the first band with some left bounds the complete start.
  const left = new Int32Array(bands + 1);
  for (const b of ordered) left[fill.band(b)]!++;
  let first = 0;
  const advance = () => {
    while (first < bands && left[first] === 0) first++;
  };
  advance();
  const out = new Float64Array(tiles + 1);
  let k = 0;
  for (let t = 0; t < tiles; t++) {
    out[t] = fill.bytesBefore(first);
    for (; k < ordered.length && tileOf[ordered[k]!.index] === t; k++) left[fill.band(ordered[k]!)]!--;
    advance();
  }
  out[tiles] = layout.bytes;
  return out;
}

/**
 * Groups `blocks` (a subset of a schedule of `indices` blocks cut in bands of `blockSide`) into
 * the widest tiles of which two fit in `budgetBytes` of staging: one being filled while the one
 * before it is finished by another device.
 *
 * @example planWriteTiles(layout, sink.todo, 1024, 128 << 20).side // 2 for float64 blocks of 1,024
 */
export function planWriteTiles(layout: NpyFileLayout, blocks: readonly BlockInfo[], blockSide: number, indices: number, budgetBytes: number): WriteTiles {
  let plan = tilesOfSide(layout, blocks, Math.max(1, blockSide), indices, 1);
  for (let side = 2; side <= MAX_TILE_SIDE; side++) {
    const wider = tilesOfSide(layout, blocks, Math.max(1, blockSide), indices, side);
    if (2 * wider.tileElements * layout.elementBytes > budgetBytes) break;
    plan = wider;
  }
  return plan;
}

/**
 * Every block a tile of its own, in the order that fills the file from its start (see fillOrder),
 * for a writer that holds blocks until their stretch of the file is complete (fileOrderWrites.ts):
 * it gathers its writes across blocks, so wider tiles would only hold more.
 *
 * @example fileOrderTiles(layout, sink.todo, 625, 36).completeBefore[8] // row band 0 complete after column band 0
 */
export function fileOrderTiles(layout: NpyFileLayout, blocks: readonly BlockInfo[], blockSide: number, indices: number): WriteTiles {
  return tilesOfSide(layout, blocks, Math.max(1, blockSide), indices, 1, false);
}

/**
 * How far the start of the file is complete as tiles are written (by the file writer): a
 * tile counts once all its blocks are in, whatever order tiles finish in.
 *
 * @example
 * const start = new CompleteStart(tiles.tileBlocks, tiles.completeBefore);
 * start.written(0, tiles.tileBlocks[0]); // bytes at the file's start now final
 */
export class CompleteStart {
  readonly #left: Int32Array;
  readonly #completeBefore: Float64Array;
  #next = 0;

  constructor(tileBlocks: Int32Array, completeBefore: Float64Array) {
    this.#left = Int32Array.from(tileBlocks);
    this.#completeBefore = completeBefore;
  }

  /** Bytes at the file's start complete so far (0 when the plan says nothing about it). */
  get bytes(): number {
    return this.#completeBefore[this.#next] ?? 0;
  }

  /** Counts `blocks` more blocks of `tile` (a planned tile, or -1 for none) as written; returns {@link bytes}. */
  written(tile: number, blocks: number): number {
    if (tile >= 0 && tile < this.#left.length) this.#left[tile]! -= blocks;
    while (this.#next < this.#left.length && this.#left[this.#next]! <= 0) this.#next++;
    return this.bytes;
  }
}

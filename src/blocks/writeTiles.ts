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
 */
import type { BlockInfo } from './blockScheduler.js';
import { stagedElements } from './blockStaging.js';
import type { NpyFileLayout } from './npyLayout.js';

/** The tiles of a schedule's blocks; see {@link planWriteTiles}. */
export interface WriteTiles {
  /** Bands a tile spans along each axis (1: every block is a tile of its own). */
  readonly side: number;
  /** The blocks to compute, tile by tile (tiles in row-major order, blocks row-major within a tile). */
  readonly blocks: readonly BlockInfo[];
  /** Tile of each block, by block index; -1 for indices not among `blocks`. */
  readonly tileOf: Int32Array;
  /** Blocks of each tile among `blocks`: a tile is written once that many have come in. */
  readonly tileBlocks: Int32Array;
  /** Elements the largest tile occupies in the file: the size of a tile's staging buffer. */
  readonly tileElements: number;
}

/** Tiles wider than this gain little more (whole rows in order cost nearly as much as 4 x 4 tiles). */
const MAX_TILE_SIDE = 4;

function tilesOfSide(layout: NpyFileLayout, blocks: readonly BlockInfo[], blockSide: number, indices: number, side: number): WriteTiles {
  const key = (b: BlockInfo) => [Math.floor(b.rowFirst / blockSide / side), Math.floor(b.colFirst / blockSide / side)] as const;
  // Tiles of one block keep the schedule's order (largest blocks first, for the load's balance).
  const ordered = side === 1 ? [...blocks] : [...blocks].sort((a, b) => {
    const [ar, ac] = key(a);
    const [br, bc] = key(b);
    return ar - br || ac - bc || a.rowFirst - b.rowFirst || a.colFirst - b.colFirst;
  });
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
  return { side, blocks: ordered, tileOf, tileBlocks: Int32Array.from(counts), tileElements: elements.reduce((m, e) => Math.max(m, e), 0) };
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

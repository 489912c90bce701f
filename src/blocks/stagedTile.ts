/**
 * A write tile (see writeTiles.ts) while its blocks are staged: one buffer holding the staged
 * blocks one after another, the file runs they fill, and the blocks still to come. Both file
 * writers (the writer thread's and the main thread's) keep their open tiles in this form and cut a
 * finished tile into the same writes, so both write the same bytes in the same pieces.
 */
import type { BlockInfo } from './blockScheduler.js';
import type { StagedRun } from './blockStaging.js';
import type { FloatArray } from './floatArray.js';
import type { NpyFileLayout } from './npyLayout.js';

/** A tile being staged: its blocks' runs point into `data`, filled up to `used`. */
export interface StagedTile {
  /** The tile's number in the plan, or for a block without a tile `-1 - block.index`. */
  readonly id: number;
  readonly data: FloatArray;
  used: number;
  readonly runs: StagedRun[];
  readonly blocks: number[];
  /** Blocks of the tile not yet staged. */
  left: number;
}

/** Bytes that follow each other in the file from `position`: one positional gather write. */
export interface TileWrite {
  readonly position: number;
  readonly pieces: Uint8Array[];
}

/** At most this many buffers per `writev` (Linux's IOV_MAX is 1,024). */
const MAX_IOV = 1024;

/**
 * A new tile for `block` over `data`; a block whose index has no planned tile (-1 or beyond
 * `tileOf`) gets a tile of its own, numbered apart from the planned ones.
 *
 * @example openTile(block, tiles.tileOf, tiles.tileBlocks, new Float64Array(tiles.tileElements)).left // blocks it waits for
 */
export function openTile(block: BlockInfo, tileOf: Int32Array, tileBlocks: Int32Array, data: FloatArray): StagedTile {
  const id = tileIdOf(block, tileOf);
  return { id, data, used: 0, runs: [], blocks: [], left: id >= 0 ? (tileBlocks[id] ?? 1) : 1 };
}

/** The id of `block`'s tile: see {@link StagedTile.id}. */
export function tileIdOf(block: BlockInfo, tileOf: Int32Array): number {
  const id = tileOf[block.index] ?? -1;
  return id >= 0 ? id : -1 - block.index;
}

/**
 * Appends `runs` of a block staged from element `from` of the tile's buffer.
 *
 * @example addRuns(tile, blockRuns, tile.used); // before tile.used grows by the block's elements
 */
export function addRuns(tile: StagedTile, runs: readonly StagedRun[], from: number): void {
  for (const run of runs) tile.runs.push({ at: run.at, from: run.from + from, length: run.length });
}

/**
 * The tile's runs in file order, each chain of runs that continue each other in the file as one
 * write (see {@link gatheredWrites}).
 *
 * @example for (const { position, pieces } of tileWrites(layout, tile)) writevSync(fd, pieces, position);
 */
export function tileWrites(layout: NpyFileLayout, tile: StagedTile): Generator<TileWrite, void, undefined> {
  const bytes = new Uint8Array(tile.data.buffer, tile.data.byteOffset, tile.data.byteLength);
  return gatheredWrites(layout, tile.runs, () => bytes);
}

/**
 * `runs` (sorted here, in place) in file order, each chain of runs that continue each other in the
 * file as one write (at most {@link MAX_IOV} pieces): the fewer writes, the less the kernel costs
 * per byte. `source` gives the bytes of the staging buffer a run points into. The writes are made
 * as they are taken, so a writer with a few in flight never holds a whole tile's worth of them: on
 * the main thread, those that lived across collections of the young generation grew its old space
 * by 4-5 MiB in a pdist of 2,000 PCFs.
 *
 * @example for (const { position, pieces } of gatheredWrites(layout, runs, (run) => run.bytes)) writevSync(fd, pieces, position);
 */
export function* gatheredWrites<R extends StagedRun>(layout: NpyFileLayout, runs: R[], source: (run: R) => Uint8Array): Generator<TileWrite, void, undefined> {
  const size = layout.elementBytes;
  const base = layout.header.length;
  runs.sort((a, b) => a.at - b.at);
  let k = 0;
  while (k < runs.length) {
    const first = runs[k]!;
    const pieces: Uint8Array[] = [];
    let end = first.at;
    while (k < runs.length && runs[k]!.at === end && pieces.length < MAX_IOV) {
      const run = runs[k++]!;
      pieces.push(source(run).subarray(run.from * size, (run.from + run.length) * size));
      end += run.length;
    }
    yield { position: base + first.at * size, pieces };
  }
}

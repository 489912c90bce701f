/**
 * What both file writers do as tiles are written: count them toward the complete start of the file
 * (CompleteStart) and, when the writer was given the file's path, drop that start from the page
 * cache each time it grows (pageCache.ts).
 */
import { pageCacheRelease, type PageCacheRelease } from './pageCache.js';
import type { StagedTile } from './stagedTile.js';
import { CompleteStart } from './writeTiles.js';

/**
 * The complete start of one file, released from the page cache as it grows.
 *
 * @example
 * const start = new StartRelease(tiles.tileBlocks, tiles.completeBefore, 'd.npy');
 * start.written(tile); // after the tile's bytes are in the file
 */
export class StartRelease {
  readonly #start: CompleteStart;
  #release: PageCacheRelease | undefined;
  #released = 0;

  /** @param path the file to release pages of; undefined keeps them cached. */
  constructor(tileBlocks: Int32Array, completeBefore: Float64Array, path: string | undefined) {
    this.#start = new CompleteStart(tileBlocks, completeBefore);
    // Until the release is ready (an import and a WASI instance), pages stay cached.
    if (path !== undefined && completeBefore.length === tileBlocks.length + 1) {
      void pageCacheRelease(path).then((release) => {
        this.#release = release;
      });
    }
  }

  /** Counts `tile`'s blocks as written; drops the file's complete start from the page cache when it grew. */
  written(tile: Pick<StagedTile, 'id' | 'blocks'>): void {
    const complete = this.#start.written(tile.id, tile.blocks.length);
    if (this.#release === undefined || complete <= this.#released) return;
    // Each call also covers what the one before left: pages still dirty or in writeback then.
    this.#released = complete;
    this.#release(0, complete);
  }
}

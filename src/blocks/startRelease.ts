/**
 * What the file writers do as tiles are written: count them toward the complete start of the file
 * (CompleteStart) and, when the writer was given the file's path, drop that start from the page
 * cache each time it grows (pageCache.ts), or, to keep the pages, only start the writeback of what
 * is new in it: the same advice given once per stretch, right after its write, finds its pages
 * still dirty, which it writes back rather than drops.
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
  readonly #keep: boolean;

  /**
   * @param path the file to release pages of; undefined keeps them cached.
   * @param keep only start the writeback of each new stretch (see the file comment).
   */
  constructor(tileBlocks: Int32Array, completeBefore: Float64Array, path: string | undefined, keep = false) {
    this.#start = new CompleteStart(tileBlocks, completeBefore);
    this.#keep = keep;
    // Until the release is ready (an import and a WASI instance), pages stay cached.
    if (path !== undefined && completeBefore.length === tileBlocks.length + 1) {
      void pageCacheRelease(path).then((release) => {
        this.#release = release;
      });
    }
  }

  /** Counts `tile`'s blocks as written; drops the file's complete start from the page cache when it grew. */
  written(tile: Pick<StagedTile, 'id' | 'blocks'>): void {
    this.release(this.count(tile));
  }

  /**
   * Counts `tile`'s blocks toward the complete start and returns its bytes (0 when the plan says
   * nothing about it), releasing nothing: for a writer that writes that start later (fileOrderWrites.ts).
   */
  count(tile: Pick<StagedTile, 'id' | 'blocks'>): number {
    return this.#start.written(tile.id, tile.blocks.length);
  }

  /** Drops the file's first `bytes`, all of them written, from the page cache when they grew (or starts their writeback: `keep`). */
  release(bytes: number): void {
    if (this.#release === undefined || bytes <= this.#released) return;
    // Each drop also covers what the one before left: pages still dirty or in writeback then.
    const from = this.#keep ? this.#released : 0;
    this.#released = bytes;
    this.#release(from, bytes - from);
  }
}

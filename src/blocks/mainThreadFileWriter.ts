/**
 * The file writer of small results (see fileWriter.ts): on the main thread, without a thread of
 * its own. Each block is staged into its write tile a few lines at a time, with a turn of the event
 * loop after each 2 ms (stageInSteps), and each finished tile is written with positional writes,
 * synchronous ones in steps of a quarter millisecond while they are quick, else on libuv's pool
 * (steppedWrites.ts). A thread's isolate costs about 10 MiB of peak memory before
 * it stages anything: for a result of tens of megabytes more than its whole staging, while the main
 * thread mostly waits for the cores anyway.
 *
 * A tile's buffer stays busy until its writes end; `put` waits for one to come free once the
 * staging budget is held, so a disk slower than the computation holds the pipeline back. Blocks
 * are reported to `onWritten` only once their tile is written.
 */
import { LogicError } from '../core/errors.js';
import type { BlockInfo } from './blockScheduler.js';
import { stagedElements, stagedRuns, type StagedRun } from './blockStaging.js';
import { stageInSteps } from './eventLoopSteps.js';
import type { FileWriter, FileWriterOptions } from './fileWriter.js';
import { allocFloatArray, type FloatArray } from './floatArray.js';
import type { writePositional } from './positionalWrites.js';
import { steppedWrites } from './steppedWrites.js';
import { addRuns, openTile, tileIdOf, tileWrites, type StagedTile } from './stagedTile.js';
import { StartRelease } from './startRelease.js';

/** A tile and what still holds it: blocks being staged into it, and whether more may join. */
interface Tile extends StagedTile {
  /** Blocks being staged into the tile now: it is written only once none is. */
  staging: number;
  /** No more blocks join: complete, cut short for room, or drained. */
  sealed: boolean;
  /** Dropped unwritten (a drain with discard). */
  discarded: boolean;
  /** Written, failed or dropped: its buffer is back in the pool. */
  finished: boolean;
}

/**
 * How a {@link MainThreadFileWriter} writes its tiles: {@link steppedWrites}, or in tests a
 * stand-in that holds the writes back to show the backpressure.
 */
export type TileWriting = typeof writePositional;

/**
 * Streams blocks to one file from the main thread; see the file comment and {@link FileWriter}.
 *
 * @example
 * const writer = new MainThreadFileWriter({ fd, layout, blockElements, stagingElements: tiles.tileElements, tiles, slots: 1, onWritten: (b) => journal.add(b.index) });
 * for (const block of tiles.blocks) await writer.put(block, resultOf(block));
 * await writer.stop();
 */
export class MainThreadFileWriter implements FileWriter {
  readonly #options: FileWriterOptions;
  readonly #write: TileWriting;
  readonly #tileOf: Int32Array;
  readonly #tileBlocks: Int32Array;
  readonly #stagingBytes: number;
  readonly #tileBytes: number;
  /** Staging buffers not in use; buffers are kept for the next tile, as a fresh one would cost its page faults again. */
  readonly #pool: FloatArray[] = [];
  #allocated = 0;
  /** Tiles that blocks may still join, by id. */
  readonly #open = new Map<number, Tile>();
  /** Tiles being written. */
  #writing = 0;
  /** Blocks put and not yet written, failed or discarded, by index. */
  readonly #unsettled = new Map<number, BlockInfo>();
  readonly #scratch: StagedRun[] = [];
  #freed: Array<() => void> = [];
  #drained: Array<() => void> = [];
  #failure: { error: Error } | undefined;
  /** Drains waiting; while one does, a tile that a put leaves incomplete goes out at once (or, `#discarding`, is dropped). */
  #drains = 0;
  #discarding = false;
  #stopped = false;
  readonly #start: StartRelease;

  /** @param write how tiles are written; default a {@link steppedWrites} of this writer's own. */
  constructor(options: FileWriterOptions, write: TileWriting = steppedWrites()) {
    this.#options = options;
    this.#write = write;
    this.#tileOf = options.tiles?.tileOf ?? new Int32Array(0);
    this.#tileBlocks = options.tiles?.tileBlocks ?? new Int32Array(0);
    this.#tileBytes = Math.max(1, options.stagingElements) * options.layout.elementBytes;
    this.#stagingBytes = options.stagingBytes ?? 2 * this.#tileBytes;
    this.#start = new StartRelease(this.#tileBlocks, options.tiles?.completeBefore ?? new Float64Array(0), options.releasePath);
  }

  /** The first failure (a write error, a block that broke the layout's rules), if any. */
  get failure(): Error | undefined {
    return this.#failure?.error;
  }

  /**
   * Stages `block`'s results from `buf` into its tile, a few lines per turn of the event loop, and
   * starts the tile's writes once its last block is in. Resolves once `buf` may be reused; first
   * waits while the staging budget is held by tiles being written.
   *
   * @throws (rejects) the writer's first failure, as given by {@link failure}; a LogicError naming
   *   the block when it leaves a value where the layout keeps nothing.
   */
  async put(block: BlockInfo, buf: FloatArray): Promise<void> {
    const { layout } = this.#options;
    const elements = stagedElements(layout, block);
    const { tile, from } = await this.#tileFor(block, elements);
    this.#unsettled.set(block.index, block);
    this.#scratch.length = 0;
    stagedRuns(layout, block, this.#scratch);
    addRuns(tile, this.#scratch, from);
    try {
      await stageInSteps(layout, block, buf, tile.data.subarray(from, from + elements));
    } catch (error) {
      this.#fail(error instanceof Error ? error : new Error(String(error)));
      throw error;
    } finally {
      tile.staging--;
      tile.left--;
      if (tile.left <= 0) this.#seal(tile);
      else if (this.#drains > 0) this.#close(tile, this.#discarding);
      else this.#finishIfDone(tile);
    }
  }

  async drain(discard = false): Promise<void> {
    this.#drains++;
    this.#discarding ||= discard;
    try {
      for (const tile of [...this.#open.values()]) this.#close(tile, this.#discarding);
      while (this.#unsettled.size > 0) await new Promise<void>((resolve) => this.#drained.push(resolve));
    } finally {
      if (--this.#drains === 0) this.#discarding = false;
    }
  }

  async stop(discard = false): Promise<void> {
    await this.drain(discard);
    this.#stopped = true;
  }

  /**
   * The open tile of `block`, opened now if need be, with `elements` of room taken for it from
   * `from` on; waits for a staging buffer while the budget is held. The room is taken here, in
   * the same turn as the look-up: between this method's return and its caller's next step other
   * puts run, and one that seals the tile would otherwise write it without this block (its bytes
   * never written, the block reported written all the same).
   */
  async #tileFor(block: BlockInfo, elements: number): Promise<{ tile: Tile; from: number }> {
    const id = tileIdOf(block, this.#tileOf);
    for (;;) {
      this.#throwIfFailed();
      if (this.#stopped) throw new LogicError('MainThreadFileWriter.put after stop');
      const open = this.#open.get(id);
      if (open !== undefined && open.used + elements <= open.data.length) return this.#take(open, block, elements);
      // A block larger than its tile's room (none is, unless the plan was left out): the tile goes as far as it got.
      if (open !== undefined) this.#seal(open);
      const data = this.#buffer(elements);
      if (data !== undefined) {
        const tile: Tile = { ...openTile(block, this.#tileOf, this.#tileBlocks, data), staging: 0, sealed: false, discarded: false, finished: false };
        this.#open.set(id, tile);
        return this.#take(tile, block, elements);
      }
      // Out of staging memory with no write to wait for (blocks out of tile order, e.g. from a
      // cluster): the oldest open tile goes out as far as it got.
      const oldest = this.#open.values().next().value;
      if (this.#writing === 0 && oldest !== undefined) this.#seal(oldest);
      else await new Promise<void>((resolve) => this.#freed.push(resolve));
    }
  }

  /** Takes `elements` of `tile`'s room for `block`, which holds the tile open until staged; returns where the room starts. */
  #take(tile: Tile, block: BlockInfo, elements: number): { tile: Tile; from: number } {
    const from = tile.used;
    tile.used += elements;
    tile.staging++;
    tile.blocks.push(block.index);
    return { tile, from };
  }

  /** A staging buffer for at least `elements`, or undefined while the budget is held. */
  #buffer(elements: number): FloatArray | undefined {
    let data = this.#pool.pop();
    if (data !== undefined && data.length < elements) {
      data = undefined;
      this.#allocated--;
    }
    if (data !== undefined) return data;
    if (this.#allocated > 0 && (this.#allocated + 1) * this.#tileBytes > this.#stagingBytes) return undefined;
    this.#allocated++;
    return allocFloatArray(this.#options.layout.dtype, Math.max(1, this.#options.stagingElements, elements));
  }

  /** No more blocks join `tile`: it is written as far as it got, or with `discard` dropped. */
  #close(tile: Tile, discard: boolean): void {
    if (!discard) {
      this.#seal(tile);
      return;
    }
    if (this.#open.get(tile.id) === tile) this.#open.delete(tile.id);
    tile.discarded = true;
    this.#finishIfDone(tile);
  }

  /** No more blocks join `tile`; it is written once the blocks being staged into it are in. */
  #seal(tile: Tile): void {
    if (this.#open.get(tile.id) === tile) this.#open.delete(tile.id);
    tile.sealed = true;
    this.#finishIfDone(tile);
  }

  #finishIfDone(tile: Tile): void {
    if (tile.finished || tile.staging > 0 || !(tile.sealed || tile.discarded)) return;
    tile.finished = true;
    if (tile.discarded || this.#failure !== undefined) {
      this.#settle(tile, false);
      return;
    }
    this.#writing++;
    this.#write(this.#options.fd, tileWrites(this.#options.layout, tile)).then(
      () => {
        this.#writing--;
        this.#start.written(tile);
        this.#settle(tile, true);
      },
      (error: unknown) => {
        this.#writing--;
        this.#fail(error instanceof Error ? error : new Error(String(error)));
        this.#settle(tile, false);
      },
    );
  }

  /** Gives `tile`'s buffer back and its blocks up: reported as written when `written`. */
  #settle(tile: Tile, written: boolean): void {
    this.#pool.push(tile.data);
    for (const index of tile.blocks) {
      const block = this.#unsettled.get(index);
      if (block === undefined) continue;
      this.#unsettled.delete(index);
      if (written) this.#options.onWritten(block);
    }
    // Every waiting put looks again, not only the first: the first may open a tile that another
    // waiting put belongs in, and that tile is written only once that put has joined it.
    for (const resolve of this.#freed.splice(0)) resolve();
    if (this.#unsettled.size === 0) for (const resolve of this.#drained.splice(0)) resolve();
  }

  /** Records the first failure; puts waiting for a buffer wake up to throw it. */
  #fail(error: Error): void {
    this.#failure ??= { error };
    for (const resolve of this.#freed.splice(0)) resolve();
  }

  #throwIfFailed(): void {
    if (this.#failure !== undefined) throw this.#failure.error;
  }
}

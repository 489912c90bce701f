/**
 * The file writer's thread: it takes one finished block at a time out of a shared slot, stages it
 * into the file's order (mirror, condensed columns) in the staging buffer of its write tile (see
 * writeTiles.ts), frees the slot, and once every block of the tile is in writes the tile with
 * synchronous positional writes, the runs that continue each other in the file gathered into one
 * `writev`. Synchronous writes here cost none of the main thread's time; the main thread's writer
 * (mainThreadFileWriter.ts) stages and writes in short steps between its other work, which for a
 * small result costs less than this thread's isolate.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { LogicError } from '../core/errors.js';
import type { BlockInfo } from './blockScheduler.js';
import { stageBlock, stagedElements, type StagedRun } from './blockStaging.js';
import { allocFloatArray, type FloatArray } from './floatArray.js';
import type { NpyFileLayout } from './npyLayout.js';
import { writeWholeSync } from './positionalWrites.js';
import { addRuns, openTile, tileIdOf, tileWrites, type StagedTile } from './stagedTile.js';
import { StartRelease } from './startRelease.js';

/** What the thread starts with. */
export interface FileWriterInit {
  /** The partial file's descriptor, opened by the host; descriptors belong to the whole process. */
  readonly fd: number;
  readonly layout: NpyFileLayout;
  /** Elements of a tile's staging buffer: the most any tile occupies in the file. */
  readonly stagingElements: number;
  /** Bytes of staging buffers at most; a tile that would exceed it first writes out the oldest open tile as far as it got. */
  readonly stagingBytes: number;
  /** Tile of each block index (-1 or absent: the block is a tile of its own), and blocks per tile. */
  readonly tileOf: Int32Array;
  readonly tileBlocks: Int32Array;
  /** Bytes at the file's start complete once tiles `0 .. t - 1` are written (see WriteTiles.completeBefore); empty: unknown. */
  readonly completeBefore: Float64Array;
  /**
   * The file's path, to drop the complete start of the file from the page cache (pageCache.ts)
   * each time it grows; absent: the pages stay cached.
   */
  readonly releasePath?: string;
  /**
   * Set to 1 by the host when it gives the run up: blocks still queued are then answered as
   * discarded without being staged, and no tile is written any more, so a cancel does not wait for
   * the writes of blocks whose file is about to be removed.
   */
  readonly stop: Int32Array;
}

/**
 * Host to thread: stage `block`, whose results are in `data` from `byteOffset` on (row-major,
 * `colCount` per row, the file's dtype): a slot the host copied them into, or the device's own
 * result buffer.
 */
export interface WriteBlock {
  readonly block: BlockInfo;
  readonly data: SharedArrayBuffer;
  readonly byteOffset: number;
}

/**
 * Host to thread: write every tile still open, however far it got (the end of a run), or with
 * `discard` drop them unwritten (a run given up, whose file is removed anyway).
 */
export interface FlushTiles {
  readonly flush: true;
  readonly discard: boolean;
}

/**
 * Thread to host: the slot of block `staged` may be reused, and/or the blocks `settled` are done
 * with: in the file when neither `error` nor `discarded` is set, given up otherwise.
 */
export interface WriterAnswer {
  readonly staged?: number;
  readonly settled?: readonly number[];
  /** `code`: the system error's code (ENOSPC, ...), for the advice the sink gives with it. */
  readonly error?: { readonly logic: boolean; readonly message: string; readonly code?: string };
  readonly discarded?: true;
}

function viewOf(layout: NpyFileLayout, { block, data, byteOffset }: WriteBlock): FloatArray {
  const elements = block.rowCount * block.colCount;
  return layout.dtype === 'float32' ? new Float32Array(data, byteOffset, elements) : new Float64Array(data, byteOffset, elements);
}

/** Writes a finished tile with synchronous positional writes. */
function writeTile(fd: number, layout: NpyFileLayout, tile: StagedTile): void {
  for (const { position, pieces } of tileWrites(layout, tile)) writeWholeSync(fd, pieces, position);
}

function serve(init: FileWriterInit): void {
  const port = parentPort!;
  const { fd, layout, tileOf, tileBlocks } = init;
  const tileBytes = Math.max(1, init.stagingElements) * layout.elementBytes;
  // Staging buffers are kept for the next tile: a fresh one per tile would cost its page faults again.
  const pool: FloatArray[] = [];
  const open = new Map<number, StagedTile>();
  const scratch: StagedRun[] = [];
  let allocated = 0;
  // After the first failure the file is garbage: later blocks are answered without writing.
  let failed = false;
  const start = new StartRelease(tileBlocks, init.completeBefore, init.releasePath);
  const givenUp = (): boolean => Atomics.load(init.stop, 0) !== 0;

  const answer = (a: WriterAnswer) => port.postMessage(a);
  const failure = (e: unknown): WriterAnswer['error'] => {
    const code = (e as { code?: unknown } | undefined)?.code;
    return { logic: e instanceof LogicError, message: e instanceof Error ? e.message : String(e), ...(typeof code === 'string' ? { code } : {}) };
  };

  /** Writes `tile` as far as it got and gives its buffer back; its blocks are settled. */
  const finish = (tile: StagedTile): void => {
    open.delete(tile.id);
    if (givenUp()) {
      answer({ settled: tile.blocks, discarded: true });
      pool.push(tile.data);
      return;
    }
    try {
      if (!failed) {
        writeTile(fd, layout, tile);
        start.written(tile);
      }
      answer(failed ? { settled: tile.blocks, error: { logic: false, message: 'an earlier block failed' } } : { settled: tile.blocks });
    } catch (e) {
      failed = true;
      answer({ settled: tile.blocks, error: failure(e) });
    }
    pool.push(tile.data);
  };

  /** The open tile of `block`, opened now if need be, with room for it. */
  const tileFor = (block: BlockInfo, elements: number): StagedTile => {
    const key = tileIdOf(block, tileOf);
    let tile = open.get(key);
    if (tile !== undefined && tile.used + elements <= tile.data.length) return tile;
    if (tile !== undefined) finish(tile);
    // Out of staging memory (blocks out of tile order, e.g. from a cluster): the oldest open tile goes first.
    while (pool.length === 0 && open.size > 0 && (allocated + 1) * tileBytes > init.stagingBytes) finish(open.values().next().value!);
    let data = pool.pop();
    if (data !== undefined && data.length < elements) {
      // A block larger than the planned tiles (none are, unless the plan was left out): a buffer of its own.
      data = undefined;
      allocated--;
    }
    if (data === undefined) {
      data = allocFloatArray(layout.dtype, Math.max(1, init.stagingElements, elements));
      allocated++;
    }
    tile = openTile(block, tileOf, tileBlocks, data);
    open.set(key, tile);
    return tile;
  };

  port.on('message', (message: WriteBlock | FlushTiles) => {
    if ('flush' in message) {
      for (const tile of [...open.values()]) {
        if (!message.discard) {
          finish(tile);
          continue;
        }
        open.delete(tile.id);
        pool.push(tile.data);
        answer({ settled: tile.blocks, discarded: true });
      }
      return;
    }
    const { block } = message;
    if (givenUp()) {
      answer({ staged: block.index, settled: [block.index], discarded: true });
      return;
    }
    if (failed) {
      answer({ staged: block.index, settled: [block.index], error: { logic: false, message: 'an earlier block failed' } });
      return;
    }
    let tile: StagedTile | undefined;
    try {
      const elements = stagedElements(layout, block);
      tile = tileFor(block, elements);
      if (failed) throw new Error('an earlier block failed');
      scratch.length = 0;
      stageBlock(layout, block, viewOf(layout, message), tile.data.subarray(tile.used, tile.used + elements), scratch);
      addRuns(tile, scratch, tile.used);
      tile.used += elements;
      tile.blocks.push(block.index);
      tile.left--;
    } catch (e) {
      failed = true;
      answer({ staged: block.index, settled: [block.index], error: failure(e) });
      return;
    }
    answer({ staged: block.index });
    if (tile.left <= 0) finish(tile);
  });
}

serve(workerData as FileWriterInit);

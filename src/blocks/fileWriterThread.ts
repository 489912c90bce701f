/**
 * The file writer's thread: it takes one finished block at a time out of a shared slot, stages it
 * into the file's order (mirror, condensed columns) in the staging buffer of its write tile (see
 * writeTiles.ts), frees the slot, and once every block of the tile is in writes the tile with
 * synchronous positional writes, the runs that continue each other in the file gathered into one
 * `writev`; or, for a result whose held blocks fit its staging budget, holds the staged blocks until
 * their stretch of the file is complete and writes it front to back (fileOrderWrites.ts).
 * Synchronous writes here cost none of the main thread's time; the main thread's writer
 * (mainThreadFileWriter.ts) stages and writes in short steps between its other work, which for a
 * small result costs less than this thread's isolate.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { LogicError } from '../core/errors.js';
import type { BlockInfo } from './blockScheduler.js';
import { stageBlock, stageBlockParts, stagedElements, type StagedRun } from './blockStaging.js';
import { FileOrderWrites, type HeldWrites } from './fileOrderWrites.js';
import type { FloatArray } from './floatArray.js';
import type { NpyFileLayout } from './npyLayout.js';
import { writeBouncedSync, writeWholeSync } from './positionalWrites.js';
import { addRuns, openTile, tileIdOf, tileWrites, type StagedTile } from './stagedTile.js';
import { StagingPool } from './stagingPool.js';
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
   * Hold staged blocks until the stretch of the file they fill is complete (by `completeBefore`,
   * for tiles of one block in the order that fills the file: fileOrderTiles), then write that
   * stretch front to back (fileOrderWrites.ts), starting its writeback at once unless
   * `releasePath` drops the pages anyway (`path`: the file's; absent, nothing is advised).
   * Staging buffers are then `stagingElements` long (one block's result), and an off-diagonal
   * block of a square file takes two.
   */
  readonly inFileOrder?: { readonly path?: string };
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

/** What both ways of serving share: answering the host, a failure's report, the host's stop flag. */
interface Service {
  readonly answer: (a: WriterAnswer) => void;
  readonly failure: (e: unknown) => NonNullable<WriterAnswer['error']>;
  readonly givenUp: () => boolean;
}

function service(init: FileWriterInit): Service {
  const port = parentPort!;
  return {
    answer: (a) => port.postMessage(a),
    failure: (e) => {
      const code = (e as { code?: unknown } | undefined)?.code;
      return { logic: e instanceof LogicError, message: e instanceof Error ? e.message : String(e), ...(typeof code === 'string' ? { code } : {}) };
    },
    givenUp: () => Atomics.load(init.stop, 0) !== 0,
  };
}

/** The error a block gets once an earlier one has failed: the file is garbage from then on. */
const EARLIER_FAILURE = { logic: false, message: 'an earlier block failed' } as const;

/** Tiles written as they complete. */
function serveTiles(init: FileWriterInit, { answer, failure, givenUp }: Service): void {
  const port = parentPort!;
  const { fd, layout, tileOf, tileBlocks } = init;
  const tileBytes = Math.max(1, init.stagingElements) * layout.elementBytes;
  const pool = new StagingPool(layout.dtype, init.stagingElements, Math.floor(init.stagingBytes / tileBytes));
  const open = new Map<number, StagedTile>();
  const scratch: StagedRun[] = [];
  // After the first failure the file is garbage: later blocks are answered without writing.
  let failed = false;
  const start = new StartRelease(tileBlocks, init.completeBefore, init.releasePath);

  /** Writes `tile` as far as it got and gives its buffer back; its blocks are settled. */
  const finish = (tile: StagedTile): void => {
    open.delete(tile.id);
    if (givenUp()) {
      answer({ settled: tile.blocks, discarded: true });
      pool.give(tile.data);
      return;
    }
    try {
      if (!failed) {
        writeTile(fd, layout, tile);
        start.written(tile);
      }
      answer(failed ? { settled: tile.blocks, error: EARLIER_FAILURE } : { settled: tile.blocks });
    } catch (e) {
      failed = true;
      answer({ settled: tile.blocks, error: failure(e) });
    }
    pool.give(tile.data);
  };

  /** Writes the oldest open tile as far as it got, giving its buffer back; false when none is open. */
  const finishOldest = (): boolean => {
    if (open.size === 0) return false;
    finish(open.values().next().value!);
    return true;
  };

  /** The open tile of `block`, opened now if need be, with room for it. */
  const tileFor = (block: BlockInfo, elements: number): StagedTile => {
    const key = tileIdOf(block, tileOf);
    let tile = open.get(key);
    if (tile !== undefined && tile.used + elements <= tile.data.length) return tile;
    if (tile !== undefined) finish(tile);
    // Out of staging memory (blocks out of tile order, e.g. from a cluster): the oldest open tile goes first.
    tile = openTile(block, tileOf, tileBlocks, pool.take(elements, finishOldest));
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
        pool.give(tile.data);
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
      answer({ staged: block.index, settled: [block.index], error: EARLIER_FAILURE });
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

/**
 * A staged part is written at most this long after it was staged, in file order or not: the
 * journal lists a block only once it is in the file, and a run killed midway should lose no more
 * than this much of its blocks to the holding. A whole run of 200 MB (N = 5,000) takes about half
 * a second here, so holding pays within it.
 */
const MAX_HOLD_MS = 1000;

/** The buffer held writes are copied through (see writeBouncedSync): 1 MiB wrote 200 MB as fast as larger ones, and faster than whole rows of 40 kB. */
const BOUNCE_BYTES = 1 << 20;

/** Blocks held and written in file order; see {@link FileWriterInit.inFileOrder}. */
function serveInFileOrder(init: FileWriterInit, { answer, failure, givenUp }: Service): void {
  const port = parentPort!;
  const { fd, layout, tileOf } = init;
  const partElements = Math.max(1, init.stagingElements);
  const pool = new StagingPool(layout.dtype, partElements, Math.max(2, Math.floor(init.stagingBytes / (partElements * layout.elementBytes))));
  const held = new FileOrderWrites(layout);
  const bounce = new Uint8Array(BOUNCE_BYTES);
  // Without pages to drop, each stretch's writeback is started as it is written (keep: true), so
  // the final fdatasync finds little left to write.
  const start = new StartRelease(init.tileBlocks, init.completeBefore, init.releasePath ?? init.inFileOrder?.path, init.releasePath === undefined);
  let failed = false;

  /** Writes `taken`, then reports its blocks and reuses its buffers; after a failure everything held fails with it. */
  const write = ({ writes, freed, settled }: HeldWrites, complete?: number): void => {
    try {
      if (!failed) {
        writeBouncedSync(fd, writes, bounce);
        if (complete !== undefined) start.release(complete);
      }
    } catch (e) {
      failed = true;
      const rest = held.takeAll();
      pool.give(...freed, ...rest.freed);
      answer({ settled: [...settled, ...rest.settled], error: failure(e) });
      return;
    }
    pool.give(...freed);
    if (settled.length > 0) answer(failed ? { settled, error: EARLIER_FAILURE } : { settled });
  };

  // Short of staging memory, the oldest held part is written as it is.
  const oldest = (): boolean => {
    if (held.size === 0) return false;
    write(held.takeOldest());
    return true;
  };

  // Writes the parts held too long (MAX_HOLD_MS), and waits for the next one to be.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const writeOld = (): void => {
    timer = undefined;
    const now = performance.now();
    if (!givenUp()) write(held.takeHeldBefore(now - MAX_HOLD_MS));
    const oldest = held.oldestSince;
    if (oldest !== undefined && !givenUp()) timer = setTimeout(writeOld, Math.max(1, oldest + MAX_HOLD_MS - now));
  };

  port.on('message', (message: WriteBlock | FlushTiles) => {
    if ('flush' in message) {
      clearTimeout(timer);
      timer = undefined;
      const rest = held.takeAll();
      if (message.discard || givenUp()) {
        pool.give(...rest.freed);
        if (rest.settled.length > 0) answer({ settled: rest.settled, discarded: true });
      } else {
        write(rest);
      }
      return;
    }
    const { block } = message;
    if (givenUp() || failed) {
      answer({ staged: block.index, settled: [block.index], ...(failed ? { error: EARLIER_FAILURE } : { discarded: true }) });
      return;
    }
    try {
      held.hold(block.index, stageBlockParts(layout, block, viewOf(layout, message), (elements) => pool.take(elements, oldest)));
    } catch (e) {
      failed = true;
      answer({ staged: block.index, settled: [block.index], error: failure(e) });
      return;
    }
    answer({ staged: block.index });
    const complete = start.count({ id: tileIdOf(block, tileOf), blocks: [block.index] });
    write(held.takeBefore((complete - layout.header.length) / layout.elementBytes), complete);
    if (timer === undefined && held.size > 0) writeOld();
  });
}

const init = workerData as FileWriterInit;
if (init.inFileOrder === undefined) serveTiles(init, service(init));
else serveInFileOrder(init, service(init));

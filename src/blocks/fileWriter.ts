/**
 * What NpyFileSink hands its blocks to: a writer that stages each finished block into its write
 * tile (see writeTiles.ts) and writes each finished tile to its final offsets in the file, with
 * positional writes. Two do it: ThreadFileWriter on a thread of its own (the main thread never
 * copies a block), for large results; MainThreadFileWriter on the main thread, staging a few lines
 * at a time and writing in short synchronous steps (or on libuv's pool, where the disk makes its
 * caller wait), for small ones, where a thread's isolate would cost more
 * memory than the whole staging. Both keep the same promises, listed here.
 */
import type { BlockInfo } from './blockScheduler.js';
import type { FloatArray } from './floatArray.js';
import type { NpyFileLayout } from './npyLayout.js';

/** Options of a {@link FileWriter}. */
export interface FileWriterOptions {
  readonly fd: number;
  readonly layout: NpyFileLayout;
  /** Elements of the largest block's result (rowCount * colCount): the size of a slot of the writer thread. */
  readonly blockElements: number;
  /** Elements the largest write tile occupies in the file: the size of one staging buffer. */
  readonly stagingElements: number;
  /** Bytes of staging buffers the writer may hold; default: two tiles. */
  readonly stagingBytes?: number;
  /** The write tiles (from planWriteTiles); default: every block a tile of its own. */
  readonly tiles?: { readonly tileOf: Int32Array; readonly tileBlocks: Int32Array; readonly completeBefore?: Float64Array };
  /**
   * The file's path, to drop the start of the file from the page cache as it completes (with
   * `tiles.completeBefore`; see pageCache.ts); default: the pages stay cached.
   */
  readonly releasePath?: string;
  /**
   * Hold staged blocks until their stretch of the file is complete and write it front to back
   * (fileOrderWrites.ts), for `tiles` from fileOrderTiles and staging buffers of one block's
   * result (`stagingElements`); `path` is the file's, whose writeback is then started stretch by
   * stretch. The writer thread's alone: the main thread's writer ignores it.
   */
  readonly inFileOrder?: { readonly path?: string };
  /** Blocks copied into slots of the writer thread at most (at least 1); the main thread's writer copies none. */
  readonly slots: number;
  /** Called once per block whose bytes are in the file, in the order its tiles were written. */
  readonly onWritten: (block: BlockInfo) => void;
}

/**
 * Streams blocks into one file. `put` resolves once the caller may reuse its buffer, and waits
 * while the writer holds as much as it may (a disk slower than the computation holds the pipeline
 * back); a block is reported to `onWritten` only once its bytes are in the file. After the first
 * failure nothing more is written and every later `put` rejects with it.
 */
export interface FileWriter {
  /** The first failure (a write error, a block that broke the layout's rules, a dead thread), if any. */
  readonly failure: Error | undefined;
  /**
   * Stages `block`'s results from `buf` (row-major, `colCount` per row, any float type).
   *
   * @throws (rejects) the writer's first failure, as given by {@link failure}.
   */
  put(block: BlockInfo, buf: FloatArray): Promise<void>;
  /**
   * Resolves when every block put so far is answered (written, or failed); tiles still incomplete
   * are written as far as they got, or with `discard` dropped unwritten and not reported (the run
   * is given up: a writer may then also drop blocks it has not written yet).
   */
  drain(discard?: boolean): Promise<void>;
  /**
   * Drains (see {@link drain}) and ends the writer: after this resolves nothing writes to the
   * descriptor any more, so the caller may close it. Safe to call twice.
   */
  stop(discard?: boolean): Promise<void>;
}

/**
 * A result writer that streams blocks into an `.npy` file: each finished block is handed to a file
 * writer (see fileWriter.ts), which stages it and writes it to its final offsets with positional
 * writes: from the main thread for a small result, through a writer thread for a large one. The
 * whole matrix never exists in memory: at most a few blocks, within a byte budget, are in flight,
 * and `write` waits for one to come free, so a disk slower than the computation holds the pipeline
 * back instead of filling memory.
 *
 * The file is written as `.<name>.<pid>.<hex>.tmp` beside the target with a journal of finished
 * blocks, and renamed over the target only when complete; a cancelled or failed run removes both,
 * a hard-killed one leaves both for a later run to resume (or to remove).
 */
import { open, rename, rm, stat, utimes } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { isDiskFull } from '../core/diskFull.js';
import { InputFormatError, LogicError, OptionError, invariant } from '../core/errors.js';
import { totalMemory } from '../platform/machine.js';
import { removeOpenFiles } from '../platform/removeOpenFile.js';
import type { BlockInfo, BlockScheduler } from './blockScheduler.js';
import { BlockJournal, journalMismatch, readJournal, type JournalHeader } from './blockJournal.js';
import { checkDiskSpace, waysOutText, type WayOut } from './capacityCheck.js';
import type { FileWriter, FileWriterOptions } from './fileWriter.js';
import type { FloatArray } from './floatArray.js';
import type { NpyFileLayout } from './npyLayout.js';
import { holdPartialFiles, partialFileOpenAs, partialPathsFor, releasePartialFiles, removePartial, stalePartials, type PartialPaths } from './partialFiles.js';
import { MainThreadFileWriter } from './mainThreadFileWriter.js';
import type { ResultWriter } from './resultWriter.js';
import { ThreadFileWriter } from './threadFileWriter.js';
import { fileOrderTiles, planWriteTiles } from './writeTiles.js';

/** Options of {@link NpyFileSink.open}. */
export interface NpyFileSinkOptions {
  /** The `.npy` file to produce; it is replaced only when the result is complete. */
  readonly target: string;
  readonly layout: NpyFileLayout;
  /** What the result belongs to, recorded in the journal: a hash of the inputs and the options in words. */
  readonly identity: { readonly inputs: string; readonly options: string };
  /** Continue the partial file of a dead process for the same target and identity. Default false. */
  readonly resume?: boolean;
  /**
   * Bytes of blocks in flight to disk: half for the blocks handed to the writer, half for its
   * write tiles; at least two blocks' worth and tiles of one block are always allowed.
   */
  readonly queueBytes: number;
  /**
   * A result file of at least this many bytes is dropped from the page cache as its start
   * completes (pageCache.ts). Default: a quarter of the machine's memory.
   */
  readonly dropPagesFrom?: number;
  /**
   * Whether the writer thread may hold blocks to write the file front to back (fileOrderWrites.ts)
   * where they fit the staging budget. Default true; a cluster's coordinator says false: its
   * blocks come from several machines in any order, over a run long enough that the journal
   * should follow them closely.
   */
  readonly fileOrder?: boolean;
  /** The result in words and the ways to shrink it, for the free-space refusal. */
  readonly what: string;
  readonly waysOut: readonly WayOut[];
}

/**
 * Journal flushes (each an fdatasync of the data and of the journal) at most this often. They also
 * spread the file's writeback over the run: what is left for the fdatasync of `commit` is at most
 * this long's writes. At N = 10,000 (800 MB) that last fdatasync took 167 to 189 ms with a second
 * between flushes, 26 to 66 ms with a quarter of a second.
 */
const FLUSH_INTERVAL_MS = 250;

/**
 * A result file at least this share of the machine's memory is dropped from the page cache as its
 * start completes (pageCache.ts); a smaller one stays cached for whoever reads it next. At N =
 * 40,000 (12.8 GB, a 24 GB machine) dropping cut the run's system time from 40 s to 19 s; at
 * 20,000 (3.2 GB, pages freed by the runs before reused) it saved nothing (3.8 to 4.2 s kept,
 * 4.6 s dropped).
 */
const RELEASE_SHARE_OF_MEMORY = 1 / 4;

/**
 * A result file of at most this many bytes is written from the main thread (MainThreadFileWriter),
 * a larger one through a writer thread (ThreadFileWriter); see {@link fileWriterKind}. The writer
 * thread's isolate costs about 10 MiB of peak memory whatever the size; the main thread's writer
 * stages and writes between its other work, a cost that grows with the file, in time the event
 * loop's longest stall shows. Peak memory in pdist of PCFs of 20 breakpoints (2 vCPUs, five runs
 * each, medians): at N = 2,000 (30.5 MiB) 100.2 against 110.6 MiB, at N = 2,800 (60 MiB) 104.7
 * against 114.2 MiB. With synchronous writes in steps (steppedWrites.ts) the main thread's writer is
 * no slower than the thread at either size (bench/fileWriters.mjs, eleven interleaved calls each,
 * load 4-6: 0.126 against 0.166 s at N = 2,000, 0.220 against 0.258 s at 2,800, with 100
 * breakpoints 0.253 against 0.294 s), so the limit stays where the isolate is a tenth of the peak.
 */
export const MAIN_THREAD_WRITER_BYTES = 32 * 2 ** 20;

/**
 * Which file writer writes a result file of `bytes`: `PXL_FILE_WRITER` set to `main`, `thread` or
 * `file-order` chooses (to compare them, and in tests); otherwise the main thread's writer up to
 * {@link MAIN_THREAD_WRITER_BYTES}, beyond it the writer thread, in file order (fileOrderWrites.ts)
 * where the blocks it holds fit the staging budget (`heldFits`), writing tiles as they complete
 * otherwise.
 *
 * @throws OptionError when `PXL_FILE_WRITER` is set to anything but those three or the empty string.
 *
 * @example fileWriterKind(npyFileLayout('square', 'float64', 2000, 2000).bytes, true) // 'main' (30.5 MiB)
 */
export function fileWriterKind(bytes: number, heldFits: boolean): 'main' | 'thread' | 'file-order' {
  const chosen = process.env.PXL_FILE_WRITER ?? '';
  if (chosen === 'main' || chosen === 'thread' || chosen === 'file-order') return chosen;
  // A misspelt choice would silently compare the writer with itself.
  if (chosen !== '') throw new OptionError(`PXL_FILE_WRITER must be 'main', 'thread' or 'file-order' (or unset to choose by the result's size), got '${chosen}'`);
  if (bytes <= MAIN_THREAD_WRITER_BYTES) return 'main';
  return heldFits ? 'file-order' : 'thread';
}


function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * For an error of a disk that filled up during the run (after `open` checked its free space:
 * another process took it), what to change, as the free-space refusal says it; else nothing.
 */
function spaceAdvice(error: unknown, options: NpyFileSinkOptions): string {
  if (!isDiskFull(error)) return '';
  return `; the disk filled up during the run, after its free space was checked: free space in ${dirname(options.target)} and run again, or make the result fit: ${waysOutText(options.waysOut)}`;
}

/**
 * Streams a block schedule's results into an `.npy` file. Use: {@link NpyFileSink.open}, then
 * {@link begin} with the scheduler (it returns the blocks still to compute), then the pipeline's
 * `write` calls, then {@link commit}, or {@link abort} on failure or cancellation.
 *
 * @example
 * const sink = await NpyFileSink.open({ target: 'd.npy', layout, identity, queueBytes: 256 << 20, what: 'the result', waysOut: [] });
 * try {
 *   const blocks = await sink.begin(scheduler);
 *   await runBlockPipeline(op, scheduler, sink, { skip, blocks });
 *   await sink.commit();
 * } catch (error) { await sink.abort(); throw error; }
 */
export class NpyFileSink implements ResultWriter {
  readonly #options: NpyFileSinkOptions;
  readonly #paths: PartialPaths;
  readonly #handle: FileHandle;
  readonly #resumed: { readonly header: JournalHeader; readonly done: ReadonlySet<number> } | undefined;
  #journal: BlockJournal | undefined;
  #writer: FileWriter | undefined;
  readonly #tasks = new Set<Promise<void>>();
  #failure: { error: unknown } | undefined;
  #lastFlush = -Infinity;
  #closed = false;
  #blocksTotal = 0;

  private constructor(options: NpyFileSinkOptions, paths: PartialPaths, handle: FileHandle, resumed: NpyFileSink['resumed']) {
    this.#options = options;
    this.#paths = paths;
    this.#handle = handle;
    this.#resumed = resumed;
  }

  /**
   * Prepares the partial file: removes what dead processes left for the same target (or, with
   * `resume`, takes over their partial file and journal when they match), checks free disk space,
   * and creates the file at its full size with the `.npy` header in place.
   *
   * @throws (rejects) InputFormatError naming the target when the disk lacks space, the file cannot
   *   be created, or (with `resume`) the journal found belongs to other inputs or options; nothing
   *   was computed then, and the partial files of the refused journal are left as they were.
   */
  static async open(options: NpyFileSinkOptions): Promise<NpyFileSink> {
    const { target, layout } = options;
    // Refused before anything runs: a rename over a directory would fail only once the result is complete.
    if ((await stat(target).catch(() => undefined))?.isDirectory() === true) throw new InputFormatError('is a directory; name a file to write', target);
    // Refused here, before any file is touched, rather than once the computation is set up.
    fileWriterKind(layout.bytes, false);
    const expected = { ...options.identity, bytes: layout.bytes };
    let resumed: NpyFileSink['resumed'];
    let claimed: PartialPaths | undefined;
    for (const stale of await stalePartials(target)) {
      if (options.resume === true && claimed === undefined && stale.hasTemp && stale.hasJournal) {
        const contents = await readJournal(stale.journal);
        const mismatch = journalMismatch(contents.header, expected);
        if (mismatch !== undefined) {
          throw new InputFormatError(`cannot resume from the journal ${stale.journal}: ${mismatch}. Run without resuming to start over (that replaces the partial file), or resume with the same inputs and options`, target);
        }
        const paths = partialPathsFor(target);
        // Renaming claims the files: a second process resuming at the same time finds them gone,
        // and a second call of this process finds them held.
        holdPartialFiles(paths.temp, paths.journal);
        try {
          await rename(stale.journal, paths.journal);
          await rename(stale.temp, paths.temp);
          // Written now: files from before a reboot would pass for stale (partialFiles.ts) until the first block lands.
          const now = new Date();
          await utimes(paths.journal, now, now);
          await utimes(paths.temp, now, now);
        } catch (error) {
          releasePartialFiles(paths.temp, paths.journal);
          throw error;
        }
        claimed = paths;
        resumed = contents;
        continue;
      }
      await removePartial(stale);
    }
    const paths = claimed ?? partialPathsFor(target);
    holdPartialFiles(paths.temp, paths.journal);
    let handle: FileHandle | undefined;
    try {
      let onDisk = 0;
      if (claimed !== undefined) {
        const s = await stat(paths.temp);
        if (s.size !== layout.bytes) throw new InputFormatError(`cannot resume: the partial file ${paths.temp} has ${s.size} bytes, not the ${layout.bytes} its journal promises; run without resuming to start over`, target);
        onDisk = s.blocks * 512;
      }
      await checkDiskSpace(target, dirname(target), Math.max(0, layout.bytes - onDisk), options.what, options.waysOut);
      try {
        handle = await open(paths.temp, claimed === undefined ? 'wx' : 'r+');
        partialFileOpenAs(paths.temp, handle.fd);
        if (claimed === undefined) {
          await handle.write(layout.header, 0, layout.header.length, 0);
          // The data area reads as zeros until written: a sparse file, so space is taken as blocks land.
          await handle.truncate(layout.bytes);
        }
      } catch (error) {
        throw new InputFormatError(`cannot create the partial file ${paths.temp}: ${reason(error)}`, target, { cause: error });
      }
      return new NpyFileSink(options, paths, handle, resumed);
    } catch (error) {
      await handle?.close().catch(() => undefined);
      // A refused resume keeps its files (the user may retry with the right inputs); a fresh one goes.
      // What failed is the error to report: removing files that were never made may fail too (ENOTDIR).
      if (claimed === undefined) await removePartial(paths).catch(() => undefined);
      releasePartialFiles(paths.temp, paths.journal);
      throw error;
    }
  }

  /** What was resumed: the journal's header and the blocks it lists; undefined for a fresh file. */
  get resumed(): { readonly header: JournalHeader; readonly done: ReadonlySet<number> } | undefined {
    return this.#resumed;
  }

  /** The file's layout. */
  get layout(): NpyFileLayout {
    return this.#options.layout;
  }

  /** Blocks of the schedule {@link begin} was given (0 before, and for a result with no pairs). */
  get blocksTotal(): number {
    return this.#blocksTotal;
  }

  /** The partial files this sink writes. */
  get paths(): PartialPaths {
    return this.#paths;
  }

  /**
   * Starts the journal for `scheduler` (or checks that a resumed one describes the same blocks)
   * and returns the blocks still to compute, in the order to compute them: tile by tile (see
   * writeTiles.ts), so each write tile fills up soon after it starts.
   *
   * @throws (rejects) LogicError when a resumed journal's schedule differs from `scheduler`.
   */
  async begin(scheduler: BlockScheduler): Promise<readonly BlockInfo[]> {
    const { layout } = this.#options;
    invariant(scheduler.nRows === layout.nRows && scheduler.nCols === layout.nCols, `a ${scheduler.nRows} x ${scheduler.nCols} schedule cannot fill a ${layout.nRows} x ${layout.nCols} result file`);
    let todo = scheduler.blocks;
    this.#blocksTotal = todo.length;
    if (this.#resumed !== undefined) {
      const { header, done } = this.#resumed;
      if (header.blockSide !== scheduler.blockSide || header.blocks !== scheduler.blocks.length) {
        throw new LogicError(`the resumed journal has ${header.blocks} blocks of side ${header.blockSide}, the schedule ${scheduler.blocks.length} of side ${scheduler.blockSide}`);
      }
      todo = scheduler.blocks.filter((b) => !done.has(b.index));
      this.#journal = await BlockJournal.append(this.#paths.journal);
    } else {
      const header: JournalHeader = { ...this.#options.identity, blockSide: scheduler.blockSide, blocks: scheduler.blocks.length, bytes: layout.bytes };
      this.#journal = await BlockJournal.create(this.#paths.journal, header);
    }
    partialFileOpenAs(this.#paths.journal, this.#journal.fd);
    const half = Math.floor(this.#options.queueBytes / 2);
    // Tiles save the kernel a little per byte written (writeTiles.ts), which matters for results of
    // gigabytes; for a small result their staging would only add to the peak memory, so it is
    // held to an eighth of the file.
    const tileBudget = Math.min(half, Math.floor(layout.bytes / 8));
    const blockElements = todo.reduce((m, b) => Math.max(m, b.rowCount * b.colCount), 0);
    const slotBytes = Math.max(1, blockElements * layout.elementBytes);
    // Blocks held until their stretch of the file is complete (fileOrderWrites.ts): a square file
    // holds up to a quarter of itself that way (the direct halves below the current column band)
    // and the mirrors of that band; half the file bounds both, beside a few blocks in flight.
    const kind = fileWriterKind(layout.bytes, this.#options.fileOrder !== false && layout.bytes / 2 + 4 * slotBytes <= half);
    const onMain = kind === 'main';
    const inFileOrder = kind === 'file-order';
    const tiles = inFileOrder
      ? fileOrderTiles(layout, todo, scheduler.blockSide, scheduler.blocks.length)
      : planWriteTiles(layout, todo, scheduler.blockSide, scheduler.blocks.length, tileBudget);
    const tileBytes = tiles.tileElements * layout.elementBytes;
    const options: FileWriterOptions = {
      fd: this.#handle.fd,
      layout,
      blockElements,
      stagingElements: inFileOrder ? blockElements : tiles.tileElements,
      // The main thread stages one tile at a time: its writes take a few turns of the event loop
      // (steppedWrites.ts), and a second tile, 1 MiB at N = 2,000, made the call no faster while
      // the command's peak RSS was about 1 MiB higher (bench/RESULTS.md, bench/cli).
      stagingBytes: onMain ? tileBytes : Math.max(half, 2 * tileBytes),
      tiles,
      ...(layout.bytes >= (this.#options.dropPagesFrom ?? RELEASE_SHARE_OF_MEMORY * totalMemory()) ? { releasePath: this.#paths.temp } : {}),
      ...(inFileOrder ? { inFileOrder: { path: this.#paths.temp } } : {}),
      slots: Math.max(2, Math.floor(half / slotBytes)),
      onWritten: (block) => this.#blockDone(block),
    };
    this.#writer = onMain ? new MainThreadFileWriter(options) : ThreadFileWriter.start(options);
    return tiles.blocks;
  }

  /**
   * Hands `block`'s results to the file writer. Resolves once `buf` may be reused: after the
   * copy, which first waits while the byte budget is in flight (backpressure).
   *
   * @throws (rejects) the first failure of an earlier block: a write error as an InputFormatError
   *   naming the target, a LogicError when a block left a value where the layout keeps nothing.
   */
  async write(block: BlockInfo, buf: FloatArray): Promise<void> {
    this.#throwIfFailed();
    invariant(this.#writer !== undefined, 'NpyFileSink.write before begin');
    try {
      await this.#writer.put(block, buf);
    } catch (error) {
      this.#throwIfFailed();
      throw error;
    }
  }

  /** Keeps `work` until it settles; its error becomes the sink's failure, thrown by the next call. */
  #track(work: Promise<void>): void {
    const task = work
      .catch((error: unknown) => {
        this.#failure ??= { error: new InputFormatError(`cannot flush the journal of ${this.#paths.temp}: ${reason(error)}${spaceAdvice(error, this.#options)}`, this.#options.target, { cause: error }) };
      })
      .finally(() => this.#tasks.delete(task));
    this.#tasks.add(task);
  }

  /**
   * Waits for every write, flushes the file to disk and renames it over the target; the journal is
   * removed. The sink is closed afterwards.
   *
   * @throws (rejects) InputFormatError naming the target when a write, the flush or the rename
   *   failed; the partial files are then removed.
   */
  async commit(): Promise<void> {
    try {
      await this.#settle();
      this.#throwIfFailed();
      try {
        await this.#handle.datasync();
      } catch (error) {
        throw new InputFormatError(`cannot flush ${this.#paths.temp} to disk: ${reason(error)}${spaceAdvice(error, this.#options)}`, this.#options.target, { cause: error });
      }
      await this.#close();
      try {
        await rename(this.#paths.temp, this.#options.target);
      } catch (error) {
        throw new InputFormatError(`cannot move the finished file into place: ${reason(error)}`, this.#options.target, { cause: error });
      }
      await rm(this.#paths.journal, { force: true });
      releasePartialFiles(this.#paths.temp, this.#paths.journal);
    } catch (error) {
      await this.abort();
      throw error;
    }
  }

  /** Stops: waits for writes in flight, closes, and removes the partial file and its journal. Safe to call twice. */
  async abort(): Promise<void> {
    // Tiles not yet complete are dropped, not written: the file goes, and a stop should be quick.
    await this.#settle(true);
    if (!this.#closed) {
      this.#closed = true;
      // Their blocks may take the file system a second or more to free (removeOpenFile.ts).
      const handle = this.#handle;
      const journal = this.#journal;
      await removeOpenFiles([
        { path: this.#paths.temp, fd: handle.fd, close: () => handle.close() },
        ...(journal === undefined ? [] : [{ path: this.#paths.journal, fd: journal.fd, close: () => journal.close() }]),
      ]);
    }
    await removePartial(this.#paths);
    releasePartialFiles(this.#paths.temp, this.#paths.journal);
  }

  async #close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#journal?.close();
    await this.#handle.close();
  }

  async #settle(discard = false): Promise<void> {
    await this.#writer?.stop(discard);
    while (this.#tasks.size > 0) await Promise.allSettled([...this.#tasks]);
  }

  #throwIfFailed(): void {
    const written = this.#writer?.failure;
    if (written !== undefined && this.#failure === undefined) {
      this.#failure = { error: written instanceof LogicError ? written : new InputFormatError(`cannot write to ${this.#paths.temp}: ${written.message}${spaceAdvice(written, this.#options)}`, this.#options.target, { cause: written }) };
    }
    if (this.#failure !== undefined) throw this.#failure.error;
  }

  /** Notes a block whose data is written; the journal is flushed on its own, never holding up the writer. */
  #blockDone(block: BlockInfo): void {
    const journal = this.#journal!;
    journal.add(block.index);
    const now = performance.now();
    if (now - this.#lastFlush < FLUSH_INTERVAL_MS) return;
    this.#lastFlush = now;
    this.#track(journal.flush(this.#handle));
  }
}

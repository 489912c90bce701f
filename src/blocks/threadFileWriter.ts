/**
 * The host side of the file writer's thread, the writer of large results (see fileWriter.ts): it
 * hands each finished block to the thread (a block in shared memory as it lies; any other copied
 * into a shared slot first, in event-loop steps), and reports each block once its bytes are in the
 * file. At most `slots` copied blocks are in flight;
 * `put` waits for one to come free, which is how a disk slower than the computation holds the
 * pipeline back. A slot comes free once the thread has staged its block; the block is reported when
 * its write tile (see writeTiles.ts) is written.
 */
import type { Worker } from 'node:worker_threads';
import { LogicError } from '../core/errors.js';
import { startThread, threadEntry } from '../platform/thread.js';
import type { BlockInfo } from './blockScheduler.js';
import { copyInSteps } from './eventLoopSteps.js';
import type { FileWriter, FileWriterOptions } from './fileWriter.js';
import type { FloatArray } from './floatArray.js';
import type { FileWriterInit, FlushTiles, WriteBlock, WriterAnswer } from './fileWriterThread.js';

const entry = threadEntry(import.meta.url, 'fileWriterThread');

/**
 * Streams blocks to one file through a writer thread; see the file comment and {@link FileWriter}.
 *
 * @example
 * const writer = ThreadFileWriter.start({ fd, layout, blockElements, stagingElements: tiles.tileElements, tiles, slots: 4, onWritten: (b) => journal.add(b.index) });
 * for (const block of tiles.blocks) await writer.put(block, resultOf(block));
 * await writer.stop();
 */
export class ThreadFileWriter implements FileWriter {
  readonly #options: FileWriterOptions;
  readonly #thread: Worker;
  readonly #free: SharedArrayBuffer[] = [];
  #allocated = 0;
  /** Blocks the thread has not staged yet: their slot, or the caller's shared buffer and the put waiting for it. */
  readonly #inFlight = new Map<number, { block: BlockInfo; slot?: SharedArrayBuffer; staged?: () => void }>();
  /** Blocks handed to the thread and not yet written (or given up). */
  readonly #unwritten = new Map<number, BlockInfo>();
  #waiting: Array<() => void> = [];
  #drained: Array<() => void> = [];
  #failure: { error: Error } | undefined;
  #stopped = false;
  /** Shared with the thread: 1 once the run is given up (see FileWriterInit.stop). */
  readonly #givenUp = new Int32Array(new SharedArrayBuffer(4));

  private constructor(options: FileWriterOptions) {
    this.#options = options;
    const tileBytes = Math.max(1, options.stagingElements) * options.layout.elementBytes;
    const init: FileWriterInit = {
      fd: options.fd,
      layout: options.layout,
      stagingElements: options.stagingElements,
      stagingBytes: options.stagingBytes ?? 2 * tileBytes,
      tileOf: options.tiles?.tileOf ?? new Int32Array(0),
      tileBlocks: options.tiles?.tileBlocks ?? new Int32Array(0),
      completeBefore: options.tiles?.completeBefore ?? new Float64Array(0),
      ...(options.releasePath === undefined ? {} : { releasePath: options.releasePath }),
      ...(options.inFileOrder === undefined ? {} : { inFileOrder: options.inFileOrder }),
      stop: this.#givenUp,
    };
    this.#thread = startThread(entry, { workerData: init });
    // Only blocks in flight keep the process alive: an idle writer never holds it open.
    this.#thread.unref();
    this.#thread.on('message', (answer: WriterAnswer) => this.#answered(answer));
    this.#thread.on('error', (error) => this.#fail(new Error(`the writer thread failed: ${error.message}`, { cause: error })));
    this.#thread.on('exit', (code) => {
      if (!this.#stopped) this.#died(new Error(`the writer thread exited with code ${code}`));
    });
  }

  /** Starts the writer thread. */
  static start(options: FileWriterOptions): ThreadFileWriter {
    return new ThreadFileWriter(options);
  }

  /** The first failure (a write error, a block that broke the layout's rules, a dead thread), if any. */
  get failure(): Error | undefined {
    return this.#failure?.error;
  }

  /**
   * Queues `block`'s results in `buf` for the thread. Resolves once `buf` may be reused: a buffer
   * in shared memory of the file's dtype (a CPU device's result buffer) is staged by the thread
   * straight from where it is, and the call resolves once it has been; any other is copied into a
   * slot first, which waits while every slot is in flight.
   *
   * @throws (rejects) the writer's first failure, as given by {@link failure}.
   */
  async put(block: BlockInfo, buf: FloatArray): Promise<void> {
    const elements = block.rowCount * block.colCount;
    const float32 = this.#options.layout.dtype === 'float32';
    if (buf.buffer instanceof SharedArrayBuffer && buf instanceof (float32 ? Float32Array : Float64Array)) {
      // No copy on the main thread: 8 MB per block of 1,024 float64; at N = 10,000 the main
      // thread's CPU time fell from 0.54-0.57 s to 0.45-0.54 s.
      this.#throwIfFailed();
      const staged = new Promise<void>((resolve) => this.#send({ block, data: buf.buffer as SharedArrayBuffer, byteOffset: buf.byteOffset }, undefined, resolve));
      await staged;
      return;
    }
    const slot = await this.#acquire();
    const view = float32 ? new Float32Array(slot, 0, elements) : new Float64Array(slot, 0, elements);
    await copyInSteps(view, buf, elements);
    this.#send({ block, data: slot, byteOffset: 0 }, slot, undefined);
  }

  #send(message: WriteBlock, slot: SharedArrayBuffer | undefined, staged: (() => void) | undefined): void {
    const { block } = message;
    if (this.#unwritten.size === 0) this.#thread.ref();
    this.#inFlight.set(block.index, { block, ...(slot === undefined ? {} : { slot }), ...(staged === undefined ? {} : { staged }) });
    this.#unwritten.set(block.index, block);
    this.#thread.postMessage(message);
  }

  /**
   * Resolves when every block put so far is answered (written, or failed); tiles still incomplete
   * are written as far as they got, or with `discard` dropped unwritten and not reported, as are
   * blocks the thread has not staged yet and tiles not yet written. Nothing is written after a
   * discard.
   */
  async drain(discard = false): Promise<void> {
    // Before the flush, so that blocks queued ahead of it are dropped too, not staged and written.
    if (discard) Atomics.store(this.#givenUp, 0, 1);
    if (this.#unwritten.size === 0) return;
    const flush: FlushTiles = { flush: true, discard };
    this.#thread.postMessage(flush);
    while (this.#unwritten.size > 0) await new Promise<void>((resolve) => this.#drained.push(resolve));
  }

  /**
   * Waits for the blocks in flight and ends the thread; with `discard`, tiles still incomplete are
   * dropped (see {@link drain}). After this resolves nothing writes to the descriptor any more, so
   * the caller may close it. Safe to call twice.
   */
  async stop(discard = false): Promise<void> {
    await this.drain(discard);
    this.#stopped = true;
    await this.#thread.terminate();
  }

  #answered({ staged, settled, error, discarded }: WriterAnswer): void {
    if (error !== undefined) this.#fail(error.logic ? new LogicError(error.message) : Object.assign(new Error(error.message), error.code === undefined ? {} : { code: error.code }));
    const entry = staged === undefined ? undefined : this.#inFlight.get(staged);
    if (entry !== undefined) {
      this.#inFlight.delete(entry.block.index);
      entry.staged?.();
      if (entry.slot !== undefined) {
        this.#free.push(entry.slot);
        this.#waiting.shift()?.();
      }
    }
    for (const index of settled ?? []) {
      const block = this.#unwritten.get(index);
      if (block === undefined) continue;
      this.#unwritten.delete(index);
      if (error === undefined && discarded === undefined) this.#options.onWritten(block);
    }
    if (this.#unwritten.size === 0) {
      this.#thread.unref();
      for (const resolve of this.#drained.splice(0)) resolve();
    }
  }

  /** Records the first failure; waiting puts wake up to throw it. */
  #fail(error: Error): void {
    this.#failure ??= { error };
    for (const resolve of this.#waiting.splice(0)) resolve();
  }

  /** A dead thread answers nothing more: its blocks are given up and every wait ends. */
  #died(error: Error): void {
    this.#fail(error);
    this.#stopped = true;
    for (const entry of this.#inFlight.values()) entry.staged?.();
    this.#inFlight.clear();
    this.#unwritten.clear();
    for (const resolve of this.#drained.splice(0)) resolve();
  }

  async #acquire(): Promise<SharedArrayBuffer> {
    for (;;) {
      this.#throwIfFailed();
      const data = this.#free.pop();
      if (data !== undefined) return data;
      if (this.#allocated < this.#options.slots) {
        this.#allocated++;
        return new SharedArrayBuffer(Math.max(1, this.#options.blockElements) * this.#options.layout.elementBytes);
      }
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
  }

  #throwIfFailed(): void {
    if (this.#failure !== undefined) throw this.#failure.error;
  }
}

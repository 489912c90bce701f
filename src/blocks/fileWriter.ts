/**
 * The host side of the file writer's thread: it copies each finished block into a shared slot (in
 * event-loop steps; then the caller may reuse its buffer), hands the slot to the thread, and reports
 * each block once its bytes are in the file. At most `slots` blocks are in flight; `put` waits for
 * one to come free, which is how a disk slower than the computation holds the pipeline back.
 */
import type { Worker } from 'node:worker_threads';
import { LogicError } from '../core/errors.js';
import { startThread, threadEntry } from '../platform/thread.js';
import type { BlockInfo } from './blockScheduler.js';
import { copyInSteps } from './eventLoopSteps.js';
import type { FloatArray } from './floatArray.js';
import type { BlockWritten, FileWriterInit, WriteBlock } from './fileWriterThread.js';
import type { NpyFileLayout } from './npyLayout.js';

const entry = threadEntry(import.meta.url, 'fileWriterThread');

/** Options of {@link FileWriter.start}. */
export interface FileWriterOptions {
  readonly fd: number;
  readonly layout: NpyFileLayout;
  /** Elements of the largest block's result (rowCount * colCount): the size of a slot. */
  readonly blockElements: number;
  /** Elements the largest block occupies in the file: the thread's staging buffer. */
  readonly stagingElements: number;
  /** Blocks in flight at most (at least 1). */
  readonly slots: number;
  /** Called once per block whose bytes are in the file, in the order the thread wrote them. */
  readonly onWritten: (block: BlockInfo) => void;
}

/** Streams blocks to one file through a writer thread; see the file comment. */
export class FileWriter {
  readonly #options: FileWriterOptions;
  readonly #thread: Worker;
  readonly #free: SharedArrayBuffer[] = [];
  #allocated = 0;
  readonly #inFlight = new Map<number, { block: BlockInfo; data: SharedArrayBuffer }>();
  #waiting: Array<() => void> = [];
  #drained: Array<() => void> = [];
  #failure: { error: Error } | undefined;
  #stopped = false;

  private constructor(options: FileWriterOptions) {
    this.#options = options;
    const init: FileWriterInit = { fd: options.fd, layout: options.layout, stagingElements: options.stagingElements };
    this.#thread = startThread(entry, { workerData: init });
    // Only blocks in flight keep the process alive: an idle writer never holds it open.
    this.#thread.unref();
    this.#thread.on('message', (answer: BlockWritten) => this.#answered(answer));
    this.#thread.on('error', (error) => this.#fail(new Error(`the writer thread failed: ${error.message}`, { cause: error })));
    this.#thread.on('exit', (code) => {
      if (!this.#stopped) this.#died(new Error(`the writer thread exited with code ${code}`));
    });
  }

  /** Starts the writer thread. */
  static start(options: FileWriterOptions): FileWriter {
    return new FileWriter(options);
  }

  /** The first failure (a write error, a block that broke the layout's rules, a dead thread), if any. */
  get failure(): Error | undefined {
    return this.#failure?.error;
  }

  /**
   * Copies `block`'s results out of `buf` and queues them for the thread. Resolves once `buf` may
   * be reused; waits first while every slot is in flight.
   *
   * @throws (rejects) the writer's first failure, as given by {@link failure}.
   */
  async put(block: BlockInfo, buf: FloatArray): Promise<void> {
    const data = await this.#acquire();
    const elements = block.rowCount * block.colCount;
    const view = this.#options.layout.dtype === 'float32' ? new Float32Array(data, 0, elements) : new Float64Array(data, 0, elements);
    await copyInSteps(view, buf, elements);
    if (this.#inFlight.size === 0) this.#thread.ref();
    this.#inFlight.set(block.index, { block, data });
    const message: WriteBlock = { block, data };
    this.#thread.postMessage(message);
  }

  /** Resolves when every block put so far is answered (written, or failed). */
  async drain(): Promise<void> {
    while (this.#inFlight.size > 0) await new Promise<void>((resolve) => this.#drained.push(resolve));
  }

  /**
   * Waits for the blocks in flight and ends the thread. After this resolves nothing writes to the
   * descriptor any more, so the caller may close it. Safe to call twice.
   */
  async stop(): Promise<void> {
    await this.drain();
    this.#stopped = true;
    await this.#thread.terminate();
  }

  #answered({ block, error }: BlockWritten): void {
    const entry = this.#inFlight.get(block);
    if (entry === undefined) return;
    this.#inFlight.delete(block);
    if (error !== undefined) this.#fail(error.logic ? new LogicError(error.message) : new Error(error.message));
    else this.#options.onWritten(entry.block);
    this.#free.push(entry.data);
    this.#waiting.shift()?.();
    if (this.#inFlight.size === 0) {
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
    this.#inFlight.clear();
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

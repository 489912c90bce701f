import { StateError, type PxlError } from '../core/errors.js';
import type { NDRange } from '../core/ndRange.js';
import { checkBoolean, checkInteger, checkOptionsObject } from '../core/validate.js';
import type { KernelArg } from '../pxl/arguments.js';
import type { Context } from '../pxl/context.js';
import type { DevicePtr } from '../pxl/devicePtr.js';
import type { Job } from '../pxl/job.js';
import { CommandBuffer, type CommandCallback } from './commandBuffer.js';
import { dispatch } from './dispatch.js';
import { Semaphore } from './semaphore.js';
import { checkCommandCallback, checkContextAndJob, checkKernelName } from './muxArgs.js';

/** Options of {@link CommandQueue}; see {@link COMMAND_QUEUE_DEFAULTS} for the defaults. */
export interface CommandQueueOptions {
  /**
   * Commands per command buffer: once the open buffer holds this many, the queue flushes it on its
   * own, so an unbounded stream of enqueues is submitted in batches. An integer in [1, 1048576];
   * default 256. `1` submits every command as its own buffer.
   */
  readonly maxBatch?: number;
}

/** The resolved defaults of {@link CommandQueueOptions}. */
export const COMMAND_QUEUE_DEFAULTS = Object.freeze({ maxBatch: 256 });

/** Options of {@link CommandQueue.enqueueRead}. */
export interface EnqueueReadOptions {
  /**
   * When true, the read flushes the queue and returns a promise that resolves once the data is in
   * the host array (and every command enqueued before it has completed). Default false: the read
   * is recorded like any other command and the host array is written when it runs.
   */
  readonly blocking?: boolean;
}

const MAX_BATCH = 1 << 20;
const QUEUE_OPTIONS: readonly (keyof CommandQueueOptions)[] = ['maxBatch'];
const READ_OPTIONS: readonly (keyof EnqueueReadOptions)[] = ['blocking'];

/** At most this many completed buffers are kept, reset, for the next batches; the rest are let go. */
const SPARE_BUFFERS = 2;

/**
 * An in-order command queue on top of {@link CommandBuffer}s, like an OpenCL in-order queue. Each
 * `enqueue*` call records into the queue's open command buffer; the buffer is submitted
 * (finalized and dispatched) on {@link CommandQueue.flush}, on {@link CommandQueue.finish}, on a
 * blocking read, or by itself once it holds `maxBatch` commands. A chain of dependent commands thus
 * reaches the cores as one batch, with no host round trip between the commands.
 *
 * Ordering contract: commands run as if one after another in enqueue order. Within a buffer the
 * command buffer's own ordering applies; each submitted buffer waits on a {@link Semaphore}
 * signalled by the one submitted before it, so buffers run in submission order without the host
 * waiting between them.
 *
 * Failure: when a command fails, the rest of its buffer and every later submitted buffer are
 * skipped (the failure travels down the semaphore chain). The queue then stays failed: `finish()`
 * and blocking reads reject with the first failure (a CommandBufferError with `reason: 'failed'`),
 * and `enqueue*` and `flush()` throw a StateError naming it, until `reset()`. Commands enqueued
 * after the failing one but before the queue learnt of it do not run either.
 * When the Context is destroyed, submitted buffers settle with its StateError, which `finish()`
 * and blocking reads then reject with; every later call throws (or rejects with) it too.
 *
 * Memory: the queue holds its open buffer, the semaphore of the last submitted buffer and a couple
 * of completed buffers kept for reuse; submitted buffers are released as they complete.
 *
 * Threads: all methods are called from the thread that owns the Context (the main thread).
 *
 * @example
 * ```ts
 * const queue = new CommandQueue(ctx, job);
 * queue.enqueueWrite(ptr, 0, Float32Array.of(1, 2, 3, 4))
 *   .enqueueLaunch('scale', { global: [4] }, ptr)
 *   .enqueueLaunch('scale', { global: [4] }, ptr);
 * const out = new Float32Array(4);
 * await queue.enqueueRead(ptr, 0, out, { blocking: true }); // one batch of three commands, then out
 * ```
 */
export class CommandQueue {
  readonly #ctx: Context;
  readonly #job: Job | undefined;
  readonly #maxBatch: number;
  /** The buffer being recorded, created on the first enqueue after a flush. */
  #open: CommandBuffer | undefined;
  #queued = 0;
  /** Signalled (or failed) by the last submitted buffer; the next submitted buffer waits on it. */
  #tail: Semaphore | undefined;
  #inFlight = 0;
  #spare: CommandBuffer[] = [];
  /** The first failure of a submitted buffer; sticky until reset(). */
  #failure: PxlError | undefined;
  /** Woken when #inFlight drops to 0. */
  #idle: (() => void)[] = [];

  /**
   * `job` runs the queue's kernel launches; a queue without one takes memory commands and
   * callbacks only (enqueueLaunch then throws a StateError).
   * @throws OptionError for a `maxBatch` that is not an integer in [1, 1048576], options that are
   *   not an object, or an unknown option; ArgumentError when `context` is not a Context or `job`
   *   not a Job; StateError for a Job of another Context.
   */
  constructor(context: Context, job?: Job, options?: CommandQueueOptions) {
    checkContextAndJob('CommandQueue', context, job);
    const o = checkOptionsObject('CommandQueue options', options, QUEUE_OPTIONS);
    this.#ctx = context;
    this.#job = job;
    this.#maxBatch = checkInteger('maxBatch', o.maxBatch ?? COMMAND_QUEUE_DEFAULTS.maxBatch, 1, MAX_BATCH);
  }

  /** The `maxBatch` this queue flushes at. */
  get maxBatch(): number {
    return this.#maxBatch;
  }

  /** Commands recorded into the open buffer and not yet submitted. */
  get queued(): number {
    return this.#queued;
  }

  /** Submitted command buffers that have not completed (or failed) yet. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** The first failure of a submitted buffer, or undefined while the queue is healthy. */
  get failure(): PxlError | undefined {
    return this.#failure;
  }

  /**
   * Enqueues a write of `data`'s bytes to `dst` + `offset`. The bytes are copied now, so `data` may
   * be changed or reused as soon as this returns.
   * @throws ArgumentError for a region outside the allocation or a foreign/freed pointer (the queue
   *   is unchanged); StateError when the queue has failed.
   */
  enqueueWrite(dst: DevicePtr, offset: number, data: ArrayBufferView): this {
    return this.#record('enqueueWrite', (cb) => cb.write(dst, offset, data));
  }

  /**
   * Enqueues a read of `dst.byteLength` bytes at `src` + `offset` into host memory `dst`.
   * Non-blocking (the default): returns the queue; `dst` is written when the read runs, so read it
   * after `finish()`. Blocking: flushes and returns a promise resolved once `dst` holds the data.
   * @throws ArgumentError for a bad region; StateError when the queue has failed; OptionError for
   *   options that are not an object, an unknown option, or a `blocking` that is not true or false
   *   (a rejection when `blocking: true` was given). A blocking read
   *   rejects instead of throwing, and also rejects with the queue's CommandBufferError when this
   *   or an earlier command fails.
   */
  enqueueRead(src: DevicePtr, offset: number, dst: ArrayBufferView, options: EnqueueReadOptions & { readonly blocking: true }): Promise<void>;
  enqueueRead(src: DevicePtr, offset: number, dst: ArrayBufferView, options?: EnqueueReadOptions & { readonly blocking?: false }): this;
  enqueueRead(src: DevicePtr, offset: number, dst: ArrayBufferView, options?: EnqueueReadOptions): this | Promise<void>;
  enqueueRead(src: DevicePtr, offset: number, dst: ArrayBufferView, readOptions?: EnqueueReadOptions): this | Promise<void> {
    let options: EnqueueReadOptions;
    try {
      options = checkOptionsObject('enqueueRead options', readOptions, READ_OPTIONS);
      if (options.blocking !== undefined) checkBoolean('blocking', options.blocking);
    } catch (error) {
      // A caller that asked to block awaits a promise: it gets a rejection. Otherwise it cannot be
      // known whether the call was to block, and the error is thrown.
      if ((readOptions as EnqueueReadOptions | null | undefined)?.blocking === true) return Promise.reject(error);
      throw error;
    }
    if (options.blocking !== true) return this.#record('enqueueRead', (cb) => cb.read(src, offset, dst));
    try {
      this.#record('enqueueRead', (cb) => cb.read(src, offset, dst));
    } catch (error) {
      return Promise.reject(error);
    }
    return this.finish();
  }

  /**
   * Enqueues a device-to-device copy of `size` bytes (overlapping regions copy as if through a
   * temporary buffer).
   * @throws ArgumentError for either region outside its allocation; StateError when the queue has failed.
   */
  enqueueCopy(src: DevicePtr, srcOffset: number, dst: DevicePtr, dstOffset: number, size: number): this {
    return this.#record('enqueueCopy', (cb) => cb.copy(src, srcOffset, dst, dstOffset, size));
  }

  /**
   * Enqueues a fill of `size` bytes at `dst` + `offset` with `pattern` repeated.
   * @throws ArgumentError for a bad region, an empty pattern or a size that is not a multiple of
   *   it; StateError when the queue has failed.
   */
  enqueueFill(dst: DevicePtr, offset: number, size: number, pattern: ArrayBufferView): this {
    return this.#record('enqueueFill', (cb) => cb.fill(dst, offset, size, pattern));
  }

  /**
   * Enqueues a launch of `kernel` over an ND-range (see {@link CommandBuffer.launch}).
   * @throws StateError when the queue has no Job or has failed; OptionError for a bad range;
   *   KernelNotFoundError for a kernel the Job's modules do not export.
   */
  enqueueLaunch(kernel: string, range: NDRange, ...args: KernelArg[]): this {
    if (this.#job === undefined) throw new StateError('enqueueLaunch: this queue has no Job; create it with new CommandQueue(ctx, job)');
    checkKernelName('enqueueLaunch', kernel);
    return this.#record('enqueueLaunch', (cb) => cb.launch(kernel, range, ...args));
  }

  /**
   * Enqueues a host callback, run in order with the other commands; a callback that throws (or
   * rejects) fails the queue.
   * @throws ArgumentError when `fn` is not a function; StateError when the queue has failed.
   */
  enqueueCallback(fn: CommandCallback): this {
    checkCommandCallback('enqueueCallback', fn);
    return this.#record('enqueueCallback', (cb) => cb.callback(fn));
  }

  /**
   * Submits the open buffer, if it holds any command: finalizes it and dispatches it waiting on
   * the previously submitted buffer's semaphore. Returns at once; the host does not wait.
   * @throws StateError when the queue has failed.
   */
  flush(): void {
    this.#healthy('flush');
    const cb = this.#open;
    if (cb === undefined || this.#queued === 0) return;
    this.#open = undefined;
    this.#queued = 0;
    const wait = this.#tail;
    const signal = new Semaphore();
    this.#tail = signal;
    this.#inFlight++;
    dispatch(cb.finalize(), { wait: wait === undefined ? [] : [wait], signal: [signal], callback: (error) => this.#completed(cb, error) });
  }

  /**
   * Flushes, then resolves once every submitted command has completed.
   * @throws (rejects) the queue's first failure, a CommandBufferError, when a command failed (now
   *   or earlier, until `reset()`); the rejection comes once every submitted buffer has settled.
   */
  async finish(): Promise<void> {
    if (this.#failure === undefined) this.flush();
    if (this.#inFlight > 0) await new Promise<void>((r) => this.#idle.push(r));
    if (this.#failure !== undefined) throw this.#failure;
  }

  /**
   * Drops the commands not yet submitted and clears a failure, so the queue takes work again.
   * Device memory is left as the commands that ran left it.
   * @throws StateError while submitted buffers are in flight; `await finish()` (which may reject) first.
   */
  reset(): void {
    if (this.#inFlight > 0) {
      throw new StateError(`CommandQueue.reset: ${this.#inFlight} submitted command buffer(s) have not completed; await finish() first`);
    }
    this.#open?.reset();
    this.#queued = 0;
    this.#tail = undefined;
    this.#failure = undefined;
  }

  /** Records through `record` into the open buffer, then flushes when the buffer is full. */
  #record(op: string, record: (cb: CommandBuffer) => unknown): this {
    this.#ctx.checkAlive();
    this.#healthy(op);
    const cb = (this.#open ??= this.#spare.pop() ?? new CommandBuffer(this.#ctx, this.#job));
    record(cb); // throws before recording anything on bad input
    if (++this.#queued >= this.#maxBatch) this.flush();
    return this;
  }

  #healthy(op: string): void {
    const failure = this.#failure;
    if (failure !== undefined) {
      throw new StateError(`${op}: the queue failed earlier (${failure.message}); call reset() after finish() to use it again, or create a new CommandQueue`);
    }
  }

  /** Dispatch callback of each submitted buffer, called in submission order. */
  #completed(cb: CommandBuffer, error: PxlError | undefined): void {
    // The first failure is the one with reason 'failed'; the later buffers only report it upstream.
    if (error !== undefined) this.#failure ??= error;
    // Keep a few completed buffers for the next batches; the state check guards the reuse in case
    // a dispatch ever calls back before it releases its buffer.
    if (this.#spare.length < SPARE_BUFFERS && cb.state !== 'dispatched') this.#spare.push(cb.reset());
    if (--this.#inFlight === 0) for (const wake of this.#idle.splice(0)) wake();
  }
}

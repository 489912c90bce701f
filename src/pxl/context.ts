import type { Backend } from '../backends/backend.js';
import type { DType, TypedArrayOf } from '../core/dtype.js';
import { ArgumentError, NoSubAvailableError, StateError } from '../core/errors.js';
import { coresPerSub, totalCores, type Topology } from '../core/topology.js';
import { checkInteger, checkOneOf, describe } from '../core/validate.js';
import { ContextMemory } from './contextMemory.js';
import { createBackend, type ContextOptions } from './contextOptions.js';
import { ContextTrace, traceFileFromEnv } from './contextTrace.js';
import { DevicePtr } from './devicePtr.js';
import { Job, type JobSite } from './job.js';
import { KernelModule } from './kernelModule.js';
import { MaxTaskCount } from './launchPlan.js';
import { DefaultStreamLimit, Stream } from './stream.js';
import { SubPool, type SubLoan } from './subPool.js';
import { writeTrace, type ChromeTrace } from './trace.js';

// The Context coordinates; each concern lives in its own file: options and backend selection in
// contextOptions.ts, memory in contextMemory.ts, free Subs in subPool.ts, tracing in contextTrace.ts.
// Every public method checks that the Context is alive, then delegates. `createQueue` is added to
// Context by the graph layer (src/graph/queue.ts), which sits above pxl.
export type { ContextOptions } from './contextOptions.js';

/** Figures `Context.getAttribute` reports. */
export const Attributes = ['backend', 'device', 'subCount', 'clustersPerSub', 'coresPerCluster', 'coresPerSub', 'coreCount', 'memorySize', 'availableMemSize', 'availableSubCount', 'maxTaskCount'] as const;
export type Attribute = (typeof Attributes)[number];

/**
 * Creates a Context: the device, its memory, and its MU cores, started and waiting for work.
 *
 * @example
 * ```ts
 * const ctx = await createContext({ topology: { subs: 2, clustersPerSub: 2, coresPerCluster: 4 } });
 * const gpu = await createContext({ backend: 'webgpu' });  // kernels with a WGSL body run there
 * ```
 * @throws (rejects) OptionError for an invalid option; DeviceUnavailableError for `'webgpu'` when
 *   no GPU adapter can be opened (the message lists what was tried and what to install).
 */
export async function createContext(options: ContextOptions = {}): Promise<Context> {
  const backend = await createBackend(options);
  const ctx = new Context(backend, traceFileFromEnv());
  if (options.trace === true || ctx.traceFile !== undefined) ctx.startTrace();
  return ctx;
}

/**
 * The host's handle on one device: memory, kernel modules, Jobs and streams. Create it with
 * {@link createContext}; release it with `destroy()`.
 */
export class Context {
  readonly #backend: Backend;
  readonly #memory: ContextMemory;
  readonly #subs: SubPool;
  /** Jobs a layer above holds for work of its own, and who that is (see markHeldJob). */
  readonly #heldJobs = new WeakMap<Job, string>();
  readonly #trace: ContextTrace;
  readonly #site: JobSite;
  readonly #jobs = new Set<Job>();
  readonly #streams = new Set<Stream>();
  /** Work of the layers above (command buffers, task-graph queues) to settle when the Context goes. */
  readonly #teardown = new Set<(error: StateError) => void>();
  #destroyed = false;
  #destroying: Promise<void> | undefined;
  /** @internal Where PXL_TRACE asked the trace to be written at destroy. */
  readonly traceFile: string | undefined;

  /** @internal */
  constructor(backend: Backend, traceFile?: string) {
    this.#backend = backend;
    this.traceFile = traceFile;
    this.#memory = new ContextMemory(this, backend);
    this.#subs = new SubPool(backend.topology.subs);
    this.#trace = new ContextTrace(backend);
    this.#site = {
      owner: this,
      backend,
      topology: backend.topology,
      takeSubs: (n) => this.#takeSubs(n),
      returnSubs: (subs) => this.#subs.give(subs),
      tracer: () => this.#trace.tracer,
      alive: () => this.#alive(),
    };
  }

  get topology(): Topology {
    return this.#backend.topology;
  }

  /** Bytes of device memory not yet allocated. */
  get availableMemSize(): number {
    return this.#memory.available;
  }

  /** Subs no Job owns. */
  get availableSubCount(): number {
    return this.#subs.free;
  }

  /** @internal Resolves the next time a Job gives Subs back; pairwise operations wait on it for a free Sub. */
  subsReturned(): Promise<void> {
    return this.#subs.returned();
  }

  /**
   * @internal Marks a Job that a layer above holds for its own work (`holder` names that work and
   * when it gives the Subs back), so that a refused Sub can say who holds it: the caller has no
   * Job of its own to destroy for those.
   */
  markHeldJob(job: Job, holder: string): void {
    this.#heldJobs.set(job, holder);
  }

  /** @internal Lends the Subs of idle Jobs kept for reuse: they count as available, and taking them destroys those Jobs (see SubPool). */
  lendSubs(loan: SubLoan): () => boolean {
    return this.#subs.lend(loan);
  }

  /**
   * One figure of the device: its topology, memory and limits (see {@link Attributes}).
   * @throws OptionError for an unknown name, listing the valid ones; StateError once destroyed.
   */
  getAttribute(attribute: Attribute): string | number {
    // A destroyed device has no figures: its memory and Subs were released with it.
    this.#alive();
    const t = this.topology;
    switch (checkOneOf('attribute', attribute, Attributes)) {
      case 'backend': return this.#backend.name;
      case 'device': return String(this.#backend.describe().device);
      case 'subCount': return t.subs;
      case 'clustersPerSub': return t.clustersPerSub;
      case 'coresPerCluster': return t.coresPerCluster;
      case 'coresPerSub': return coresPerSub(t);
      case 'coreCount': return totalCores(t);
      case 'memorySize': return this.#backend.memorySize;
      case 'availableMemSize': return this.availableMemSize;
      case 'availableSubCount': return this.availableSubCount;
      case 'maxTaskCount': return MaxTaskCount;
    }
  }

  /**
   * Allocates `bytes` of device memory, zero-filled.
   * @throws OutOfMemoryError when fewer bytes are available.
   */
  memAlloc(bytes: number): DevicePtr {
    this.#alive();
    return this.#memory.alloc(bytes);
  }

  /** Allocates `count` elements of `size` bytes each, zero-filled. */
  memCalloc(count: number, size: number): DevicePtr {
    checkInteger('memCalloc count', count, 1, Number.MAX_SAFE_INTEGER);
    checkInteger('memCalloc size', size, 1, Number.MAX_SAFE_INTEGER);
    return this.memAlloc(count * size);
  }

  /** Frees an allocation. @throws ArgumentError for a pointer into an allocation, a foreign or freed one. */
  memFree(ptr: DevicePtr): void {
    this.#alive();
    checkPtr('memFree', 'ptr', ptr);
    this.#memory.free(ptr);
  }

  /**
   * @internal Device memory that is `buffer` itself, without a copy, where the devices read host
   * shared memory (CPU cores) and `buffer` is a SharedArrayBuffer; undefined otherwise (then copy).
   * It counts against the memory available until `memFree` gives it back, which leaves the buffer
   * to its host owner.
   */
  adoptHostMemory(buffer: ArrayBufferLike): DevicePtr | undefined {
    this.#alive();
    return this.#memory.adopt(buffer);
  }

  /**
   * Copies host bytes to device memory at `dst`.
   * @throws (rejects) ArgumentError for a `dst` that is not a live pointer of this Context, a `src`
   *   that is not host memory, or more bytes than fit from `dst` to the end of its allocation.
   */
  async copyToDevice(dst: DevicePtr, src: ArrayBufferView | ArrayBufferLike): Promise<void> {
    this.#alive();
    checkPtr('copyToDevice', 'dst', dst);
    checkHostMemory('copyToDevice', 'src', src);
    await this.#memory.write(dst, src);
  }

  /**
   * Copies device memory at `src` into host memory `dst` (as many bytes as `dst` holds).
   * @throws (rejects) ArgumentError for a `dst` that is not host memory, a `src` that is not a live
   *   pointer of this Context, or more bytes than `src` has to the end of its allocation.
   */
  async copyFromDevice(dst: ArrayBufferView | ArrayBufferLike, src: DevicePtr): Promise<void> {
    this.#alive();
    checkHostMemory('copyFromDevice', 'dst', dst);
    checkPtr('copyFromDevice', 'src', src);
    await this.#memory.read(dst, src);
  }

  /**
   * A TypedArray over device memory itself, with no copy: on the CPU backend device memory is
   * shared with the host. Its length is `length`, or what fits between `ptr` and the end of the
   * allocation when left out.
   * @throws StateError on a backend whose memory the host cannot see; OptionError for an unknown
   *   dtype; ArgumentError when `length` elements reach past the end of the allocation, or when,
   *   without `length`, the bytes to the end are not a whole number of elements.
   */
  hostView<D extends DType>(ptr: DevicePtr, dtype: D, length?: number): TypedArrayOf<D> {
    this.#alive();
    return this.#memory.hostView(ptr, dtype, length);
  }

  /**
   * Loads a kernel module into every MU core. TypeScript modules work too. A string is a path or
   * URL, relative to the current directory.
   * @throws (rejects) ModuleLoadError when the module cannot be imported; ArgumentError when `url`
   *   is neither a URL nor a non-empty string.
   */
  async createModule(url: URL | string): Promise<KernelModule> {
    this.#alive();
    if (!(url instanceof URL) && (typeof url !== 'string' || url === '')) {
      throw new ArgumentError(`createModule: url must be a URL (new URL('./kernels.js', import.meta.url)) or a file path, got ${describe(url)}`);
    }
    const href = url instanceof URL ? url.href : new URL(url, `file://${process.cwd()}/`).href;
    return new KernelModule(this, await this.#backend.loadModule(href));
  }

  /**
   * Creates a Job owning `numSub` Subs, or every free Sub when omitted.
   * @throws NoSubAvailableError when fewer Subs are free (or none, when omitted); OptionError for a
   *   `numSub` that is not an integer in [1, subCount].
   */
  createJob(numSub?: number): Job {
    this.#alive();
    if (numSub === undefined && this.#subs.free === 0) {
      throw new NoSubAvailableError(`createJob: no Sub is free (all ${this.topology.subs} belong to Jobs); destroy a Job with ctx.destroyJob(job), or free Subs with job.subFree(), first${this.#heldByCalls()}`);
    }
    const count = numSub === undefined ? this.#subs.free : checkInteger('numSub', numSub, 1, this.topology.subs);
    const job = new Job(this.#site, this.#takeSubs(count));
    this.#jobs.add(job);
    return job;
  }

  /**
   * Returns a Job's Subs to the Context. A launch already running finishes; executes still waiting
   * for room resolve `Result.Failure`, and launches queued behind the running one fail their Map
   * with StateError.
   * @throws ArgumentError when `job` is not a Job; StateError for a Job of another Context or one
   *   already destroyed.
   */
  destroyJob(job: Job): void {
    this.#alive();
    if (!(job instanceof Job)) throw new ArgumentError(`destroyJob: job must be a Job from ctx.createJob(), got ${describe(job)}`);
    if (job.owner !== this) throw new StateError("destroyJob: the Job belongs to another Context; destroy it with that Context's destroyJob()");
    if (!this.#jobs.delete(job)) throw new StateError('destroyJob: the Job is not a live Job of this Context');
    job.release();
  }

  /**
   * A new stream for `KernelMap.setStream`, holding at most `limit` operations.
   * @throws OptionError for a `limit` that is not an integer in [1, 1048576].
   */
  createStream(limit = DefaultStreamLimit): Stream {
    this.#alive();
    const stream = new Stream(this, limit);
    this.#streams.add(stream);
    return stream;
  }

  /**
   * Destroys a stream: executes still waiting for room on it resolve `Result.Failure`.
   * @throws ArgumentError when `stream` is not a Stream; StateError for a stream of another Context
   *   or a Job's default stream.
   */
  destroyStream(stream: Stream): void {
    this.#alive();
    if (!(stream instanceof Stream)) throw new ArgumentError(`destroyStream: stream must be a Stream from ctx.createStream(), got ${describe(stream)}`);
    if (stream.owner !== this) throw new StateError('destroyStream: the stream belongs to another Context');
    if (stream.isDefault) throw new StateError("destroyStream: this is a Job's default stream, which lives as long as its Job; destroy the Job with ctx.destroyJob(job) instead");
    this.#streams.delete(stream);
    stream.destroy();
  }

  /**
   * Starts recording an execution trace: every execute's lifecycle transitions (one track per
   * stream) and every batch's start and end on each MU core. Off by default and free when off.
   * @throws StateError when a trace is already being recorded.
   */
  startTrace(): void {
    this.#alive();
    this.#trace.start();
  }

  /** Whether a trace is being recorded. */
  get tracing(): boolean {
    return this.#trace.tracer !== undefined;
  }

  /**
   * Stops recording and returns the trace in the Chrome Trace Event format: save it as JSON
   * (`writeTrace`) and open it in Perfetto (ui.perfetto.dev) or chrome://tracing.
   * @throws StateError when no trace is being recorded.
   */
  stopTrace(): ChromeTrace {
    this.#alive();
    return this.#trace.stop();
  }

  /**
   * Stops every MU core and releases device memory. Everything still outstanding settles with one
   * StateError ('this Context was destroyed; ...'): launches in flight or queued fail their Maps
   * (synchronize rejects), executes waiting for room resolve `Result.Failure`, pending module loads,
   * command-buffer dispatches (their fences and signal semaphores) and task-graph queues fail.
   * Every later call rejects or throws the same StateError. Nothing is left that keeps the process
   * alive. Calling it again does nothing more, and resolves once the first call has finished.
   */
  destroy(): Promise<void> {
    // A second caller (a signal handler beside a finally, say) must not go on while the cores
    // still run and the trace is unwritten.
    this.#destroying ??= this.#destroy();
    return this.#destroying;
  }

  async #destroy(): Promise<void> {
    const trace = this.#trace.end();
    this.#destroyed = true;
    const error = destroyedError();
    for (const job of this.#jobs) job.release();
    for (const stream of this.#streams) stream.destroy();
    this.#jobs.clear();
    this.#streams.clear();
    for (const settle of [...this.#teardown]) {
      try {
        settle(error);
      } catch {
        // One layer's teardown must not keep the others, or the cores, from ending.
      }
    }
    this.#teardown.clear();
    await this.#backend.destroy(error);
    if (trace !== undefined && this.traceFile !== undefined) await writeTrace(this.traceFile, trace);
  }

  /**
   * @internal Calls `settle` with the Context's StateError when `destroy()` starts (at once, in a
   * microtask, when it already has), so work outside pxl's own objects cannot outlive the cores.
   * Returns the function that unregisters it.
   */
  onDestroy(settle: (error: StateError) => void): () => void {
    if (this.#destroyed) {
      queueMicrotask(() => settle(destroyedError()));
      return () => undefined;
    }
    this.#teardown.add(settle);
    return () => this.#teardown.delete(settle);
  }

  /** @internal Throws the StateError of a destroyed Context; for the layers above pxl. */
  checkAlive(): void {
    this.#alive();
  }

  #takeSubs(count: number): number[] {
    try {
      return this.#subs.take(count);
    } catch (err) {
      const held = this.#heldByCalls();
      if (err instanceof NoSubAvailableError && held !== '') throw new NoSubAvailableError(`${err.message}${held}`);
      throw err;
    }
  }

  /** What a refusal adds for each holder of marked Jobs (see markHeldJob): how many Subs it holds. */
  #heldByCalls(): string {
    const held = new Map<string, number>();
    for (const job of this.#jobs) {
      const holder = this.#heldJobs.get(job);
      if (holder !== undefined) held.set(holder, (held.get(holder) ?? 0) + job.subCount);
    }
    let text = '';
    for (const [holder, subs] of held) text += `; ${subs} of them belong${subs === 1 ? 's' : ''} to ${holder}`;
    return text;
  }

  #alive(): void {
    if (this.#destroyed) throw destroyedError();
  }
}

/** The one error everything of a destroyed Context fails with. */
function destroyedError(): StateError {
  return new StateError('this Context was destroyed; create a new one with createContext() (pdist, cdist and l2Kernel without a context open a new default one themselves)');
}

/** Foreign and freed pointers are refused below, where the Context's memory knows its own. */
function checkPtr(op: string, name: string, ptr: unknown): void {
  if (!(ptr instanceof DevicePtr)) throw new ArgumentError(`${op}: ${name} must be a DevicePtr from ctx.memAlloc(), got ${describe(ptr)}`);
}

function checkHostMemory(op: string, name: string, x: unknown): void {
  if (!ArrayBuffer.isView(x) && !(x instanceof ArrayBuffer) && !(x instanceof SharedArrayBuffer)) {
    throw new ArgumentError(`${op}: ${name} must be host memory (a TypedArray, DataView, ArrayBuffer or SharedArrayBuffer), got ${describe(x)}`);
  }
}

import { availableParallelism, totalmem } from 'node:os';
import type { Backend } from '../backends/backend.js';
import { CpuBackend, type CpuBackendOptions } from '../backends/cpu/cpuBackend.js';
import { dtypeSize, DTYPES, type DType, type TypedArrayOf } from '../core/dtype.js';
import { ArgumentError, DeviceUnavailableError, NoSubAvailableError, OptionError, StateError } from '../core/errors.js';
import { coresPerSub, totalCores, type Topology } from '../core/topology.js';
import { checkInteger, checkOneOf } from '../core/validate.js';
import { DevicePtr } from './devicePtr.js';
import { Job } from './job.js';
import { KernelModule } from './kernelModule.js';
import { MaxTaskCount } from './launchPlan.js';
import { DefaultStreamLimit, Stream } from './stream.js';
import { Tracer, writeTrace, type ChromeTrace } from './trace.js';
import { Queue, type QueueOptions } from '../graph/queue.js';

/** Options of {@link createContext}. */
export interface ContextOptions {
  /**
   * Which device runs the kernels. Default `'cpu'`: one MU core per available CPU. `'webgpu'`: a
   * GPU through WebGPU, running the kernels' WGSL bodies (rejects with DeviceUnavailableError, which
   * says what to install, when no adapter is found; software adapters such as Mesa's llvmpipe
   * count). `'auto'`: a hardware GPU when one is found, else CPU cores.
   */
  backend?: 'cpu' | 'webgpu' | 'auto';
  /** Device shape (cpu backend only). Default: 1 Sub × 1 Cluster × `os.availableParallelism()` cores. */
  topology?: Partial<Topology>;
  /**
   * Bytes of device memory the Context may allocate. Default: half of the machine's memory on CPU
   * cores; four times the GPU's largest storage binding on webgpu.
   */
  memorySize?: number;
  /** Heap limit of each MU core's thread in MiB (cpu backend only); a core that exceeds it dies and is replaced. */
  coreHeapLimitMB?: number;
  /**
   * Record an execution trace from the start (see `Context.startTrace`). Setting the environment
   * variable `PXL_TRACE=trace.json` does the same for every Context and writes the trace to that
   * file when the Context is destroyed. Default false.
   */
  trace?: boolean;
}

/** Figures `Context.getAttribute` reports. */
export const Attributes = ['backend', 'device', 'subCount', 'clustersPerSub', 'coresPerCluster', 'coresPerSub', 'coreCount', 'memorySize', 'availableMemSize', 'availableSubCount', 'maxTaskCount'] as const;
export type Attribute = (typeof Attributes)[number];

const MAX_CORES = 1024;

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
  const kind = checkOneOf('backend', options.backend ?? 'cpu', ['cpu', 'webgpu', 'auto']);
  const cpu = kind === 'webgpu' ? undefined : cpuOptions(options);
  const gpu = kind === 'cpu' ? undefined : await createGpuBackend(kind, options);
  const backend = gpu ?? (await CpuBackend.create(cpu!));
  const traceFile = process.env.PXL_TRACE;
  const ctx = new Context(backend, traceFile === undefined || traceFile === '' ? undefined : traceFile);
  if (options.trace === true || ctx.traceFile !== undefined) ctx.startTrace();
  return ctx;
}

/** Validated options of the cpu backend. */
function cpuOptions(options: ContextOptions): CpuBackendOptions {
  const t = options.topology ?? {};
  const topology: Topology = Object.freeze({
    subs: checkInteger('topology.subs', t.subs ?? 1, 1, MAX_CORES),
    clustersPerSub: checkInteger('topology.clustersPerSub', t.clustersPerSub ?? 1, 1, MAX_CORES),
    coresPerCluster: checkInteger('topology.coresPerCluster', t.coresPerCluster ?? (t.subs === undefined && t.clustersPerSub === undefined ? availableParallelism() : 1), 1, MAX_CORES),
  });
  if (totalCores(topology) > MAX_CORES) {
    throw new OptionError(`topology has ${totalCores(topology)} MU cores (subs × clustersPerSub × coresPerCluster); at most ${MAX_CORES} are supported`);
  }
  const memorySize = checkInteger('memorySize', options.memorySize ?? Math.floor(totalmem() / 2), 0, Number.MAX_SAFE_INTEGER);
  const heap = options.coreHeapLimitMB === undefined ? undefined : checkInteger('coreHeapLimitMB', options.coreHeapLimitMB, 16, 1 << 20);
  return { topology, memorySize, ...(heap === undefined ? {} : { coreResourceLimits: { maxOldGenerationSizeMb: heap } }) };
}

/** The webgpu backend, or undefined when `'auto'` finds no hardware GPU. */
async function createGpuBackend(kind: 'webgpu' | 'auto', options: ContextOptions): Promise<Backend | undefined> {
  if (kind === 'webgpu') {
    for (const name of ['topology', 'coreHeapLimitMB'] as const) {
      if (options[name] !== undefined) throw new OptionError(`${name} applies to the cpu backend only; the webgpu backend takes its shape from the GPU adapter`);
    }
  }
  const memorySize = options.memorySize === undefined ? {} : { memorySize: checkInteger('memorySize', options.memorySize, 0, Number.MAX_SAFE_INTEGER) };
  const { WebGpuBackend } = await import('../backends/webgpu/index.js');
  try {
    return await WebGpuBackend.create({ maxBatches: MaxTaskCount, hardwareOnly: kind === 'auto', ...memorySize });
  } catch (err) {
    if (kind === 'auto' && err instanceof DeviceUnavailableError) return undefined;
    throw err;
  }
}

/**
 * The host's handle on one device: memory, kernel modules, Jobs and streams. Create it with
 * {@link createContext}; release it with `destroy()`.
 */
export class Context {
  readonly #backend: Backend;
  readonly #freeSubs: number[];
  readonly #jobs = new Set<Job>();
  readonly #streams = new Set<Stream>();
  #tracer: Tracer | undefined;
  #destroyed = false;
  /** @internal Where PXL_TRACE asked the trace to be written at destroy. */
  readonly traceFile: string | undefined;

  /** @internal */
  constructor(backend: Backend, traceFile?: string) {
    this.#backend = backend;
    this.traceFile = traceFile;
    this.#freeSubs = Array.from({ length: backend.topology.subs }, (_, s) => s);
  }

  get topology(): Topology {
    return this.#backend.topology;
  }

  /** Bytes of device memory not yet allocated. */
  get availableMemSize(): number {
    return this.#backend.memorySize - this.#backend.allocatedBytes;
  }

  /** Subs no Job owns. */
  get availableSubCount(): number {
    return this.#freeSubs.length;
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
    checkInteger('memAlloc bytes', bytes, 1, Number.MAX_SAFE_INTEGER);
    const buffer = this.#backend.allocate(bytes);
    return new DevicePtr(this, buffer, { freed: false, byteLength: bytes });
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
    this.#own(ptr, 'memFree');
    if (ptr.byteOffset !== 0) throw new ArgumentError(`memFree needs the pointer memAlloc returned, not one ${ptr.byteOffset} bytes into it`);
    ptr.allocation.freed = true;
    this.#backend.free(ptr.buffer);
  }

  /** Copies host bytes to device memory at `dst`. */
  async copyToDevice(dst: DevicePtr, src: ArrayBufferView | ArrayBufferLike): Promise<void> {
    this.#alive();
    this.#own(dst, 'copyToDevice');
    const bytes = asBytes(src);
    this.#fits(dst, bytes.byteLength, 'copyToDevice');
    await this.#backend.write(dst.buffer, dst.byteOffset, bytes);
  }

  /** Copies device memory at `src` into host memory `dst` (as many bytes as `dst` holds). */
  async copyFromDevice(dst: ArrayBufferView | ArrayBufferLike, src: DevicePtr): Promise<void> {
    this.#alive();
    this.#own(src, 'copyFromDevice');
    const bytes = asBytes(dst);
    this.#fits(src, bytes.byteLength, 'copyFromDevice');
    await this.#backend.read(src.buffer, src.byteOffset, bytes);
  }

  /**
   * A TypedArray over device memory itself, with no copy: on the CPU backend device memory is
   * shared with the host. Its length is what fits between `ptr` and the end of the allocation.
   * @throws StateError on a backend whose memory the host cannot see.
   */
  hostView<D extends DType>(ptr: DevicePtr, dtype: D): TypedArrayOf<D> {
    this.#alive();
    this.#own(ptr, 'hostView');
    const sab = this.#backend.hostBuffer(ptr.buffer);
    if (sab === undefined) throw new StateError(`hostView: the ${this.#backend.name} backend's memory is not visible to the host; use copyFromDevice`);
    const size = dtypeSize(dtype);
    if (ptr.byteOffset % size !== 0) throw new ArgumentError(`hostView: byte offset ${ptr.byteOffset} is not aligned to ${dtype} (${size} bytes)`);
    const Ctor = DTYPES[dtype] as unknown as new (b: SharedArrayBuffer, o: number, n: number) => TypedArrayOf<D>;
    return new Ctor(sab, ptr.byteOffset, Math.floor(ptr.byteLength / size));
  }

  /**
   * Loads a kernel module into every MU core. TypeScript modules work too.
   * @throws (rejects) ModuleLoadError when the module cannot be imported.
   */
  async createModule(url: URL | string): Promise<KernelModule> {
    this.#alive();
    const href = url instanceof URL ? url.href : new URL(url, `file://${process.cwd()}/`).href;
    return new KernelModule(this, await this.#backend.loadModule(href));
  }

  /**
   * Creates a Job owning `numSub` Subs, or every free Sub when omitted.
   * @throws NoSubAvailableError when fewer Subs are free.
   */
  createJob(numSub?: number): Job {
    this.#alive();
    const count = numSub === undefined ? this.#freeSubs.length : checkInteger('numSub', numSub, 1, this.topology.subs);
    const job = new Job(
      {
        owner: this,
        backend: this.#backend,
        topology: this.topology,
        takeSubs: (n) => this.#takeSubs(n),
        returnSubs: (subs) => this.#freeSubs.push(...subs),
        tracer: () => this.#tracer,
        alive: () => this.#alive(),
      },
      this.#takeSubs(count),
    );
    this.#jobs.add(job);
    return job;
  }

  /**
   * Returns a Job's Subs to the Context. A launch already running finishes; executes still waiting
   * for room resolve `Result.Failure`, and launches queued behind the running one fail their Map
   * with StateError.
   */
  destroyJob(job: Job): void {
    this.#alive();
    if (!this.#jobs.delete(job)) throw new StateError('destroyJob: the Job is not a live Job of this Context');
    job.release();
  }

  /** A new stream for `KernelMap.setStream`, holding at most `limit` operations. */
  createStream(limit = DefaultStreamLimit): Stream {
    this.#alive();
    const stream = new Stream(this, limit);
    this.#streams.add(stream);
    return stream;
  }

  /** Destroys a stream: executes still waiting for room on it resolve `Result.Failure`. */
  destroyStream(stream: Stream): void {
    this.#alive();
    if (stream.owner !== this) throw new StateError('destroyStream: the stream belongs to another Context');
    this.#streams.delete(stream);
    stream.destroy();
  }

  /**
   * Creates a task queue: buffers, and tasks whose dependencies pxl finds from the regions their
   * range mappers touch (see docs/task-graph.md). Without `options.job` the queue makes a Job of
   * every free Sub and destroys it with the queue.
   * @throws OptionError for an invalid option; NoSubAvailableError when no Sub is free for the
   *   queue's Job; UnsupportedError on a backend other than cpu; StateError once destroyed.
   * @example const q = ctx.createQueue({ chunks: 4 });
   */
  createQueue(options?: QueueOptions): Queue {
    this.#alive();
    return new Queue(this, options);
  }

  /**
   * Starts recording an execution trace: every execute's lifecycle transitions (one track per
   * stream) and every batch's start and end on each MU core. Off by default and free when off.
   * @throws StateError when a trace is already being recorded.
   */
  startTrace(): void {
    this.#alive();
    if (this.#tracer !== undefined) throw new StateError('startTrace: a trace is already being recorded; stopTrace() it first');
    this.#tracer = new Tracer(this.#backend);
  }

  /** Whether a trace is being recorded. */
  get tracing(): boolean {
    return this.#tracer !== undefined;
  }

  /**
   * Stops recording and returns the trace in the Chrome Trace Event format: save it as JSON
   * (`writeTrace`) and open it in Perfetto (ui.perfetto.dev) or chrome://tracing.
   * @throws StateError when no trace is being recorded.
   */
  stopTrace(): ChromeTrace {
    this.#alive();
    const tracer = this.#tracer;
    if (tracer === undefined) throw new StateError('stopTrace: no trace is being recorded; call startTrace() first');
    this.#tracer = undefined;
    return tracer.finish();
  }

  /** Stops every MU core and releases device memory. The Context cannot be used afterwards. */
  async destroy(): Promise<void> {
    if (this.#destroyed) return;
    const trace = this.#tracer?.finish();
    this.#tracer = undefined;
    this.#destroyed = true;
    for (const job of this.#jobs) job.release();
    for (const stream of this.#streams) stream.destroy();
    this.#jobs.clear();
    this.#streams.clear();
    await this.#backend.destroy();
    if (trace !== undefined && this.traceFile !== undefined) await writeTrace(this.traceFile, trace);
  }

  #takeSubs(count: number): number[] {
    if (count === 0 || count > this.#freeSubs.length) {
      throw new NoSubAvailableError(`cannot take ${count} Sub${count === 1 ? '' : 's'}: ${this.#freeSubs.length} of ${this.topology.subs} are free; destroy a Job or free Subs with job.subFree() first`);
    }
    this.#freeSubs.sort((a, b) => a - b);
    return this.#freeSubs.splice(0, count);
  }

  #own(ptr: DevicePtr, op: string): void {
    if (!(ptr instanceof DevicePtr)) throw new ArgumentError(`${op} needs a DevicePtr from memAlloc`);
    if (ptr.owner !== this) throw new ArgumentError(`${op}: the device pointer belongs to another Context`);
    if (ptr.freed) throw new ArgumentError(`${op}: the device pointer was freed with memFree`);
  }

  #fits(ptr: DevicePtr, bytes: number, op: string): void {
    if (bytes > ptr.byteLength) throw new ArgumentError(`${op}: ${bytes} bytes do not fit in the ${ptr.byteLength} bytes from the pointer to the end of its allocation`);
  }

  #alive(): void {
    if (this.#destroyed) throw new StateError('this Context was destroyed; create a new one with createContext()');
  }
}

function asBytes(x: ArrayBufferView | ArrayBufferLike): Uint8Array {
  if (ArrayBuffer.isView(x)) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  if (x instanceof ArrayBuffer || x instanceof SharedArrayBuffer) return new Uint8Array(x);
  throw new ArgumentError('expected a TypedArray, DataView, ArrayBuffer or SharedArrayBuffer for host memory');
}

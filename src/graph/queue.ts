import { boxArea, boxOf, boxOfRange, formatBox, type Box } from '../core/box.js';
import { checkCoords, type CoordsInput, type Dims, type DimsOf } from '../core/dims.js';
import { DTYPES, dtypeSize, type DType, type TypedArrayOf } from '../core/dtype.js';
import { ArgumentError, invariant, KernelNotFoundError, OptionError, StateError, UnsupportedError } from '../core/errors.js';
import { rangeSize, type Range } from '../core/range.js';
import { describe } from '../core/validate.js';
import { contains, regionOf } from '../core/region.js';
import type { Subrange } from '../core/subrange.js';
import { toLaunchArgs, type KernelArg } from '../pxl/arguments.js';
import { Context } from '../pxl/context.js';
import type { Job } from '../pxl/job.js';
import type { KernelModule } from '../pxl/kernelModule.js';
import { NDArray } from '../pxl/ndarray.js';
import { accessOf } from './accessMode.js';
import { Accessor } from './accessor.js';
import { copyInitialData, dtypeOfSpec, GraphBuffer, type BufferId, type DTypeOfSpec, type ElementSpec } from './buffer.js';
import { CommandGroup, type CommandGroupSpec } from './commandGroup.js';
import { Executor, type TaskRun } from './executor.js';
import { Launcher, type DebugAccessor } from './launcher.js';
import { launchChunks } from './launchShape.js';
import { combine, Reduction, reductionIdentity } from './reduction.js';
import { split } from './split.js';
import { hostTaskRun } from './hostTaskRun.js';
import { checkBufferOptions, resolveQueueOptions, type BufferOptions, type QueueOptions } from './queueOptions.js';
import type { TaskRecord } from './task.js';
import { TaskGraph } from './taskGraph.js';

export type { BufferOptions, QueueOptions } from './queueOptions.js';

/*
 * `ctx.createQueue()`. The graph layer sits above pxl, so pxl's Context cannot import Queue (not even
 * its type). Instead this module, which graph/ owns, adds the method to Context: the `declare module`
 * block merges it into Context's type wherever this module is part of the program, and the
 * definition below puts it on Context.prototype when this module loads. src/index.ts exports Queue
 * from here, so everyone who imports the package has both; a module that imports pxl/context.js
 * directly and wants `createQueue` imports this module too (a type-only import gives the type
 * without the method).
 */
declare module '../pxl/context.js' {
  interface Context {
    /**
     * Creates a task queue: buffers, and tasks whose dependencies pxl finds from the regions their
     * range mappers touch (see docs/task-graph.md). Without `options.job` the queue makes a Job of
     * every free Sub and destroys it with the queue.
     * @throws OptionError for an invalid option; NoSubAvailableError when no Sub is free for the
     *   queue's Job; UnsupportedError on a backend other than cpu; StateError once destroyed.
     * @example const q = ctx.createQueue({ chunks: 4 });
     */
    createQueue(options?: QueueOptions): Queue;
  }
}

/**
 * A task queue: buffers, and tasks that read and write them through range-mapped accessors. pxl
 * finds each task's dependencies from the regions it touches, splits each kernel into one chunk per
 * core, and runs independent tasks at the same time on the cores of the queue's Job. Made by
 * `ctx.createQueue()`; every method runs on the main thread.
 *
 * @example
 * ```ts
 * const q = ctx.createQueue();
 * q.load(await ctx.createModule(new URL('./kernels.ts', import.meta.url)));
 * const a = q.buffer(Float32Array, [1024, 1024], { init: data });
 * const b = q.buffer(Float32Array, [1024, 1024]);
 * q.submit((cg) => {
 *   const src = cg.read(a, access.neighborhood([1, 1]));
 *   const dst = cg.write(b, access.oneToOne(), { noInit: true });
 *   cg.parallelFor([1024, 1024], 'stencil', src, dst);
 * });
 * const result = await q.fence(b);   // a Float32Array copy of b once every writer is done
 * ```
 */
export class Queue {
  readonly #ctx: Context;
  readonly #job: Job;
  readonly #ownsJob: boolean;
  readonly #chunks: number;
  readonly #graph: TaskGraph;
  readonly #executor: Executor;
  readonly #launcher: Launcher;
  readonly #onTask: ((task: TaskRecord) => void) | undefined;
  readonly #debugBounds: boolean;
  readonly #modules: KernelModule[] = [];
  readonly #buffers: GraphBuffer[] = [];
  #destroyed = false;
  /** Unregisters the queue's teardown from its Context. */
  readonly #unwatch: () => void;

  /**
   * @internal Use `ctx.createQueue()`.
   * @throws {OptionError} for an invalid option; UnsupportedError on a backend other than cpu.
   */
  constructor(ctx: Context, queueOptions?: QueueOptions) {
    if (ctx.getAttribute('backend') !== 'cpu') {
      throw new UnsupportedError('queues run chunk kernels on CPU cores for now; create the Context with the cpu backend');
    }
    const options = resolveQueueOptions(queueOptions);
    if (options.job !== undefined && options.job.owner !== ctx) throw new OptionError("job belongs to another Context; create it with this Context's createJob()");
    this.#graph = new TaskGraph({
      ...(options.uninitializedReads === undefined ? {} : { uninitializedReads: options.uninitializedReads }),
      ...(options.onWarning === undefined ? {} : { onWarning: options.onWarning }),
      ...(options.horizonStep === undefined ? {} : { horizonStep: options.horizonStep }),
      ...(options.horizonMaxParallelism === undefined ? {} : { horizonMaxParallelism: options.horizonMaxParallelism }),
    });
    this.#ctx = ctx;
    this.#ownsJob = options.job === undefined;
    this.#job = options.job ?? ctx.createJob();
    this.#chunks = options.chunks ?? this.#job.coreCount;
    this.#executor = new Executor(options.maxTasksInFlight);
    this.#launcher = new Launcher(ctx, this.#job);
    this.#onTask = options.onTask;
    this.#debugBounds = options.debugBounds;
    // Tasks and fences still outstanding when the Context goes settle with its StateError.
    this.#unwatch = ctx.onDestroy((error) => this.#executor.abort(error));
  }

  /** The Job whose cores run the kernels. */
  get job(): Job {
    return this.#job;
  }

  /** Chunks each kernel task is split into. */
  get chunkCount(): number {
    return this.#chunks;
  }

  /** Tasks submitted and not yet finished. */
  get pendingTasks(): number {
    return this.#executor.pending;
  }

  /**
   * Makes a kernel module's kernels available to `parallelFor` (loads it into the queue's Job).
   * @throws OptionError when the module comes from another Context or a kernel name is taken.
   */
  load(module: KernelModule): void {
    this.#alive();
    this.#job.load(module);
    if (!this.#modules.includes(module)) this.#modules.push(module);
  }

  /**
   * Makes a buffer of `shape` (0 to 3 extents, at least one element; `[]` is a 0-dimensional buffer of
   * one element, a scalar, which every range mapper accesses whole) holding elements of `element`
   * (a TypedArray class such as `Float32Array`, or a dtype name), in the Context's device memory.
   * With `init`, its contents are copied into the buffer by an init task that every reader depends
   * on; without, the buffer starts unwritten (zeros), and reading it before a write warns.
   * @throws ArgumentError for an unknown element type or init data of the wrong length or type;
   *   GeometryError for a bad shape; OutOfMemoryError when device memory runs out.
   * @example const grid = q.buffer(Float32Array, [512, 512], { name: 'grid' });
   */
  buffer<E extends ElementSpec, const S extends CoordsInput>(element: E, shape: S, bufferOptions?: BufferOptions): GraphBuffer<DTypeOfSpec<E>, DimsOf<S>> {
    this.#alive();
    const options = checkBufferOptions(bufferOptions);
    const dtype = dtypeOfSpec(element) as DTypeOfSpec<E>;
    const r = checkCoords('buffer shape', shape) as Range;
    const size = rangeSize(r);
    if (size === 0) throw new ArgumentError(`a buffer needs at least one element, got shape [${r.join(', ')}]`);
    const data = options.init === undefined ? undefined : copyInitialData(dtype, size, options.init);
    const ptr = this.#ctx.memAlloc(size * dtypeSize(dtype));
    // An NDArray has at least one dimension: a 0-dimensional buffer's one element is kernels' shape [1].
    const array = new NDArray(ptr, dtype, r.length === 0 ? [1] : [...r]);
    const buffer = new GraphBuffer(this, this.#buffers.length as BufferId, options.name, r as never, array) as GraphBuffer<DTypeOfSpec<E>, DimsOf<S>>;
    this.#buffers.push(buffer as unknown as GraphBuffer);
    if (data !== undefined) {
      const everything = regionOf(boxOfRange(buffer.range));
      const task = this.#graph.add({ kind: 'init', name: 'init', chunks: [], accesses: [{ buffer, access: accessOf('write', { noInit: true }), region: everything, source: 'init' }] });
      this.#start(task, () => this.#ctx.copyToDevice(ptr, data));
    }
    return buffer;
  }

  /**
   * Submits one task: `group` declares the buffers it accesses and calls `parallelFor` (a kernel
   * task) or `hostTask` (a function run on the main thread) once. The task runs once every task it
   * depends on has finished. Returns the task as the graph built it.
   * @throws what `group` throws; StateError when `group` declares no kernel or host task, or is async;
   *   KernelNotFoundError for a kernel no loaded module exports; ArgumentError for a task kernel or
   *   arguments a kernel cannot take; RangeMapperError naming task and buffer when a mapper does not
   *   fit; TaskGraphError for overlapping producer chunks or (policy 'throw') unwritten reads.
   */
  submit(group: (cg: CommandGroup) => void): TaskRecord {
    this.#alive();
    if (typeof group !== 'function') {
      throw new ArgumentError(`submit: group must be a function (cg) => { ... } that declares the task's accesses and calls parallelFor or hostTask, got ${describe(group)}`);
    }
    const cg = new CommandGroup(this);
    const returned = (group as (cg: CommandGroup) => unknown)(cg);
    if (returned instanceof Promise) {
      returned.catch(() => undefined);
      try {
        cg.close();
      } catch {
        // Closing is what matters: later calls on the command group fail.
      }
      throw new StateError('the function given to submit must declare its accesses and call parallelFor or hostTask synchronously; it returned a promise (make the hostTask function async instead)');
    }
    const spec = cg.close();
    if (spec.kind === 'host') return this.#submitHost(cg, spec);
    this.#checkKernel(spec.kernel);
    const chunks = launchChunks(spec.launch, this.#chunks);
    // One partial result per chunk for each reduction, freed once the task has settled.
    const partials = new Map<Reduction, NDArray>();
    const free = (): void => {
      for (const p of partials.values()) this.#ctx.memFree(p.ptr);
    };
    let task: TaskRecord;
    let kernelArgs: KernelArg[];
    try {
      for (const r of spec.reductions) {
        const n = Math.max(1, chunks.length);
        partials.set(r, new NDArray(this.#ctx.memAlloc(n * dtypeSize(r.buffer.dtype)), r.buffer.dtype, [n]));
      }
      kernelArgs = spec.args.map((a): KernelArg => (a instanceof Accessor ? a.buffer.array : a instanceof Reduction ? partials.get(a)! : a));
      toLaunchArgs(kernelArgs, this.#ctx, 'batch', this.#chunks);
      task = this.#graph.add({
        kind: 'kernel',
        name: spec.kernel,
        range: spec.range,
        launch: spec.launch,
        chunks,
        accesses: [
          ...spec.accessors.map((a) => ({ buffer: a.buffer as GraphBuffer, access: a.access, mapper: a.mapper })),
          ...spec.reductions.map((r) => ({
            buffer: r.buffer as GraphBuffer,
            // Without initializeToIdentity the old value is folded in: the reduction consumes it.
            access: r.initializeToIdentity ? accessOf('write', { noInit: true }) : accessOf('read_write'),
            region: regionOf(boxOfRange(r.buffer.range)),
            source: r.name,
          })),
        ],
      });
    } catch (err) {
      free();
      throw err;
    }
    const debug = this.#debugBounds ? debugAccessors(task, spec.args, spec.accessors) : undefined;
    const run = async (): Promise<void> => {
      for (const [r, p] of partials) scalars(this.#ctx, p).fill(reductionIdentity(r.op, r.buffer.dtype));
      await this.#launcher.run(task, kernelArgs, debug);
      for (const [r, p] of partials) {
        const target = scalars(this.#ctx, r.buffer.array);
        const start = r.initializeToIdentity ? reductionIdentity(r.op, r.buffer.dtype) : target.at(0)!;
        target.fill(combine(r.op, start, scalars(this.#ctx, p).subarray(0, Math.max(1, task.chunks.length))));
      }
    };
    this.#start(task, run, partials.size === 0 ? undefined : free);
    return task;
  }

  /** Adds a host task: its accesses are resolved over one chunk of its range, and its function runs on the main thread. */
  #submitHost(cg: CommandGroup, spec: Extract<CommandGroupSpec, { kind: 'host' }>): TaskRecord {
    const task = this.#graph.add({
      kind: 'host',
      name: spec.name,
      range: spec.range,
      chunks: split(spec.range, 1),
      accesses: spec.accessors.map((a) => ({ buffer: a.buffer as GraphBuffer, access: a.access, mapper: a.mapper })),
    });
    this.#start(task, hostTaskRun(this.#ctx, cg, spec, task));
    return task;
  }

  /**
   * A host copy of `buffer` (or of its part `part`, row-major within the part) taken once every task
   * submitted before that writes it has finished. Tasks submitted later that overwrite it wait for
   * the copy.
   * @throws (rejects) ArgumentError for a buffer of another queue or a part outside the buffer;
   *   TaskGraphError when a task it waits for failed.
   */
  async fence<T extends DType, D extends Dims>(buffer: GraphBuffer<T, D>, part?: Subrange<D> | Box<D>): Promise<TypedArrayOf<T>> {
    this.#alive();
    if (!(buffer instanceof GraphBuffer)) throw new ArgumentError(`fence: buffer must be a buffer made by this queue's buffer(), got ${describe(buffer)}`);
    if (buffer.owner !== this) throw new ArgumentError(`fence: buffer ${buffer.label} belongs to another queue`);
    const kind = (part as { kind?: unknown } | null | undefined)?.kind;
    if (part !== undefined && kind !== 'subrange' && kind !== 'box') {
      throw new ArgumentError(`fence: part must be a subrange or box of buffer ${buffer.label} (subrange(offset, range) or box(min, max)), or left out for the whole buffer, got ${describe(part)}`);
    }
    const whole = boxOfRange(buffer.range);
    const box = part === undefined ? whole : boxOf(part);
    if (box.dims !== buffer.dims || !contains(whole, box)) {
      throw new ArgumentError(`fence: the part ${formatBox(box)} does not lie within buffer ${buffer.label} of extent (${buffer.range.join(',')})`);
    }
    const task = this.#graph.add({ kind: 'fence', name: 'fence', chunks: [], accesses: [{ buffer: buffer as unknown as GraphBuffer, access: accessOf('read'), region: regionOf(box), source: 'fence' }] });
    return new Promise<TypedArrayOf<T>>((resolve, reject) => {
      let snapshot: TypedArrayOf<T> | undefined;
      this.#start(
        task,
        async () => {
          snapshot = await this.#read(buffer, box);
        },
        (error) => (error === undefined ? resolve(snapshot!) : reject(error)),
      );
    });
  }

  /**
   * Resolves once every task submitted so far has finished.
   * @throws (rejects) the first task failure since the last `wait()` (a TaskGraphError naming the
   *   task, with the kernel's error as cause).
   */
  async wait(): Promise<void> {
    this.#ctx.checkAlive();
    await this.#executor.wait();
  }

  /**
   * Waits for the tasks in flight, then frees the queue's buffers, its chunk tables and streams, and
   * its Job if the queue made it. Failures are left to `wait()`; afterwards the queue cannot be used.
   */
  async destroy(): Promise<void> {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#unwatch();
    await this.#executor.wait().catch(() => undefined);
    this.#launcher.destroy();
    for (const b of this.#buffers.splice(0)) this.#ctx.memFree(b.array.ptr);
    if (this.#ownsJob) this.#ctx.destroyJob(this.#job);
  }

  #start(task: TaskRecord, run: TaskRun, onSettled?: Parameters<Executor['add']>[2]): void {
    // Only host shared memory exists so far: every task runs where the newest copies already are.
    invariant(task.copies.length === 0, `task T${task.id} needs copies between memory spaces, which this queue cannot run yet`);
    try {
      this.#onTask?.(task);
    } catch (err) {
      process.emitWarning(`the queue's onTask callback threw: ${String(err)}`);
    }
    this.#executor.add(task, run, onSettled);
    if (task.kind !== 'horizon') {
      const horizon = this.#graph.horizonIfDue();
      if (horizon !== undefined) this.#start(horizon, async () => undefined);
    }
  }

  /** Checks that `name` is a kernel of the Job's modules and, where the queue knows its module, a chunk kernel. */
  #checkKernel(name: string): void {
    const names = this.#job.kernelNames;
    if (!names.includes(name)) throw new KernelNotFoundError(name, names);
    for (const m of this.#modules) {
      const k = m.kernel(name);
      if (k !== undefined && k.info.form !== 'batch') {
        throw new ArgumentError(`kernel '${name}' is a task kernel; parallelFor runs chunk kernels: define it with defineChunkKernel from pxl/mu`);
      }
    }
  }

  /** Copies the box of the buffer's device memory into a new host array, row-major within the box. */
  async #read<T extends DType>(buffer: GraphBuffer<T>, box: Box): Promise<TypedArrayOf<T>> {
    const Ctor = DTYPES[buffer.dtype] as unknown as new (n: number) => TypedArrayOf<T>;
    const out = new Ctor(boxArea(box));
    if (out.length === 0) return out;
    const elem = dtypeSize(buffer.dtype);
    const bytes = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
    if (box.dims === 0) {
      await this.#ctx.copyFromDevice(bytes, buffer.array.ptr);
      return out;
    }
    const extent = buffer.range as readonly number[];
    const dims = extent.length;
    const strides = extent.map((_, d) => extent.slice(d + 1).reduce((p, e) => p * e, 1));
    // Dimensions from `inner` on are whole in the box, so each step of the outer ones is one contiguous run.
    let inner = dims - 1;
    while (inner > 0 && box.min[inner] === 0 && box.max[inner] === extent[inner]) inner--;
    const run = (box.max[inner]! - box.min[inner]!) * strides[inner]!;
    const outer = box.min.slice(0, inner).map((lo, d) => ({ lo, hi: box.max[d]! }));
    let k = 0;
    const visit = async (d: number, base: number): Promise<void> => {
      if (d === outer.length) {
        const at = base + box.min[inner]! * strides[inner]!;
        await this.#ctx.copyFromDevice(bytes.subarray(k * run * elem, (k + 1) * run * elem), buffer.array.ptr.add(at * elem));
        k++;
        return;
      }
      for (let i = outer[d]!.lo; i < outer[d]!.hi; i++) await visit(d + 1, base + i * strides[d]!);
    };
    await visit(0, 0);
    return out;
  }

  #alive(): void {
    this.#ctx.checkAlive();
    if (this.#destroyed) throw new StateError('this queue was destroyed; create a new one with ctx.createQueue()');
  }
}

/** The elements of an NDArray in device memory, as numbers or bigints (the queue's memory is host shared memory). */
function scalars(ctx: Context, a: NDArray): { fill(v: number | bigint): void; at(i: number): number | bigint | undefined; subarray(lo: number, hi: number): ArrayLike<number | bigint> } {
  return ctx.hostView(a.ptr, a.dtype, a.size) as never;
}

/** What debug bounds checking needs of each accessor argument of a kernel task. */
function debugAccessors(task: TaskRecord, args: readonly unknown[], accessors: readonly Accessor[]): DebugAccessor[] {
  const out: DebugAccessor[] = [];
  args.forEach((a, arg) => {
    if (!(a instanceof Accessor)) return;
    const access = task.accesses[accessors.indexOf(a)]!;
    const buffer = a.buffer as GraphBuffer;
    const mode = access.access.mode === 'read' ? 1 : access.access.mode === 'write' ? 2 : 3;
    out.push({ arg, mode, buffer: buffer.id, label: buffer.label, extent: buffer.range, chunkRegions: access.chunkRegions });
  });
  return out;
}

// Non-enumerable, as a method declared in the class body would be. The Queue constructor's first
// call, `ctx.getAttribute`, throws the StateError of a destroyed Context before anything else.
Object.defineProperty(Context.prototype, 'createQueue', {
  value: function createQueue(this: Context, options?: QueueOptions): Queue {
    return new Queue(this, options);
  },
  writable: true,
  configurable: true,
});

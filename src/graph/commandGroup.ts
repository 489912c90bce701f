import type { CoordsInput, Dims } from '../core/dims.js';
import type { DType, TypedArrayOf } from '../core/dtype.js';
import { ArgumentError, StateError } from '../core/errors.js';
import { range as makeRange, type Range } from '../core/range.js';
import { checkOptionsObject, describe } from '../core/validate.js';
import type { Region } from '../core/region.js';
import type { KernelArg } from '../pxl/arguments.js';
import { accessOf, type AccessMode, type AccessOptions } from './accessMode.js';
import { Accessor } from './accessor.js';
import { GraphBuffer } from './buffer.js';
import { checkLaunchShape, type CheckedKernelLaunchShape, type KernelLaunchDims, type KernelLaunchShape } from './launchShape.js';
import type { AnyRangeMapper, ServedKernelDims } from './rangeMapper.js';
import { checkReduction, Reduction, type ReductionOp, type ReductionOptions } from './reduction.js';

/** Largest extent of a kernel range along one dimension: chunk bounds reach kernels as int32. */
const MAX_EXTENT = 0x7fffffff;

/**
 * What `parallelFor` passes to a kernel: accessors (the kernel sees their buffers), reductions (the
 * kernel sees their partials) and plain kernel arguments.
 */
export type GraphKernelArg = Accessor | Reduction | KernelArg;

/**
 * A mapper `M` for a `D`-dimensional buffer, checked at compile time: a mapper that serves no kernel
 * over such a buffer (`oneToOne()` on a buffer its kernel's dimensionality cannot match is still
 * fine here; `neighborhood([1, 1])` on a 3-D buffer is not) becomes a type error.
 */
export type MapperFor<M, D extends Dims> = [ServedKernelDims<M, D>] extends [never] ? { readonly 'range mapper serves no kernel over a buffer of this dimensionality': D } : M;

/**
 * `parallelFor`'s arguments checked against the kernel's dimensionality `K`: an accessor whose range
 * mapper does not serve a `K`-dimensional kernel becomes a type error. A range of unknown
 * dimensionality (a plain `number[]`) is checked at run time only.
 */
export type KernelArgsFor<A extends readonly unknown[], K extends Dims> = {
  readonly [I in keyof A]: A[I] extends Accessor<DType, Dims, AccessMode, infer KA>
    ? [Dims] extends [K]
      ? A[I]
      : [K] extends [KA]
        ? A[I]
        : { readonly 'accessor whose range mapper does not serve a kernel of this dimensionality': K }
    : A[I];
};

/**
 * The host's view of one buffer in a host task: `data` is the buffer's whole memory (row-major,
 * dimension 0 slowest, indexed with global coordinates like a kernel's `NDView`), live, not a copy.
 * On the CPU backend the buffer's device memory is the host's shared memory, so what the task writes
 * into `data` is the buffer's new contents at once; nothing is copied back. Touch only `region`, the
 * points the accessor's range mapper declares for the host task's range, and only while the host
 * task's function runs (until the promise it returns settles).
 */
export interface HostView<T extends DType = DType, D extends Dims = Dims, M extends AccessMode = AccessMode> {
  readonly data: TypedArrayOf<T>;
  /** The buffer's extent. */
  readonly shape: Range<D>;
  /** The declared points: the range mapper applied to the host task's range, clamped to the buffer. */
  readonly region: Region<D>;
  readonly mode: M;
}

/** What a host task's function receives: the host views of the accessors its command group declared. */
export interface HostTaskHandle {
  /** The host task's range (the one chunk its range mappers were applied to). */
  readonly range: Range;
  /**
   * The host view of `accessor`'s buffer.
   * @throws {ArgumentError} for an accessor of another command group; {@link StateError} once the
   *   host task's function has returned (or its promise settled).
   */
  view<T extends DType, D extends Dims, M extends AccessMode>(accessor: Accessor<T, D, M>): HostView<T, D, M>;
}

/** The function of a host task; it may be async, and the task ends when its promise settles. */
export type HostTaskFn = (host: HostTaskHandle) => void | Promise<void>;

/** What a command group asked for, once its function returned. @internal */
export type CommandGroupSpec =
  | {
      readonly kind: 'kernel';
      readonly kernel: string;
      readonly range: Range;
      readonly launch: CheckedKernelLaunchShape;
      readonly args: readonly GraphKernelArg[];
      readonly accessors: readonly Accessor[];
      readonly reductions: readonly Reduction[];
    }
  | { readonly kind: 'host'; readonly name: string; readonly range: Range; readonly fn: HostTaskFn; readonly accessors: readonly Accessor[]; readonly reductions: readonly Reduction[] };

/** The range of a host task without one: a single point, so every mapper that fits a 1-D kernel applies. */
const HOST_RANGE: readonly number[] = [1];

/** Options of {@link CommandGroup.hostTask}. */
export interface HostTaskOptions {
  /** The task's name in diagnostics: `T3 'checksum'`. Default `'host'`. */
  name?: string;
}

const HOST_TASK_OPTIONS: readonly (keyof HostTaskOptions)[] = ['name'];

/**
 * The handler a `Queue.submit` function receives: declare the buffers the task accesses (each with a
 * range mapper and a mode), then name the kernel and its range with `parallelFor`. Valid only during
 * the submit call.
 *
 * @example
 * ```ts
 * q.submit((cg) => {
 *   const src = cg.read(a, access.neighborhood([1, 1]));
 *   const dst = cg.write(b, access.oneToOne(), { noInit: true });
 *   cg.parallelFor([1024, 1024], 'stencil', src, dst, 0.1);
 * });
 * ```
 *
 * Instead of `parallelFor`, a command group may call `hostTask`: a function that runs on the main
 * thread with host views of the declared buffers.
 */
export class CommandGroup {
  readonly #owner: object;
  readonly #accessors: Accessor[] = [];
  readonly #reductions: Reduction[] = [];
  #launch:
    | { kind: 'kernel'; kernel: string; range: Range; launch: CheckedKernelLaunchShape; args: readonly GraphKernelArg[] }
    | { kind: 'host'; name: string; range: Range; fn: HostTaskFn }
    | undefined;
  #closed = false;

  /** @internal */
  constructor(owner: object) {
    this.#owner = owner;
  }

  /**
   * Declares that the kernel reads, from each chunk, the points `mapper` gives for it. A mapper that
   * serves no kernel over a buffer of this dimensionality is a compile-time error; at run time the
   * task is refused with a RangeMapperError.
   */
  read<T extends DType, D extends Dims, M extends AnyRangeMapper>(buffer: GraphBuffer<T, D>, mapper: MapperFor<M, D>): Accessor<T, D, 'read', ServedKernelDims<M, D>> {
    return this.#declare(buffer, mapper as AnyRangeMapper, accessOf('read') as Accessor<T, D, 'read'>['access']) as never;
  }

  /**
   * Declares that the kernel writes the points `mapper` gives for each chunk. With `noInit` it
   * promises to overwrite all of them, so their old contents need not be kept or copied; without
   * it, points it leaves alone keep their values.
   * @throws {OptionError} for a malformed option.
   */
  write<T extends DType, D extends Dims, M extends AnyRangeMapper>(
    buffer: GraphBuffer<T, D>,
    mapper: MapperFor<M, D>,
    options?: AccessOptions,
  ): Accessor<T, D, 'write', ServedKernelDims<M, D>> {
    return this.#declare(buffer, mapper as AnyRangeMapper, accessOf('write', options) as Accessor<T, D, 'write'>['access']) as never;
  }

  /** Declares that the kernel reads and writes the points `mapper` gives for each chunk. */
  readWrite<T extends DType, D extends Dims, M extends AnyRangeMapper>(
    buffer: GraphBuffer<T, D>,
    mapper: MapperFor<M, D>,
    options?: AccessOptions,
  ): Accessor<T, D, 'read_write', ServedKernelDims<M, D>> {
    return this.#declare(buffer, mapper as AnyRangeMapper, accessOf('read_write', options) as Accessor<T, D, 'read_write'>['access']) as never;
  }

  /**
   * Declares a reduction into `buffer`, which must hold one element (a 0-dimensional buffer, or one
   * of extent 1): pass the returned {@link Reduction} to `parallelFor`, and the kernel receives an
   * NDView of partial results, one per chunk, each starting at the identity of `op`; chunk `c.index`
   * folds its items into element `c.index`. Once the kernel has run, the partials and (unless
   * `initializeToIdentity`) the buffer's old value are combined with `op` into the buffer. For the
   * task graph the reduction reads and writes the buffer's element (only writes it, with
   * `initializeToIdentity`). A buffer with a reduction cannot also have an accessor in the same
   * command group, and host tasks take no reductions.
   * @throws {ArgumentError} for a buffer of another queue or of more than one element, or one the
   *   command group already declared; OptionError for an unknown `op` or option.
   * @example
   * ```ts
   * q.submit((cg) => cg.parallelFor([n], 'sum_into', cg.read(xs, access.oneToOne()), cg.reduce(total, 'sum')));
   * ```
   */
  reduce<T extends DType, D extends Dims>(buffer: GraphBuffer<T, D>, op: ReductionOp, options?: ReductionOptions): Reduction<T, D> {
    this.#open('reduce');
    this.#checkBuffer(buffer, 'a reduction');
    const { op: o, initializeToIdentity } = checkReduction(op, options);
    if (buffer.size !== 1) {
      throw new ArgumentError(`a reduction needs a buffer of one element (a 0-dimensional buffer, q.buffer(type, [])), but buffer ${buffer.label} has extent (${buffer.range.join(',')})`);
    }
    this.#checkOnce(buffer, 'reduce');
    const reduction = new Reduction<T, D>(this, buffer, o, initializeToIdentity);
    this.#reductions.push(reduction as unknown as Reduction);
    return reduction;
  }

  /**
   * Runs kernel `kernel` (a chunk kernel of a module loaded into the queue) over the index space
   * `range`, split into chunks. `range` is the global size, or a {@link KernelLaunchShape} that adds a
   * kernel offset (chunk offsets then include it), a local size (no chunk cuts a work-group apart)
   * and a split constraint (every chunk's extent is a multiple of it); see `checkLaunchShape` for
   * the rules and errors. The kernel receives its chunk, then `args` in order: each accessor
   * as an NDView of its whole buffer, every other argument as `execute()` passes it (numbers,
   * bigints, booleans, plain objects; device pointers and NDArrays are passed through but their
   * accesses are not tracked). At most 8 arguments.
   * @throws {StateError} when called twice or after the submit call; {@link ArgumentError} for an
   *   accessor of another command group, too many arguments, or an extent (offset included) above
   *   2^31 - 1; GeometryError for a bad range or launch shape (a local size or split constraint that
   *   does not divide the global size, a split constraint of 0).
   */
  parallelFor<const R extends CoordsInput | KernelLaunchShape, const A extends readonly GraphKernelArg[]>(range: R, kernel: string, ...args: A & KernelArgsFor<A, KernelLaunchDims<R>>): void {
    this.#open('parallelFor');
    this.#once('parallelFor');
    if (typeof kernel !== 'string' || kernel === '') throw new ArgumentError(`parallelFor needs the kernel's name as a string, got ${describe(kernel)}`);
    const launch = checkLaunchShape(range as CoordsInput | KernelLaunchShape) as CheckedKernelLaunchShape;
    const r = launch.global;
    if (r.some((e, d) => e + launch.offset[d]! > MAX_EXTENT)) {
      const from = launch.offset.some((o) => o > 0) ? ` from offset (${launch.offset.join(',')})` : '';
      throw new ArgumentError(`parallelFor ranges reach at most ${MAX_EXTENT} along a dimension (chunk bounds travel as int32), got (${r.join(',')})${from}`);
    }
    if (args.length > 8) throw new ArgumentError(`parallelFor passes at most 8 arguments to a kernel (the chunk table is the ninth), got ${args.length}: group constants into one plain object`);
    args.forEach((a, i) => {
      if (a instanceof Accessor && a.group !== this) {
        throw new ArgumentError(`argument ${i} of parallelFor is an accessor declared in another command group; declare it with this command group's read, write or readWrite`, i);
      }
      if (a instanceof Reduction && a.group !== this) {
        throw new ArgumentError(`argument ${i} of parallelFor is a reduction declared in another command group; declare it with this command group's reduce`, i);
      }
    });
    this.#launch = { kind: 'kernel', kernel, range: r, launch, args: Object.freeze([...args]) };
  }

  /**
   * Makes the task a host task: once every task it depends on has finished, `fn` runs on the main
   * thread and receives a {@link HostTaskHandle}, whose `view(accessor)` gives the host view of each
   * buffer this command group declared (see {@link HostView}: live views of the buffer's shared
   * memory, so writes need no write-back). The accessors' range mappers are applied to one chunk
   * covering `range` (default `[1]`, for mappers such as `access.all()` or `access.fixed(...)`;
   * give the buffer's extent to use `access.oneToOne()`), and the task's dependencies follow from
   * those regions exactly as for a kernel. An async `fn` is awaited; when `fn` throws or its promise
   * rejects, the task fails like a failing kernel.
   * @throws {StateError} when the command group already runs a kernel or host task, or is closed;
   *   {@link ArgumentError} when `fn` is not a function or the name is not a non-empty string;
   *   OptionError for options that are not an object or an unknown option; GeometryError for a bad range.
   * @example
   * ```ts
   * q.submit((cg) => {
   *   const sums = cg.readWrite(totals, access.all());
   *   cg.hostTask((host) => { const t = host.view(sums).data; t[0] = t[0]! + t[1]!; });
   * });
   * ```
   */
  hostTask(fn: HostTaskFn, options?: HostTaskOptions): void;
  hostTask(range: CoordsInput, fn: HostTaskFn, options?: HostTaskOptions): void;
  hostTask(first: CoordsInput | HostTaskFn, second?: HostTaskFn | HostTaskOptions, third?: HostTaskOptions): void {
    this.#open('hostTask');
    this.#once('hostTask');
    const ranged = typeof first === 'object' && first !== null;
    const fn = ranged ? second : first;
    const options = (ranged ? third : second) as HostTaskOptions | undefined;
    if (typeof fn !== 'function') throw new ArgumentError(`hostTask needs a function to run on the host, got ${describe(fn)}`);
    const name = checkOptionsObject('hostTask options', options, HOST_TASK_OPTIONS).name ?? 'host';
    if (typeof name !== 'string' || name === '') throw new ArgumentError(`a host task's name must be a non-empty string, got ${describe(name)}`);
    const r = makeRange((ranged ? first : HOST_RANGE) as readonly number[]);
    this.#launch = { kind: 'host', name, range: r, fn: fn as HostTaskFn };
  }

  /** @internal Ends the command group and returns what it declared. */
  close(): CommandGroupSpec {
    this.#closed = true;
    if (this.#launch === undefined) throw new StateError('the command group did not call parallelFor or hostTask: a submit runs exactly one kernel or host task');
    if (this.#launch.kind === 'host' && this.#reductions.length > 0) {
      throw new StateError(`a host task takes no reductions (buffer ${this.#reductions[0]!.buffer.label}): reduce in a kernel, or read and write the buffer with readWrite`);
    }
    return { ...this.#launch, accessors: Object.freeze([...this.#accessors]), reductions: Object.freeze([...this.#reductions]) };
  }

  #once(call: string): void {
    if (this.#launch === undefined) return;
    const before = this.#launch.kind === 'kernel' ? 'parallelFor' : 'hostTask';
    if (call === 'parallelFor' && before === 'parallelFor') throw new StateError('a command group runs one kernel: parallelFor was already called in this submit');
    throw new StateError(`a command group runs one kernel or host task: ${before} was already called in this submit`);
  }

  #declare<T extends DType, D extends Dims, A extends Accessor<T, D>['access']>(buffer: GraphBuffer<T, D>, mapper: AnyRangeMapper, access: A): Accessor<T, D, A['mode']> {
    const call = access.mode === 'read' ? 'read' : access.mode === 'write' ? 'write' : 'readWrite';
    this.#open(call);
    this.#checkBuffer(buffer, 'an accessor');
    if (this.#reductions.some((r) => r.buffer === buffer)) this.#checkOnce(buffer, call);
    if (typeof mapper !== 'function') throw new ArgumentError(`an accessor of buffer ${buffer.label} needs a range mapper such as access.oneToOne(), got ${describe(mapper)}`);
    const accessor = new Accessor<T, D, A['mode']>(this, buffer, mapper, access as Accessor<T, D, A['mode']>['access']);
    this.#accessors.push(accessor as unknown as Accessor);
    return accessor;
  }

  #checkBuffer(buffer: GraphBuffer, what: string): void {
    if (!(buffer instanceof GraphBuffer)) throw new ArgumentError(`${what} needs a buffer made by Queue.buffer, got ${describe(buffer)}`);
    if (buffer.owner !== this.#owner) throw new ArgumentError(`buffer ${buffer.label} belongs to another queue`);
  }

  /** Refuses a second declaration of a buffer that has a reduction: chunks would see its element while it is being reduced. */
  #checkOnce(buffer: GraphBuffer, call: string): void {
    if (this.#reductions.some((r) => r.buffer === buffer) || this.#accessors.some((a) => a.buffer === buffer)) {
      throw new ArgumentError(`${call}: buffer ${buffer.label} already has ${this.#reductions.some((r) => r.buffer === buffer) ? 'a reduction' : 'an accessor'} in this command group; a reduced buffer takes no other access in the same task`);
    }
  }

  #open(call: string): void {
    if (this.#closed) throw new StateError(`${call}: the command group is closed; use it only inside the function given to submit`);
  }
}

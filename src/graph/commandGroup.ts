import type { CoordsInput, Dims } from '../core/dims.js';
import type { DType } from '../core/dtype.js';
import { ArgumentError, StateError } from '../core/errors.js';
import { range as makeRange, type Range } from '../core/range.js';
import { describe } from '../core/validate.js';
import type { KernelArg } from '../pxl/arguments.js';
import { accessOf, type AccessOptions } from './accessMode.js';
import { Accessor } from './accessor.js';
import { GraphBuffer } from './buffer.js';
import type { AnyRangeMapper } from './rangeMapper.js';

/** Largest extent of a kernel range along one dimension: chunk bounds reach kernels as int32. */
const MAX_EXTENT = 0x7fffffff;

/** What `parallelFor` passes to a kernel: accessors (the kernel sees their buffers) and plain kernel arguments. */
export type GraphKernelArg = Accessor | KernelArg;

/** What a command group asked for, once its function returned. @internal */
export interface CommandGroupSpec {
  readonly kernel: string;
  readonly range: Range;
  readonly args: readonly GraphKernelArg[];
  readonly accessors: readonly Accessor[];
}

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
 */
export class CommandGroup {
  readonly #owner: object;
  readonly #accessors: Accessor[] = [];
  #launch: { kernel: string; range: Range; args: readonly GraphKernelArg[] } | undefined;
  #closed = false;

  /** @internal */
  constructor(owner: object) {
    this.#owner = owner;
  }

  /** Declares that the kernel reads, from each chunk, the points `mapper` gives for it. */
  read<T extends DType, D extends Dims>(buffer: GraphBuffer<T, D>, mapper: AnyRangeMapper): Accessor<T, D, 'read'> {
    return this.#declare(buffer, mapper, accessOf('read') as Accessor<T, D, 'read'>['access']);
  }

  /**
   * Declares that the kernel writes the points `mapper` gives for each chunk. With `noInit` it
   * promises to overwrite all of them, so their old contents need not be kept or copied; without
   * it, points it leaves alone keep their values.
   * @throws {OptionError} for a malformed option.
   */
  write<T extends DType, D extends Dims>(buffer: GraphBuffer<T, D>, mapper: AnyRangeMapper, options?: AccessOptions): Accessor<T, D, 'write'> {
    return this.#declare(buffer, mapper, accessOf('write', options) as Accessor<T, D, 'write'>['access']);
  }

  /** Declares that the kernel reads and writes the points `mapper` gives for each chunk. */
  readWrite<T extends DType, D extends Dims>(buffer: GraphBuffer<T, D>, mapper: AnyRangeMapper, options?: AccessOptions): Accessor<T, D, 'read_write'> {
    return this.#declare(buffer, mapper, accessOf('read_write', options) as Accessor<T, D, 'read_write'>['access']);
  }

  /**
   * Runs kernel `kernel` (a chunk kernel of a module loaded into the queue) over the index space
   * `range`, split into chunks. The kernel receives its chunk, then `args` in order: each accessor
   * as an NDView of its whole buffer, every other argument as `execute()` passes it (numbers,
   * bigints, booleans, plain objects; device pointers and NDArrays are passed through but their
   * accesses are not tracked). At most 8 arguments.
   * @throws {StateError} when called twice or after the submit call; {@link ArgumentError} for an
   *   accessor of another command group, too many arguments, or an extent above 2^31 - 1;
 *   GeometryError for a bad range.
   */
  parallelFor(range: CoordsInput, kernel: string, ...args: GraphKernelArg[]): void {
    this.#open('parallelFor');
    if (this.#launch !== undefined) throw new StateError('a command group runs one kernel: parallelFor was already called in this submit');
    if (typeof kernel !== 'string' || kernel === '') throw new ArgumentError(`parallelFor needs the kernel's name as a string, got ${describe(kernel)}`);
    const r = makeRange(range as readonly number[]);
    if (r.some((e) => e > MAX_EXTENT)) throw new ArgumentError(`parallelFor ranges reach at most ${MAX_EXTENT} along a dimension (chunk bounds travel as int32), got (${r.join(',')})`);
    if (args.length > 8) throw new ArgumentError(`parallelFor passes at most 8 arguments to a kernel (the chunk table is the ninth), got ${args.length}: group constants into one plain object`);
    args.forEach((a, i) => {
      if (a instanceof Accessor && a.group !== this) {
        throw new ArgumentError(`argument ${i} of parallelFor is an accessor declared in another command group; declare it with this command group's read, write or readWrite`, i);
      }
    });
    this.#launch = { kernel, range: r, args: Object.freeze([...args]) };
  }

  /** @internal Ends the command group and returns what it declared. */
  close(): CommandGroupSpec {
    this.#closed = true;
    if (this.#launch === undefined) throw new StateError('the command group did not call parallelFor: a submit runs exactly one kernel');
    return { ...this.#launch, accessors: Object.freeze([...this.#accessors]) };
  }

  #declare<T extends DType, D extends Dims, A extends Accessor<T, D>['access']>(buffer: GraphBuffer<T, D>, mapper: AnyRangeMapper, access: A): Accessor<T, D, A['mode']> {
    this.#open(access.mode === 'read' ? 'read' : access.mode === 'write' ? 'write' : 'readWrite');
    if (!(buffer instanceof GraphBuffer)) throw new ArgumentError(`an accessor needs a buffer made by Queue.buffer, got ${describe(buffer)}`);
    if (buffer.owner !== this.#owner) throw new ArgumentError(`buffer ${buffer.label} belongs to another queue`);
    if (typeof mapper !== 'function') throw new ArgumentError(`an accessor of buffer ${buffer.label} needs a range mapper such as access.oneToOne(), got ${describe(mapper)}`);
    const accessor = new Accessor<T, D, A['mode']>(this, buffer, mapper, access as Accessor<T, D, A['mode']>['access']);
    this.#accessors.push(accessor as unknown as Accessor);
    return accessor;
  }

  #open(call: string): void {
    if (this.#closed) throw new StateError(`${call}: the command group is closed; use it only inside the function given to submit`);
  }
}

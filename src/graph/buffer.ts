import type { Dims } from '../core/dims.js';
import { DTYPE_NAMES, DTYPES, isDType, type DType, type TypedArrayOf } from '../core/dtype.js';
import { ArgumentError } from '../core/errors.js';
import { rangeSize, type Range } from '../core/range.js';
import { describe } from '../core/validate.js';
import type { NDArray } from '../pxl/ndarray.js';
import { CoherenceTable } from './coherence.js';

declare const bufferBrand: unique symbol;

/** Identifies a buffer of a queue; branded so it never type-checks as a task id. */
export type BufferId = number & { readonly [bufferBrand]: true };

/** A TypedArray class a buffer can hold: `Float32Array`, `Int32Array`, ... (see `DType`). */
export type ElementType = (typeof DTYPES)[DType];

/** The dtype of a TypedArray class: `'float32'` for `Float32ArrayConstructor`. */
export type DTypeOfClass<C extends ElementType> = { [K in DType]: (typeof DTYPES)[K] extends C ? (C extends (typeof DTYPES)[K] ? K : never) : never }[DType];

/** What `Queue.buffer` accepts as the element type: a TypedArray class or a dtype name. */
export type ElementSpec = ElementType | DType;

/** The dtype an {@link ElementSpec} denotes. */
export type DTypeOfSpec<S extends ElementSpec> = S extends DType ? S : S extends ElementType ? DTypeOfClass<S> : never;

/**
 * The dtype of a TypedArray class or dtype name.
 * @throws {ArgumentError} for anything else, listing what is accepted.
 */
export function dtypeOfSpec(spec: unknown): DType {
  if (isDType(spec)) return spec;
  const found = DTYPE_NAMES.find((d) => DTYPES[d] === spec);
  if (found === undefined) {
    throw new ArgumentError(`a buffer's element type must be a TypedArray class (Float32Array, Int32Array, ...) or one of ${DTYPE_NAMES.join(', ')}, got ${describe(spec)}`);
  }
  return found;
}

/**
 * A 0-3 dimensional array that tasks of one queue read and write through accessors; made by
 * `Queue.buffer`. Its contents live in memory spaces (device memory of the Context, which on the CPU
 * backend is the host's shared memory), and its coherence table says which space holds the newest
 * copy of which region. The host reads it with `Queue.fence`, never directly: a fence waits for
 * every task that writes what it reads.
 *
 * Element `[i, j]` of a `[rows, cols]` buffer is at `i * cols + j` (row-major, dimension 0 slowest).
 */
export class GraphBuffer<T extends DType = DType, D extends Dims = Dims> {
  /** `B0`, `B1`, ... in creation order within the queue. */
  readonly id: BufferId;
  /** The name given at creation, for diagnostics. */
  readonly name: string | undefined;
  readonly dtype: T;
  readonly range: Range<D>;
  /** @internal The buffer's memory in the Context's device memory. */
  readonly array: NDArray<T>;
  /** @internal Which memory space holds the newest copy of which region. */
  readonly coherence: CoherenceTable<D>;
  /** @internal The queue that made the buffer. */
  readonly owner: object;

  /** @internal */
  constructor(owner: object, id: BufferId, name: string | undefined, range: Range<D>, array: NDArray<T>) {
    this.owner = owner;
    this.id = id;
    this.name = name;
    this.dtype = array.dtype;
    this.range = range;
    this.array = array;
    this.coherence = new CoherenceTable<D>(range);
  }

  /** Number of elements. */
  get size(): number {
    return rangeSize(this.range);
  }

  /** Dimensionality, 0 to 3 (0: a scalar of one element). */
  get dims(): D {
    return this.range.length as D;
  }

  /** How diagnostics name the buffer: `B0`, or `B0 'grid'` when it has a name. */
  get label(): string {
    return formatBufferId(this.id) + (this.name === undefined ? '' : ` '${this.name}'`);
  }
}

/** Renders a buffer id as `B0`. */
export function formatBufferId(id: BufferId): string {
  return `B${id}`;
}

/**
 * Copies initial contents for a buffer of `size` elements of `dtype`, so the caller may change its
 * array afterwards.
 * @throws {ArgumentError} when the length differs from the buffer's size or the values do not fit
 * the element type (numbers for a bigint dtype, say).
 */
export function copyInitialData<T extends DType>(dtype: T, size: number, data: unknown): TypedArrayOf<T> {
  const Ctor = DTYPES[dtype] as unknown as new (n: number) => TypedArrayOf<T>;
  const length = (data as { length?: unknown } | null)?.length;
  if (typeof data !== 'object' || typeof length !== 'number') {
    throw new ArgumentError(`a buffer's init must be an array or TypedArray of its ${size} elements, got ${describe(data)}`);
  }
  if (length !== size) throw new ArgumentError(`a buffer's init has ${length} elements, but the buffer holds ${size}`);
  const copy = new Ctor(size);
  try {
    (copy as unknown as { set(a: ArrayLike<unknown>): void }).set(data as ArrayLike<unknown>);
  } catch (err) {
    throw new ArgumentError(`a buffer's init does not fit its ${dtype} elements: ${err instanceof Error ? err.message : String(err)}`);
  }
  return copy;
}

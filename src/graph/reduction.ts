/**
 * Reductions into a one-element buffer, as Celerity's `reduction(buffer, cgh, op)`: every chunk of a
 * kernel folds its items into a partial result of its own, and once the kernel has run pxl combines
 * the partials (and, unless `initializeToIdentity`, the buffer's old value) into the buffer. Chunks
 * never write the buffer itself, so they need no ordering among themselves.
 *
 * The kernel receives the reduction as an `NDView` of the partials, one element per chunk, each
 * holding the operation's identity when the kernel starts: chunk `c.index` folds into
 * `partials.data[c.index]` (e.g. `p.data[c.index] += x`) and touches no other element.
 */
import type { Dims } from '../core/dims.js';
import type { DType } from '../core/dtype.js';
import { checkBoolean, checkOneOf, checkOptionsObject } from '../core/validate.js';
import type { GraphBuffer } from './buffer.js';

/** How partial results combine: `(a, b) => a + b`, `a * b`, `min(a, b)`, `max(a, b)`. */
export type ReductionOp = 'sum' | 'product' | 'min' | 'max';

/** Options of {@link CommandGroup.reduce}. */
export interface ReductionOptions {
  /**
   * Start from the operation's identity instead of the buffer's value, as Celerity's
   * `property::reduction::initialize_to_identity`: the old value is then neither read nor kept, and
   * the task does not depend on its writer. Default false: the old value is folded in too.
   */
  initializeToIdentity?: boolean;
}

const REDUCTION_OPTIONS: readonly (keyof ReductionOptions)[] = ['initializeToIdentity'];
const OPS: readonly ReductionOp[] = ['sum', 'product', 'min', 'max'];

/**
 * A reduction a command group declared with `cg.reduce`: pass it to `parallelFor` like an accessor;
 * the kernel receives the partials (see the module comment).
 */
export class Reduction<T extends DType = DType, D extends Dims = Dims> {
  readonly buffer: GraphBuffer<T, D>;
  readonly op: ReductionOp;
  readonly initializeToIdentity: boolean;
  /** @internal The command group that declared it. */
  readonly group: object;

  /** @internal Use `cg.reduce`. */
  constructor(group: object, buffer: GraphBuffer<T, D>, op: ReductionOp, initializeToIdentity: boolean) {
    this.group = group;
    this.buffer = buffer;
    this.op = op;
    this.initializeToIdentity = initializeToIdentity;
  }

  /** How task records name it: `reduction(sum)`. */
  get name(): string {
    return `reduction(${this.op}${this.initializeToIdentity ? ', initializeToIdentity' : ''})`;
  }
}

/** @internal Validates `cg.reduce`'s operation and options. */
export function checkReduction(op: unknown, options: ReductionOptions | undefined): { op: ReductionOp; initializeToIdentity: boolean } {
  const o = checkOptionsObject('reduce options', options, REDUCTION_OPTIONS);
  return {
    op: checkOneOf('reduce op', op, OPS),
    initializeToIdentity: o.initializeToIdentity === undefined ? false : checkBoolean('initializeToIdentity', o.initializeToIdentity),
  };
}

type Scalar = number | bigint;

/** The identity of `op` over elements of `dtype`: what every partial starts as. */
export function reductionIdentity(op: ReductionOp, dtype: DType): Scalar {
  const big = dtype === 'bigint64' || dtype === 'biguint64';
  if (op === 'sum') return big ? 0n : 0;
  if (op === 'product') return big ? 1n : 1;
  // min starts from the largest element value, max from the smallest.
  const [lo, hi] = LIMITS[dtype];
  return op === 'min' ? hi : lo;
}

/** Folds `values` with `op`, starting from `first`; the result is stored in `dtype` by the caller. */
export function combine(op: ReductionOp, first: Scalar, values: ArrayLike<Scalar>): Scalar {
  let acc = first as number;
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    // Both operands have the element's type: all numbers or all bigints.
    if (op === 'sum') acc = acc + v;
    else if (op === 'product') acc = acc * v;
    else if (op === 'min') acc = v < acc ? v : acc;
    else acc = v > acc ? v : acc;
  }
  return acc;
}

const LIMITS: Record<DType, readonly [Scalar, Scalar]> = {
  float64: [-Infinity, Infinity],
  float32: [-Infinity, Infinity],
  int32: [-(2 ** 31), 2 ** 31 - 1],
  uint32: [0, 2 ** 32 - 1],
  int16: [-(2 ** 15), 2 ** 15 - 1],
  uint16: [0, 2 ** 16 - 1],
  int8: [-128, 127],
  uint8: [0, 255],
  bigint64: [-(2n ** 63n), 2n ** 63n - 1n],
  biguint64: [0n, 2n ** 64n - 1n],
};

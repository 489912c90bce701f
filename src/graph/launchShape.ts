/**
 * The shape of a kernel launch beyond its global size, as Celerity's `parallel_for` takes it: a
 * kernel offset (the index space is `[offset, offset + global)`), a local size (work-groups of
 * `local` items that no chunk cuts apart) and a split constraint (every chunk's extent is a multiple
 * of it, Celerity's `experimental::constrain_split`). The local size and the split constraint
 * together give the granularity the kernel is split with: their least common multiple per dimension,
 * which must divide the global size.
 */
import { chunk, type Chunk } from '../core/chunk.js';
import { checkCoords, dimsWord, formatCoords, type CoordsInput, type Dims, type DimsOf } from '../core/dims.js';
import { GeometryError } from '../core/errors.js';
import type { Id } from '../core/id.js';
import type { Range } from '../core/range.js';
import { checkOptionsObject } from '../core/validate.js';
import { split } from './split.js';

/**
 * A launch with more than a global size, what `parallelFor` accepts in place of a plain range.
 *
 * @example 1,000 items starting at index 24, in work-groups of 8, each chunk a multiple of 40 items:
 * ```ts
 * cg.parallelFor({ global: [1000], offset: [24], local: [8], splitConstraint: [40] }, 'k', acc);
 * ```
 */
export interface KernelLaunchShape<R extends CoordsInput = CoordsInput> {
  /** Work items per dimension (the kernel's global size); its length is the kernel's dimensionality. */
  readonly global: R;
  /** The index of the first work item: item indices run over `[offset, offset + global)`. Default (0,…,0). */
  readonly offset?: CoordsInput;
  /** Work-group size per dimension; each must divide its `global` size. Default (1,…,1). */
  readonly local?: CoordsInput;
  /** Every chunk's extent is a multiple of this along each dimension; it must divide `global` (with `local`, their lcm must). Default (1,…,1). */
  readonly splitConstraint?: CoordsInput;
}

/** A {@link KernelLaunchShape} after {@link checkLaunchShape}: every field filled in and frozen. */
export interface CheckedKernelLaunchShape<D extends Dims = Dims> {
  readonly global: Range<D>;
  readonly offset: Id<D>;
  readonly local: Range<D>;
  readonly splitConstraint: Range<D>;
  /** What chunks are cut by: `lcm(local[d], splitConstraint[d])` per dimension. */
  readonly granularity: Range<D>;
}

/** The dimensionality of a `parallelFor` range: a tuple's length, or its `global`'s for a launch shape. */
export type KernelLaunchDims<R> = R extends KernelLaunchShape<infer G> ? DimsOf<G> : R extends CoordsInput ? DimsOf<R> : Dims;

const LAUNCH_SHAPE_KEYS: readonly (keyof KernelLaunchShape)[] = ['global', 'offset', 'local', 'splitConstraint'];

/**
 * Validates a launch: a plain range (0 to 3 extents) or a {@link KernelLaunchShape}.
 * @throws {GeometryError} for a malformed coordinate tuple, an `offset`, `local` or `splitConstraint`
 *   of another dimensionality than `global`, a local size of 0 or one that does not divide the global
 *   size, and Celerity's errors for the split constraint: `Split constraint cannot be 0` and `The split
 *   constraint [3] does not evenly divide the kernel global size [10]` (`The effective split constraint`
 *   when the local size holds more than one item, naming the lcm of both). OptionError for an unknown key.
 * @example checkLaunchShape({ global: [10], splitConstraint: [5] }).granularity // [5]
 */
export function checkLaunchShape<const R extends CoordsInput | KernelLaunchShape>(shape: R): CheckedKernelLaunchShape<KernelLaunchDims<R>> {
  const isShape = shape !== null && typeof shape === 'object' && !Array.isArray(shape);
  if (!isShape) {
    const global = checkCoords('range', shape);
    const ones = Object.freeze(global.map(() => 1));
    return freeze(global, global.map(() => 0), ones, ones, ones);
  }
  const s = checkOptionsObject('launch shape', shape as KernelLaunchShape, LAUNCH_SHAPE_KEYS);
  const global = checkCoords('launch shape global', s.global);
  const same = (name: keyof KernelLaunchShape, value: CoordsInput | undefined, fill: number): readonly number[] => {
    if (value === undefined) return global.map(() => fill);
    const v = checkCoords(`launch shape ${name}`, value);
    if (v.length !== global.length) {
      throw new GeometryError(`launch shape ${name} ${formatCoords(v)} is ${dimsWord(v.length)} but the global size ${formatCoords(global)} is ${dimsWord(global.length)}; give one entry per dimension`);
    }
    return v;
  };
  const offset = same('offset', s.offset, 0);
  const local = same('local', s.local, 1);
  const constraint = same('splitConstraint', s.splitConstraint, 1);
  local.forEach((l, d) => {
    if (l === 0 || global[d]! % l !== 0) {
      throw new GeometryError(`the local size ${bracket(local)} does not evenly divide the kernel global size ${bracket(global)} along dimension ${d}; choose a work-group size that divides it`);
    }
  });
  if (constraint.some((c) => c === 0)) throw new GeometryError('Split constraint cannot be 0');
  const granularity = constraint.map((c, d) => lcm(c, local[d]!));
  if (granularity.some((g, d) => global[d]! % g !== 0)) {
    const effective = local.reduce((p, l) => p * l, 1) > 1 ? ' effective ' : ' ';
    throw new GeometryError(`The${effective}split constraint ${bracket(granularity)} does not evenly divide the kernel global size ${bracket(global)}`);
  }
  return freeze(global, offset, local, constraint, granularity);
}

/**
 * Splits a launch into at most `count` chunks (see {@link split}), each a multiple of the launch's
 * granularity and shifted by its offset. Chunks keep the global size as `globalSize`, as Celerity's
 * do: a chunk's `offset + range` may then exceed `globalSize`.
 * @throws what {@link split} throws for `count`.
 */
export function launchChunks<D extends Dims>(launch: CheckedKernelLaunchShape<D>, count: number): Chunk<D>[] {
  const chunks = split(launch.global, count, { granularity: [...launch.granularity] });
  if (launch.offset.every((o) => o === 0)) return chunks;
  return chunks.map((c) => chunk(c.offset.map((o, d) => o + launch.offset[d]!), c.range, c.globalSize) as unknown as Chunk<D>);
}

/** Celerity renders ranges in its messages as `[10,20]`. */
function bracket(coords: readonly number[]): string {
  return `[${coords.join(',')}]`;
}

function lcm(a: number, b: number): number {
  let x = a;
  let y = b;
  while (y !== 0) [x, y] = [y, x % y];
  return (a / x) * b;
}

function freeze<D extends Dims>(
  global: readonly number[],
  offset: readonly number[],
  local: readonly number[],
  splitConstraint: readonly number[],
  granularity: readonly number[],
): CheckedKernelLaunchShape<D> {
  const f = (x: readonly number[]) => Object.freeze([...x]);
  return Object.freeze({ global: f(global), offset: f(offset), local: f(local), splitConstraint: f(splitConstraint), granularity: f(granularity) }) as unknown as CheckedKernelLaunchShape<D>;
}


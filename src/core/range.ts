import { checkCoords, type Coords, type CoordsInput, type Dims, type DimsOf } from './dims.js';

declare const rangeBrand: unique symbol;

/**
 * The extent of a 0-3 dimensional index space: `range[d]` items along dimension `d` (zero allowed);
 * `[]` is the 0-dimensional space of one item.
 * A frozen tuple, branded so that an extent never type-checks where a point (`Id`) is expected.
 */
export type Range<D extends Dims = Dims> = Coords<D> & { readonly [rangeBrand]: true };

/**
 * Makes a {@link Range}. The tuple's length is the dimensionality.
 * @throws {GeometryError} unless `extent` holds 0 to 3 non-negative integers.
 * @example range([128, 128]) // a 128×128 extent, type Range<2>
 */
export function range<const T extends CoordsInput>(extent: T): Range<DimsOf<T>> {
  return checkCoords('range', extent) as unknown as Range<DimsOf<T>>;
}

/** Number of items in a range: the product of its extents (0 when any extent is 0). */
export function rangeSize(r: Range): number {
  return (r as readonly number[]).reduce((p, e) => p * e, 1);
}

/** Whether two ranges have the same dimensionality and extents. */
export function rangeEquals(a: Range, b: Range): boolean {
  return a.length === b.length && a.every((e, i) => e === b[i]);
}

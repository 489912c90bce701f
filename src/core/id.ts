import { checkCoords, type Coords, type CoordsInput, type Dims, type DimsOf } from './dims.js';

declare const idBrand: unique symbol;

/**
 * A point of a 0-3 dimensional index space: a work item's index, a chunk's offset, a box corner
 * (`()`, the empty tuple, is the one point of a 0-dimensional space).
 * A frozen tuple of non-negative integers, branded so that a point never type-checks as a
 * `Range`.
 */
export type Id<D extends Dims = Dims> = Coords<D> & { readonly [idBrand]: true };

/**
 * Makes an {@link Id}. The tuple's length is the dimensionality.
 * @throws {GeometryError} unless `coords` holds 0 to 3 non-negative integers.
 * @example id([64, 32]) // type Id<2>
 */
export function id<const T extends CoordsInput>(coords: T): Id<DimsOf<T>> {
  return checkCoords('id', coords) as unknown as Id<DimsOf<T>>;
}

/** The origin of a `dims`-dimensional index space. */
export function zeroId<D extends Dims>(dims: D): Id<D> {
  return Object.freeze(new Array<number>(dims).fill(0)) as unknown as Id<D>;
}

import { checkCoords, dimsWord, formatCoords, type CoordsInput, type Dims, type DimsOf } from './dims.js';
import { GeometryError } from './errors.js';
import type { Id } from './id.js';
import type { Range } from './range.js';

/** A rectangular part of an index space given as offset plus extent, as range mappers return it. */
export interface Subrange<D extends Dims = Dims> {
  readonly kind: 'subrange';
  readonly offset: Id<D>;
  readonly range: Range<D>;
}

/**
 * Makes a {@link Subrange}. A subrange with a zero extent is empty; it keeps its offset (its box,
 * `boxOf(s)`, is the canonical empty box).
 * @throws {GeometryError} when a coordinate is negative or fractional, or the two tuples differ in length.
 * @example subrange([32, 0, 32], [32, 128, 32])
 */
export function subrange<const T extends CoordsInput>(offset: T, range: CoordsInput): Subrange<DimsOf<T>> {
  const o = checkCoords('subrange offset', offset);
  const r = checkCoords('subrange range', range);
  checkPair('subrange', o, r);
  return Object.freeze({ kind: 'subrange', offset: o, range: r }) as unknown as Subrange<DimsOf<T>>;
}

/** Renders a subrange as `offset (32,0,32) range (32,128,32)`. */
export function formatSubrange(s: { offset: readonly number[]; range: readonly number[] }): string {
  return `offset ${formatCoords(s.offset)} range ${formatCoords(s.range)}`;
}

/** @internal Throws unless two tuples of one value (offset and range, min and max) have one dimensionality. */
export function checkPair(what: string, a: readonly number[], b: readonly number[], names: readonly [string, string] = ['offset', 'range']): void {
  if (a.length !== b.length) {
    throw new GeometryError(`${what} ${names[0]} ${formatCoords(a)} is ${dimsWord(a.length)} but its ${names[1]} ${formatCoords(b)} is ${dimsWord(b.length)}`);
  }
}

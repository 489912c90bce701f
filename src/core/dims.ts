import { GeometryError } from './errors.js';
import { describe } from './validate.js';

/**
 * Dimensionality of kernels, buffers and the geometry between them: pxl works in zero to three
 * dimensions, like Celerity. A 0-dimensional index space has exactly one point, the empty tuple `()`:
 * a scalar buffer, a single-item kernel. Dimension 0 is the slowest-varying (row-major).
 */
export type Dims = 0 | 1 | 2 | 3;

/** A fixed-length tuple of `D` numbers: the raw coordinates behind ranges, points and boxes. */
export type Coords<D extends Dims = Dims> = D extends 0
  ? readonly []
  : D extends 1
  ? readonly [number]
  : D extends 2
    ? readonly [number, number]
    : D extends 3
      ? readonly [number, number, number]
      : never;

/**
 * The dimensionality of a coordinate tuple type: 2 for `[5, 100]`, and the union {@link Dims} when the
 * length is not known statically (a plain `number[]`).
 */
export type DimsOf<T extends readonly number[]> = T['length'] extends Dims ? T['length'] : Dims;

/** What constructors accept: a literal tuple (its length becomes the dimensionality) or any array. */
export type CoordsInput = Coords | readonly number[];

/** `1-dimensional`, `2-dimensional`: the wording every dimension diagnostic uses. */
export function dimsWord(dims: number): string {
  return `${dims}-dimensional`;
}

/** Renders coordinates as `(5,100)`, the form diagnostics and docs use. */
export function formatCoords(coords: readonly number[]): string {
  return `(${coords.join(',')})`;
}

/**
 * Validates user coordinates: `minDims` (default 0: the empty tuple of a 0-dimensional space) to three
 * non-negative safe integers. Returns a frozen copy.
 * @throws {GeometryError} naming `what` and the offending entry.
 */
export function checkCoords(what: string, value: unknown, minDims: 0 | 1 = 0): readonly number[] {
  if (!Array.isArray(value) || value.length < minDims || value.length > 3) {
    throw new GeometryError(`${what} must be an array of ${minDims} to 3 coordinates, got ${describe(value)}`);
  }
  value.forEach((v: unknown, i) => {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
      throw new GeometryError(`${what}[${i}] must be a non-negative integer, got ${describe(v)}`);
    }
  });
  return Object.freeze([...(value as number[])]);
}

/**
 * Checks that the two operands of `operation` have the same dimensionality.
 * @throws {GeometryError} e.g. "union needs operands of one dimensionality, got a 2-dimensional box
 * and a 3-dimensional region".
 */
export function checkSameDims(operation: string, a: { dims: number; noun: string }, b: { dims: number; noun: string }): void {
  if (a.dims !== b.dims) {
    throw new GeometryError(`${operation} needs operands of one dimensionality, got a ${dimsWord(a.dims)} ${a.noun} and a ${dimsWord(b.dims)} ${b.noun}`);
  }
}

import { checkCoords, checkSameDims, formatCoords, type CoordsInput, type Dims, type DimsOf } from './dims.js';
import { GeometryError } from './errors.js';
import type { Id } from './id.js';
import type { Range } from './range.js';
import { checkPair, type Subrange } from './subrange.js';
import type { Chunk } from './chunk.js';

/**
 * A half-open box `[min, max)` of a 0-3 dimensional index space: the points `p` with
 * `min[d] <= p[d] < max[d]` along every dimension `d`.
 *
 * Normal form: a box that holds no point (some `max[d] <= min[d]`) is always the one canonical empty
 * box of its dimensionality, `min = max = (0,…,0)`, and the same object. So two boxes hold the same
 * points exactly when their fields are equal. A 0-dimensional box has no bounds to be empty by: it
 * is always the one point `()`, `min = max = ()`, and the same object; an empty 0-dimensional set is
 * the empty region, `emptyRegion(0)`.
 */
export interface Box<D extends Dims = Dims> {
  readonly kind: 'box';
  readonly dims: D;
  readonly min: Id<D>;
  readonly max: Id<D>;
}

const EMPTY: readonly Box[] = ([1, 2, 3] as const).map((dims) => {
  const zero = Object.freeze(new Array<number>(dims).fill(0));
  return Object.freeze({ kind: 'box', dims, min: zero, max: zero }) as unknown as Box;
});

/** The one 0-dimensional box: the single point of a 0-dimensional space. */
const POINT = Object.freeze({ kind: 'box', dims: 0, min: Object.freeze([]), max: Object.freeze([]) }) as unknown as Box<0>;

/**
 * The canonical empty box of a dimensionality (always the same object).
 * @throws {GeometryError} for 0 dimensions: a 0-dimensional box always holds its one point.
 */
export function emptyBox<D extends Dims>(dims: D): Box<D> {
  if (dims === 0) throw new GeometryError('there is no empty 0-dimensional box: a 0-dimensional box always holds its one point; use emptyRegion(0) for an empty 0-dimensional set');
  return EMPTY[dims - 1] as Box<D>;
}

/**
 * Makes a {@link Box} from its corners, in normal form (see {@link Box}).
 * @throws {GeometryError} when a coordinate is negative or fractional, or the corners differ in length.
 * @example box([0, 90], [25, 128]) // [(0,90),(25,128))
 */
export function box<const T extends CoordsInput>(min: T, max: CoordsInput): Box<DimsOf<T>> {
  const lo = checkCoords('box min', min);
  const hi = checkCoords('box max', max);
  checkPair('box', lo, hi, ['min', 'max']);
  return boxFromBounds(lo, hi) as Box<DimsOf<T>>;
}

/** @internal Makes a box from trusted non-negative integer bounds, in normal form. */
export function boxFromBounds(min: readonly number[], max: readonly number[]): Box {
  const dims = min.length as Dims;
  if (dims === 0) return POINT;
  if (min.some((lo, d) => max[d]! <= lo)) return emptyBox(dims);
  return Object.freeze({ kind: 'box', dims, min: Object.freeze([...min]), max: Object.freeze([...max]) }) as unknown as Box;
}

/** The box a subrange or chunk covers: `[offset, offset + range)`. A box is returned unchanged. */
export function boxOf<D extends Dims>(x: Subrange<D> | Chunk<D> | Box<D>): Box<D> {
  if (x.kind === 'box') return x;
  return boxFromBounds(x.offset, x.offset.map((o, d) => o + x.range[d]!)) as Box<D>;
}

/** The box as offset plus extent. The empty box gives offset (0,…,0) and range (0,…,0). */
export function boxSubrange<D extends Dims>(b: Box<D>): Subrange<D> {
  const range = Object.freeze(b.min.map((lo, d) => b.max[d]! - lo));
  return Object.freeze({ kind: 'subrange', offset: b.min, range }) as unknown as Subrange<D>;
}

/** The box `[0, range)`: a whole buffer or kernel index space. */
export function boxOfRange<D extends Dims>(r: Range<D>): Box<D> {
  return boxFromBounds(new Array<number>(r.length).fill(0), r) as Box<D>;
}

/** Whether the box holds no point. */
export function boxIsEmpty(b: Box): boolean {
  // In normal form a non-empty box has max[d] > min[d] >= 0, so max[0] is 0 only for the empty box;
  // a 0-dimensional box has no max[0] and is never empty.
  return b.max[0] === 0;
}

/** Number of points in the box: 1 for a 0-dimensional one. */
export function boxArea(b: Box): number {
  return (b.min as readonly number[]).reduce((p, lo, d) => p * (b.max[d]! - lo), 1);
}

/**
 * The points two boxes share, as a box (possibly the empty one).
 * @throws {GeometryError} when the dimensionalities differ.
 */
export function boxIntersection<D extends Dims>(a: Box<D>, b: Box<D>): Box<D> {
  checkSameDims('boxIntersection', { dims: a.dims, noun: 'box' }, { dims: b.dims, noun: 'box' });
  return boxFromBounds(
    a.min.map((lo, d) => Math.max(lo, b.min[d]!)),
    a.max.map((hi, d) => Math.min(hi, b.max[d]!)),
  ) as Box<D>;
}

/** Clamps a box to a buffer of extent `r`: its intersection with `[0, r)`. */
export function clampBox<D extends Dims>(b: Box<D>, r: Range<D>): Box<D> {
  return boxFromBounds(b.min, b.max.map((hi, d) => Math.min(hi, r[d]!))) as Box<D>;
}

/** Whether the point lies in the box. */
export function boxContainsPoint<D extends Dims>(b: Box<D>, p: Id<D>): boolean {
  return p.length === b.dims && b.min.every((lo, d) => lo <= p[d]! && p[d]! < b.max[d]!);
}

/** Renders a box as `[(0,90),(25,128))`. */
export function formatBox(b: Box): string {
  return `[${formatCoords(b.min)},${formatCoords(b.max)})`;
}

import { checkCoords, dimsWord, formatCoords, type CoordsInput, type Dims, type DimsOf } from './dims.js';
import { GeometryError } from './errors.js';
import type { Id } from './id.js';
import type { Range } from './range.js';
import { checkPair, formatSubrange, type Subrange } from './subrange.js';

/**
 * The part of a kernel's index space that one core or device runs: an offset and extent, and the
 * kernel's `globalSize`. The offset includes the kernel's offset when it was launched with one (as in
 * Celerity), so `offset + range` stays within `globalSize` only for kernels without an offset. Range
 * mappers receive chunks and turn them into buffer regions.
 */
export interface Chunk<D extends Dims = Dims> {
  readonly kind: 'chunk';
  readonly offset: Id<D>;
  readonly range: Range<D>;
  readonly globalSize: Range<D>;
}

/**
 * Makes a {@link Chunk}.
 * @throws {GeometryError} when the three tuples differ in length or the chunk's range exceeds
 * `globalSize` along a dimension.
 * @example chunk([5, 100], [10, 20], [128, 128])
 */
export function chunk<const T extends CoordsInput>(offset: T, range: CoordsInput, globalSize: CoordsInput): Chunk<DimsOf<T>> {
  const o = checkCoords('chunk offset', offset);
  const r = checkCoords('chunk range', range);
  const g = checkCoords('chunk globalSize', globalSize);
  checkPair('chunk', o, r);
  if (g.length !== o.length) {
    throw new GeometryError(`chunk ${formatSubrange({ offset: o, range: r })} is ${dimsWord(o.length)} but its globalSize ${formatCoords(g)} is ${dimsWord(g.length)}`);
  }
  // Not offset + range: a kernel launched with an offset has chunks that end past its global size.
  if (r.some((x, d) => x > g[d]!)) {
    throw new GeometryError(`chunk ${formatSubrange({ offset: o, range: r })} is larger than its globalSize ${formatCoords(g)}`);
  }
  return Object.freeze({ kind: 'chunk', offset: o, range: r, globalSize: g }) as unknown as Chunk<DimsOf<T>>;
}

/** The chunk's offset and range as a {@link Subrange} (what the one-to-one mapping returns). */
export function chunkSubrange<D extends Dims>(c: Chunk<D>): Subrange<D> {
  return Object.freeze({ kind: 'subrange', offset: c.offset, range: c.range }) as Subrange<D>;
}

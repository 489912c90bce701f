/**
 * The built-in range mappers. This module exports only them, so `import * as access from
 * './mappers.js'` reads as `access.oneToOne()`, `access.neighborhood([1, 1])`. Each result is clamped
 * to the buffer, and an empty chunk accesses nothing (except `fixed` and `all`, which ignore the chunk).
 */
import { boxOf, boxOfRange, emptyBox, formatBox, type Box } from '../core/box.js';
import type { Chunk } from '../core/chunk.js';
import { checkCoords, dimsWord, type CoordsInput, type Dims, type DimsOf } from '../core/dims.js';
import type { Range } from '../core/range.js';
import { boundingBox, checkIndexSet, formatRegion, intersection, region, type IndexSet, type Region } from '../core/region.js';
import { checkInteger, checkOneOf, checkOptionsObject } from '../core/validate.js';
import { evenDeal, shareStart } from './evenShares.js';
import { clampedBox, defineRangeMapper, type MapperInfo } from './rangeMapper.js';

/**
 * The mapper {@link oneToOne} and {@link slice} return: a kernel and buffer of one dimensionality,
 * one signature per dimensionality, so that a kernel and buffer of different ones do not type-check.
 */
export type SameDimsMapper = ((chunk: Chunk<0>, bufferRange: Range<0>) => Box<0>) &
  ((chunk: Chunk<1>, bufferRange: Range<1>) => Box<1>) &
  ((chunk: Chunk<2>, bufferRange: Range<2>) => Box<2>) &
  ((chunk: Chunk<3>, bufferRange: Range<3>) => Box<3>) &
  MapperInfo;

const sameDims = (k: Dims, b: Dims): string | undefined => (k === b ? undefined : 'needs a kernel and a buffer of one dimensionality');

const isEmptyChunk = (c: Chunk): boolean => c.range.some((e) => e === 0);

const ONE_TO_ONE = defineRangeMapper('oneToOne()', sameDims, <D extends Dims>(c: Chunk<D>, r: Range<D>): Box<D> =>
  clampedBox(c.offset, c.offset.map((o, d) => o + c.range[d]!), r),
) as unknown as SameDimsMapper;

/**
 * Each work item accesses the buffer element at its own index: chunk offset (64,32) range (32,4)
 * accesses offset (64,32) range (32,4). Kernel and buffer must have one dimensionality (0-dimensional
 * included: the one item accesses the one element).
 */
export function oneToOne(): SameDimsMapper {
  return ONE_TO_ONE;
}

/**
 * Like {@link oneToOne}, but extended over the whole buffer along dimension `dim`: a work item accesses
 * a whole row, column or plane through its index. Used by dense matrix multiplication. Example:
 * `slice(1)` on chunk offset (32,32,32) range (32,32,32) of a 128³ buffer accesses offset (32,0,32)
 * range (32,128,32).
 * @throws {OptionError} unless `dim` is 0, 1 or 2. Serving a kernel and buffer without dimension
 * `dim` is a `RangeMapperError`.
 */
export function slice(dim: number): SameDimsMapper {
  checkInteger('slice dim', dim, 0, 2);
  const mismatch = (k: Dims, b: Dims): string | undefined =>
    k === b && dim < b ? undefined : `needs a kernel and a buffer of one dimensionality with a dimension ${dim}`;
  return defineRangeMapper(`slice(${dim})`, mismatch, <D extends Dims>(c: Chunk<D>, r: Range<D>): Box<D> => {
    if (isEmptyChunk(c)) return emptyBox(r.length as D);
    const min = c.offset.map((o, d) => (d === dim ? 0 : o));
    const max = c.offset.map((o, d) => (d === dim ? r[d]! : o + c.range[d]!));
    return clampedBox(min, max, r);
  }) as unknown as SameDimsMapper;
}

/** How {@link neighborhood} widens a chunk: the full box, or along each axis only (no corners). */
export type NeighborhoodShape = 'boundingBox' | 'alongAxes';

/** The mapper {@link neighborhood} returns: a box for `'boundingBox'`, a region for `'alongAxes'`. */
export type NeighborhoodMapper<D extends Dims, S extends NeighborhoodShape> = ((chunk: Chunk<D>, bufferRange: Range<D>) => S extends 'boundingBox' ? Box<D> : Region<D>) &
  MapperInfo;

/**
 * Each work item accesses the elements within `extent[d]` of its index along every dimension `d`, as
 * stencils do. `'boundingBox'` (the default) accesses the whole widened box, corners included;
 * `'alongAxes'` the union of the chunk widened along one axis at a time (a 5-point stencil in 2-D
 * needs no diagonal neighbours). Example: `neighborhood([10, 10])` on chunk offset (5,100) range
 * (10,20) of a 128×128 buffer accesses the box [(0,90),(25,128)).
 * @throws {GeometryError} when `extent` is not 1 to 3 non-negative integers (a 0-dimensional space has no neighbours); `OptionError` for an
 * unknown shape. Serving a kernel or buffer of another dimensionality than `extent` is a
 * `RangeMapperError`.
 */
export function neighborhood<const T extends CoordsInput, S extends NeighborhoodShape = 'boundingBox'>(
  extent: T,
  shape?: S,
): NeighborhoodMapper<DimsOf<T>, S> {
  // A 0-dimensional space has no neighbours to widen to.
  const e = checkCoords('neighborhood extent', extent, 1);
  const s = checkOneOf('neighborhood shape', shape ?? 'boundingBox', ['boundingBox', 'alongAxes'] as const);
  const n = e.length;
  const mismatch = (k: Dims, b: Dims): string | undefined =>
    k === n && b === n ? undefined : `needs a ${dimsWord(n)} kernel and a ${dimsWord(n)} buffer (one per extent entry)`;
  const name = `neighborhood([${e.join(',')}]${s === 'alongAxes' ? ", 'alongAxes'" : ''})`;
  return defineRangeMapper(name, mismatch, (c: Chunk, r: Range): Box | Region => {
    const widened = (axes: (d: number) => boolean): Box =>
      clampedBox(
        c.offset.map((o, d) => (axes(d) ? o - e[d]! : o)),
        c.offset.map((o, d) => o + c.range[d]! + (axes(d) ? e[d]! : 0)),
        r,
      );
    if (isEmptyChunk(c)) return s === 'boundingBox' ? emptyBox(n as Dims) : region(n as Dims, []);
    if (s === 'boundingBox') return widened(() => true);
    return region(n as Dims, e.map((_, axis) => widened((d) => d === axis)));
  }) as unknown as NeighborhoodMapper<DimsOf<T>, S>;
}

/** The mapper {@link fixed} returns: every chunk accesses the same `BD`-dimensional set. */
export type FixedMapper<BD extends Dims, R> = (<KD extends Dims>(chunk: Chunk<KD>, bufferRange: Range<BD>) => R) & MapperInfo;

/**
 * Every chunk accesses the same part of the buffer, whatever the chunk: e.g. a convolution's filter.
 * The part is clamped to the buffer. Serving a buffer of another dimensionality is a
 * `RangeMapperError`.
 */
export function fixed<BD extends Dims>(part: Region<BD>): FixedMapper<BD, Region<BD>>;
export function fixed<BD extends Dims>(part: Exclude<IndexSet<BD>, Region<BD>>): FixedMapper<BD, Box<BD>>;
export function fixed<BD extends Dims>(part: IndexSet<BD>): FixedMapper<BD, Box<BD> | Region<BD>> {
  checkIndexSet('access.fixed', 'part', part);
  const selected = part.kind === 'region' ? part : boxOf(part);
  const n = selected.dims;
  const name = `fixed(${selected.kind === 'region' ? formatRegion(selected) : formatBox(selected)})`;
  const mismatch = (_k: Dims, b: Dims): string | undefined => (b === n ? undefined : `selects a ${dimsWord(n)} ${selected.kind}, so it needs a ${dimsWord(n)} buffer`);
  return defineRangeMapper(name, mismatch, (_c: Chunk, r: Range<BD>): Box<BD> | Region<BD> =>
    selected.kind === 'region' ? intersection(selected, boxOfRange(r)) : boundingBox(intersection(selected, boxOfRange(r))),
  );
}

/** The mapper {@link all} returns: serves any kernel and buffer. */
export type AllMapper = (<KD extends Dims, BD extends Dims>(chunk: Chunk<KD>, bufferRange: Range<BD>) => Box<BD>) & MapperInfo;

const ALL: AllMapper = defineRangeMapper('all()', () => undefined, <BD extends Dims>(_c: Chunk, r: Range<BD>): Box<BD> => boxOfRange(r));

/** Every chunk accesses the whole buffer, whatever the dimensionalities. */
export function all(): AllMapper {
  return ALL;
}

/** Options of {@link evenSplit}. */
export interface EvenSplitOptions {
  /** Boundaries between chunks' parts fall on multiples of this many buffer rows. Default 1. */
  granularity?: number;
}

/** The mapper {@link evenSplit} returns: a 1-dimensional kernel over a buffer of any dimensionality. */
export type EvenSplitMapper = (<BD extends Dims>(chunk: Chunk<1>, bufferRange: Range<BD>) => Box<BD>) & MapperInfo;

/**
 * Spreads a 1-dimensional kernel of `G` items evenly over the buffer's dimension 0, as Celerity's
 * even_split: kernel item `i` owns a share of the `B` rows, dealt as `split` deals a range (each
 * share `⌊B / (G·g)⌋·g` rows, the whole granules left over one each to the first items, the tail that
 * is not a whole granule to the last item), and a chunk covering the items `[o, o + n)` accesses the
 * rows of their shares and all of every other dimension. 10 rows over 3 items → [0,4) [4,7) [7,10).
 * Chunks that tile the kernel therefore tile the buffer without overlap, so it suits producer
 * accesses.
 * @throws {OptionError} when the granularity is not a positive integer. Serving a kernel of more than
 * one dimension is a `RangeMapperError`.
 */
export function evenSplit(options?: EvenSplitOptions): EvenSplitMapper {
  const o = checkOptionsObject('evenSplit options', options, ['granularity']);
  const g = checkInteger('evenSplit granularity', o.granularity ?? 1, 1, Number.MAX_SAFE_INTEGER);
  const name = g === 1 ? 'evenSplit()' : `evenSplit({ granularity: ${g} })`;
  const mismatch = (k: Dims): string | undefined => (k === 1 ? undefined : 'needs a 1-dimensional kernel');
  return defineRangeMapper(name, mismatch, <BD extends Dims>(c: Chunk<1>, r: Range<BD>): Box<BD> => {
    const [o] = c.offset;
    const [n] = c.range;
    // A 0-dimensional buffer has no rows to deal: every chunk accesses its one element.
    if (r.length === 0) return boxOfRange(r);
    if (n === 0) return emptyBox(r.length as BD);
    const deal = evenDeal(r[0]!, c.globalSize[0], g);
    return clampedBox([shareStart(deal, o), ...r.slice(1).map(() => 0)], [shareStart(deal, o + n), ...r.slice(1)], r);
  });
}

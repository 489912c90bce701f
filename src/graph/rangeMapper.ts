import { boxFromBounds, boxIsEmpty, boxOf, boxOfRange, type Box } from '../core/box.js';
import type { Chunk } from '../core/chunk.js';
import { dimsWord, type Dims } from '../core/dims.js';
import { ArgumentError, GeometryError, RangeMapperError } from '../core/errors.js';
import type { Range } from '../core/range.js';
import { emptyRegion, intersection, regionOf, type Region } from '../core/region.js';
import { formatSubrange, type Subrange } from '../core/subrange.js';
import { describe } from '../core/validate.js';

/** What a range mapper may return: the buffer points a chunk accesses, in any of these forms. */
export type MapperResult<BD extends Dims = Dims> = Subrange<BD> | Box<BD> | Region<BD> | Chunk<BD>;

/**
 * A range mapper: a pure function from a chunk of a `KD`-dimensional kernel (and the extent of the
 * `BD`-dimensional buffer) to the buffer points that chunk accesses. It must be monotonic (a larger
 * chunk never accesses less) and must not assume how many chunks there are; for producer accesses the
 * results for different chunks must not overlap. Results are clamped to the buffer by
 * {@link applyRangeMapper}. A plain `(chunk) => subrange(...)` is a range mapper.
 */
export type RangeMapper<KD extends Dims = Dims, BD extends Dims = Dims> = ((chunk: Chunk<KD>, bufferRange: Range<BD>) => MapperResult<BD>) &
  Partial<MapperInfo>;

/**
 * Any range mapper, whatever dimensionalities it serves: what code that only names, checks or stores
 * mappers accepts (a `RangeMapper<2, 2>` is not a `RangeMapper<Dims, Dims>`, which must serve all).
 */
export type AnyRangeMapper = ((chunk: Chunk<never>, bufferRange: Range<never>) => MapperResult) & Partial<MapperInfo>;

/**
 * The kernel dimensionalities a mapper `M` serves over a `BD`-dimensional buffer, at the type level:
 * each `K` for which `M` can be called as `(chunk: Chunk<K>, bufferRange: Range<BD>)`. `never` when
 * it serves no kernel over such a buffer (a compile-time error where an accessor is declared); all of
 * {@link Dims} for a mapper typed only as {@link AnyRangeMapper}, whose dimensions are checked at run
 * time instead.
 */
export type ServedKernelDims<M, BD extends Dims> = [M] extends [never]
  ? Dims
  : AnyRangeMapper extends M
  ? Dims
  : { [K in Dims]: M extends (chunk: Chunk<K>, bufferRange: Range<BD>) => unknown ? K : never }[Dims];

/** What built-in (and {@link defineRangeMapper}) mappers tell about themselves. */
export interface MapperInfo {
  /** How diagnostics name the mapper, e.g. `neighborhood([1,1])`. */
  readonly mapperName: string;
  /**
   * Why the mapper cannot serve a kernel and buffer of these dimensionalities, as the start of a
   * sentence ("needs a 1-dimensional kernel"), or undefined when it can.
   */
  readonly mismatch: (kernelDims: Dims, bufferDims: Dims) => string | undefined;
}

/**
 * Names a range mapper and states which dimensionalities it serves, so a mismatch is reported when
 * the access is declared instead of as a wrong result. The returned function checks on every call too.
 * @example
 * const rows = defineRangeMapper('rows', (k, b) => (k === 1 ? undefined : 'needs a 1-dimensional kernel'),
 *   (c: Chunk<1>, r: Range<2>) => subrange([c.offset[0], 0], [c.range[0], r[1]]));
 */
export function defineRangeMapper<F extends (chunk: Chunk<never>, bufferRange: Range<never>) => MapperResult>(
  name: string,
  mismatch: MapperInfo['mismatch'],
  fn: F,
): F & MapperInfo {
  if (typeof name !== 'string' || name === '') throw new ArgumentError(`defineRangeMapper: name must be a non-empty string, how diagnostics name the mapper, got ${describe(name)}`);
  if (typeof mismatch !== 'function') {
    throw new ArgumentError(`defineRangeMapper: mismatch must be a function (kernelDims, bufferDims) => reason | undefined, got ${describe(mismatch)}; pass () => undefined for a mapper that serves every dimensionality`);
  }
  if (typeof fn !== 'function') throw new ArgumentError(`defineRangeMapper: fn must be the mapper function (chunk, bufferRange) => subrange, box or region, got ${describe(fn)}`);
  const info: MapperInfo = { mapperName: name, mismatch };
  const checked = (chunk: Chunk, bufferRange: Range): MapperResult => {
    assertFits(info, chunk.offset.length as Dims, bufferRange.length as Dims);
    return (fn as unknown as (c: Chunk, r: Range) => MapperResult)(chunk, bufferRange);
  };
  return Object.freeze(Object.assign(checked, info)) as unknown as F & MapperInfo;
}

/** How diagnostics name a mapper: its `mapperName`, else `'functionName'`, else `(anonymous)`. */
export function mapperName(mapper: AnyRangeMapper): string {
  if (typeof mapper.mapperName === 'string') return mapper.mapperName;
  return mapper.name ? `'${mapper.name}'` : '(anonymous)';
}

/**
 * Checks, before any chunk runs, that a mapper can serve a kernel and buffer of these
 * dimensionalities. Mappers without {@link MapperInfo} are checked on their results instead.
 * @throws {RangeMapperError} e.g. "range mapper oneToOne() needs a kernel and a buffer of one
 * dimensionality, got a 2-dimensional kernel and a 3-dimensional buffer".
 */
export function checkRangeMapper(mapper: AnyRangeMapper, kernelDims: Dims, bufferDims: Dims): void {
  if (typeof mapper.mismatch === 'function') assertFits({ mapperName: mapperName(mapper), mismatch: mapper.mismatch }, kernelDims, bufferDims);
}

/**
 * Runs a range mapper on a chunk and returns the buffer points it accesses as a canonical region,
 * clamped to `[0, bufferRange)`. For a 0-dimensional buffer that is always its one element, whatever
 * the chunk (as in Celerity): the mapper is still called and its result checked.
 * @throws {RangeMapperError} when the mapper does not fit the dimensionalities, returns something
 * that is not a subrange, box, region or chunk of the buffer's dimensionality, or throws (the original
 * error is the `cause`).
 */
export function applyRangeMapper<KD extends Dims, BD extends Dims>(mapper: RangeMapper<NoInfer<KD>, NoInfer<BD>>, chunk: Chunk<KD>, bufferRange: Range<BD>): Region<BD> {
  if (typeof mapper !== 'function') throw new ArgumentError(`applyRangeMapper: mapper must be a range mapper such as access.oneToOne(), got ${describe(mapper)}`);
  if ((chunk as Partial<Chunk> | null)?.kind !== 'chunk' || !Array.isArray(chunk.offset)) {
    throw new GeometryError(`applyRangeMapper: chunk must be a chunk (from chunk() or split()), got ${describe(chunk)}`);
  }
  checkExtent('applyRangeMapper', bufferRange);
  const kd = chunk.offset.length as Dims;
  const bd = bufferRange.length as Dims;
  const name = mapperName(mapper);
  checkRangeMapper(mapper, kd, bd);
  let result: unknown;
  try {
    result = mapper(chunk, bufferRange);
  } catch (err) {
    if (err instanceof RangeMapperError) throw err;
    const message = err instanceof Error ? err.message : String(err);
    throw new RangeMapperError(name, kd, bd, `range mapper ${name} threw for the chunk ${formatSubrange(chunk)}: ${message}`, { cause: err });
  }
  const kind = (result as { kind?: unknown } | null)?.kind;
  if (kind !== 'subrange' && kind !== 'box' && kind !== 'region' && kind !== 'chunk') {
    throw new RangeMapperError(
      name, kd, bd,
      `range mapper ${name} returned ${describe(result)}, not a subrange, box or region (the kernel is ${dimsWord(kd)}, the buffer is ${dimsWord(bd)})`,
    );
  }
  const r = result as MapperResult;
  const dims = r.kind === 'region' || r.kind === 'box' ? r.dims : r.offset.length;
  if (dims !== bd) {
    throw new RangeMapperError(name, kd, bd, `range mapper ${name} returned a ${dimsWord(dims)} ${r.kind}, but the buffer is ${dimsWord(bd)} (the kernel is ${dimsWord(kd)})`);
  }
  // As in Celerity, a 0-dimensional buffer is always accessed whole: its one element.
  if (bd === 0) return regionOf(boxOfRange(bufferRange));
  if (r.kind === 'region') return intersection(r as Region<BD>, boxOfRange(bufferRange));
  // One box: clamp its bounds, then make the region once.
  const b = boxOf(r as Box<BD>);
  const clamped = clampedBox(b.min, b.max, bufferRange);
  return boxIsEmpty(clamped) ? emptyRegion(bd as BD) : regionOf(clamped);
}

/**
 * The box `[min, max)` clamped to a buffer of extent `bufferRange`; `min` and `max` may lie outside it
 * (negative, or beyond the end). For mappers that widen a chunk, like a stencil's neighbourhood.
 * @example clampedBox([-5, 90], [25, 130], range([128, 128])) // [(0,90),(25,128))
 */
export function clampedBox<D extends Dims>(min: readonly number[], max: readonly number[], bufferRange: Range<D>): Box<D> {
  checkExtent('clampedBox', bufferRange);
  checkBound('min', min, bufferRange.length);
  checkBound('max', max, bufferRange.length);
  return boxFromBounds(
    min.map((lo) => Math.max(0, lo)),
    max.map((hi, d) => Math.min(bufferRange[d]!, hi)),
  ) as Box<D>;
}

/** A buffer extent as the mappers receive it: 0 to 3 entries. Cheap: mappers run once per chunk. */
function checkExtent(op: string, bufferRange: unknown): void {
  if (!Array.isArray(bufferRange) || bufferRange.length > 3) {
    throw new GeometryError(`${op}: bufferRange must be the buffer's extent, 0 to 3 sizes (from range()), got ${describe(bufferRange)}`);
  }
}

/** One corner of {@link clampedBox}: integers (negative allowed), one per dimension of the buffer. */
function checkBound(name: string, bound: unknown, dims: number): void {
  if (!Array.isArray(bound) || bound.length !== dims) {
    throw new GeometryError(`clampedBox: ${name} must be an array of ${dims} integers, one per dimension of the ${dimsWord(dims)} buffer, got ${describe(bound)}`);
  }
  for (let d = 0; d < dims; d++) {
    const x: unknown = bound[d];
    if (typeof x !== 'number' || !Number.isSafeInteger(x)) throw new GeometryError(`clampedBox: ${name}[${d}] must be an integer (it may lie outside the buffer), got ${describe(x)}`);
  }
}

function assertFits(info: MapperInfo, kernelDims: Dims, bufferDims: Dims): void {
  const reason = info.mismatch(kernelDims, bufferDims);
  if (reason !== undefined) {
    throw new RangeMapperError(
      info.mapperName, kernelDims, bufferDims,
      `range mapper ${info.mapperName} ${reason}, got a ${dimsWord(kernelDims)} kernel and a ${dimsWord(bufferDims)} buffer`,
    );
  }
}

import { boxArea, boxContainsPoint, boxFromBounds, boxIsEmpty, boxOf, emptyBox, formatBox, type Box } from './box.js';
import type { Chunk } from './chunk.js';
import { checkCoords, checkSameDims, type Dims } from './dims.js';
import { GeometryError } from './errors.js';
import type { Id } from './id.js';
import { boxesOfSlabs, combineSlabs, POINT_FORM, slabsEqual, slabsOfBoxes, type SetOp, type Slabs } from './regionForm.js';
import type { Subrange } from './subrange.js';
import { describe } from './validate.js';

/**
 * A set of points of a 0-3 dimensional index space, held as disjoint boxes in one canonical form:
 * slabs along dimension 0 with equal neighbours merged, each slab's cross-section built the same way
 * along the next dimension; the boxes are sorted lexicographically by `min`. Equal sets therefore
 * have equal `boxes`, so `toEqual` and {@link equals} agree. The empty region has no boxes. A
 * 0-dimensional region is either empty or holds the one point `()` as its one box.
 *
 * Regions are what range mappers produce and what the task graph compares; build them with
 * {@link region} or {@link regionOf} and combine them with the free functions below.
 */
export interface Region<D extends Dims = Dims> {
  readonly kind: 'region';
  readonly dims: D;
  readonly boxes: readonly Box<D>[];
}

/** Anything that describes a set of points: a region, a box, a subrange or a chunk. */
export type IndexSet<D extends Dims = Dims> = Region<D> | Box<D> | Subrange<D> | Chunk<D>;

// Canonical forms of the regions this module made; a region from elsewhere (a structured clone) is rebuilt.
const forms = new WeakMap<Region, Slabs>();

function makeRegion<D extends Dims>(dims: D, slabs: Slabs): Region<D> {
  // A 0-dimensional form stands in a unit interval for the point (see POINT_FORM).
  const bounds = dims === 0 ? slabs.map(() => ({ min: [], max: [] })) : boxesOfSlabs(slabs);
  const boxes = Object.freeze(bounds.map((b) => boxFromBounds(b.min, b.max) as Box<D>));
  const r = Object.freeze({ kind: 'region', dims, boxes }) as Region<D>;
  forms.set(r, slabs);
  return r;
}

const EMPTY = ([0, 1, 2, 3] as const).map((dims) => makeRegion(dims, [])) as readonly Region[];

function fromSlabs<D extends Dims>(dims: D, slabs: Slabs): Region<D> {
  return slabs.length === 0 ? emptyRegion(dims) : makeRegion(dims, slabs);
}

/** The empty region of a dimensionality (always the same object). */
export function emptyRegion<D extends Dims>(dims: D): Region<D> {
  if (dims !== 0 && dims !== 1 && dims !== 2 && dims !== 3) throw new GeometryError(`emptyRegion dims must be 0, 1, 2 or 3, got ${describe(dims)}`);
  return EMPTY[dims] as Region<D>;
}

/**
 * The union of any number of index sets, in canonical form.
 * @throws {GeometryError} when a part's dimensionality is not `dims`.
 * @example region(2, [box([0, 0], [2, 10]), subrange([0, 0], [4, 2])]) // an L shape: 2 boxes
 */
export function region<D extends Dims>(dims: D, parts: Iterable<IndexSet<D>>): Region<D> {
  if (dims !== 0 && dims !== 1 && dims !== 2 && dims !== 3) throw new GeometryError(`region dims must be 0, 1, 2 or 3, got ${describe(dims)}`);
  if (typeof (parts as Partial<Iterable<unknown>> | null)?.[Symbol.iterator] !== 'function' || typeof parts === 'string') {
    throw new GeometryError(`region: parts must be an array (or other iterable) of regions, boxes, subranges or chunks, got ${describe(parts)}`);
  }
  const boxes: Box[] = [];
  let i = 0;
  for (const part of parts) {
    checkSameDims('region', { dims, noun: 'region' }, checkIndexSet('region', 'parts', part, i++));
    if (part.kind === 'region') boxes.push(...part.boxes);
    else {
      const b = boxOf(part);
      if (!boxIsEmpty(b)) boxes.push(b);
    }
  }
  return fromSlabs(dims, slabsOfBoxes(boxes, dims));
}

/** The points of a box, subrange or chunk as a region; a region is returned unchanged. */
export function regionOf<D extends Dims>(x: IndexSet<D>): Region<D> {
  const dims = checkIndexSet('regionOf', 'x', x).dims as D;
  if (x.kind === 'region') return x;
  // One box is its own canonical form: one slab per dimension.
  const b = boxOf(x);
  if (boxIsEmpty(b)) return emptyRegion(dims);
  let slabs: Slabs | null = dims === 0 ? POINT_FORM : null;
  for (let d = dims - 1; d >= 0; d--) slabs = [{ lo: b.min[d]!, hi: b.max[d]!, sub: slabs }];
  const own = Object.isFrozen(b) ? b : (boxFromBounds(b.min, b.max) as Box<D>);
  const r = Object.freeze({ kind: 'region', dims, boxes: Object.freeze([own]) }) as Region<D>;
  forms.set(r, slabs!);
  return r;
}

/** `a ∪ b`. @throws {GeometryError} when the dimensionalities differ. */
export function union<D extends Dims>(a: IndexSet<D>, b: IndexSet<D>): Region<D> {
  return combine('union', a, b);
}

/** `a ∩ b`. @throws {GeometryError} when the dimensionalities differ. */
export function intersection<D extends Dims>(a: IndexSet<D>, b: IndexSet<D>): Region<D> {
  return combine('intersection', a, b);
}

/** `a \ b`: the points of `a` that are not in `b`. @throws {GeometryError} when the dimensionalities differ. */
export function difference<D extends Dims>(a: IndexSet<D>, b: IndexSet<D>): Region<D> {
  return combine('difference', a, b);
}

/** Whether the set holds no point. */
export function isEmpty(x: IndexSet): boolean {
  checkIndexSet('isEmpty', 'x', x);
  return x.kind === 'region' ? x.boxes.length === 0 : boxIsEmpty(boxOf(x));
}

/** Number of points in the set. */
export function area(x: IndexSet): number {
  checkIndexSet('area', 'x', x);
  return x.kind === 'region' ? x.boxes.reduce((sum, b) => sum + boxArea(b), 0) : boxArea(boxOf(x));
}

/** Whether `a` and `b` hold the same points (a box and a region can be equal). */
export function equals<D extends Dims>(a: IndexSet<D>, b: IndexSet<D>): boolean {
  checkSameDims('equals', checkIndexSet('equals', 'a', a), checkIndexSet('equals', 'b', b));
  return slabsEqual(slabsOf(regionOf(a)), slabsOf(regionOf(b)));
}

/**
 * Whether `a ⊇ b`: every point of `b` (a set or a single point) lies in `a`.
 * @throws {GeometryError} when the dimensionalities differ.
 */
export function contains<D extends Dims>(a: IndexSet<D>, b: IndexSet<D> | Id<D>): boolean {
  const left = checkIndexSet('contains', 'a', a);
  if (Array.isArray(b)) {
    const p = checkCoords('contains: point b', b) as Id<D>;
    checkSameDims('contains', left, { dims: p.length, noun: 'point' });
    return regionOf(a).boxes.some((bx) => boxContainsPoint(bx, p));
  }
  checkSameDims('contains', left, checkIndexSet('contains', 'b (a set or a point)', b));
  return isEmpty(difference(b as IndexSet<D>, a));
}

/**
 * The smallest box holding every point of the set; the empty box for an empty set.
 * @throws {GeometryError} for an empty 0-dimensional set, which no box describes (see {@link emptyBox}).
 */
export function boundingBox<D extends Dims>(x: IndexSet<D>): Box<D> {
  checkIndexSet('boundingBox', 'x', x);
  if (x.kind !== 'region') return boxOf(x);
  if (x.boxes.length === 0) return emptyBox(x.dims);
  const min = x.boxes[0]!.min.map((_, d) => Math.min(...x.boxes.map((b) => b.min[d]!)));
  const max = x.boxes[0]!.max.map((_, d) => Math.max(...x.boxes.map((b) => b.max[d]!)));
  return boxFromBounds(min, max) as Box<D>;
}

/** Renders a region as `{[(0,0),(2,10)), [(2,0),(4,2))}`; the empty region is `{}`. */
export function formatRegion(r: Region): string {
  if ((r as Partial<Region> | null)?.kind !== 'region' || !Array.isArray(r.boxes)) {
    const kind = (r as { kind?: unknown } | null)?.kind;
    const given = kind === 'box' || kind === 'subrange' || kind === 'chunk' ? `a ${kind}` : describe(r);
    throw new GeometryError(`formatRegion: r must be a region (from region() or regionOf()), got ${given}; for a box, subrange or chunk pass regionOf(x)`);
  }
  return `{${r.boxes.map(formatBox).join(', ')}}`;
}

function combine<D extends Dims>(op: SetOp, a: IndexSet<D>, b: IndexSet<D>): Region<D> {
  const left = checkIndexSet(op, 'a', a);
  checkSameDims(op, left, checkIndexSet(op, 'b', b));
  const dims = left.dims as D;
  const ra = regionOf(a);
  const rb = regionOf(b);
  const sa = slabsOf(ra);
  const sb = slabsOf(rb);
  // Shortcuts that return an operand (regions are immutable) instead of rebuilding an equal one.
  if (sa.length === 0) return op === 'union' ? rb : ra;
  if (sb.length === 0) return op === 'intersection' ? rb : ra;
  const apart = sa[sa.length - 1]!.hi <= sb[0]!.lo || sb[sb.length - 1]!.hi <= sa[0]!.lo;
  if (apart && op !== 'union') return op === 'intersection' ? emptyRegion(dims) : ra;
  if (ra === rb || slabsEqual(sa, sb)) return op === 'difference' ? emptyRegion(dims) : ra;
  // A 0-dimensional form has one level, its stand-in interval (see POINT_FORM).
  return fromSlabs(dims, combineSlabs(sa, sb, op, Math.max(1, dims)));
}

function slabsOf(r: Region): Slabs {
  return forms.get(r) ?? slabsOfBoxes(r.boxes, r.dims);
}

/**
 * @internal The dimensionality and kind of an operand of `op`, checked: a region or box with `dims` 0-3, or a
 * subrange or chunk with an offset of 0-3 coordinates. Only the fields every operation reads first
 * are looked at, so the check stays cheap on the task graph's hot paths.
 * @throws {GeometryError} naming `op`, the operand and what was given.
 */
export function checkIndexSet(op: string, name: string, x: unknown, index?: number): { dims: number; noun: string } {
  const s = x as { kind?: unknown; dims?: unknown; offset?: unknown } | null | undefined;
  const kind = typeof x === 'object' ? s?.kind : undefined;
  let dims: unknown;
  if (kind === 'region' || kind === 'box') dims = s!.dims;
  else if ((kind === 'subrange' || kind === 'chunk') && Array.isArray(s!.offset)) dims = s!.offset.length;
  if (dims === 0 || dims === 1 || dims === 2 || dims === 3) return { dims, noun: kind as string };
  throw new GeometryError(`${op}: ${index === undefined ? name : `${name}[${index}]`} must be a region, box, subrange or chunk (made with region(), box(), subrange() or chunk()), got ${describe(x)}`);
}

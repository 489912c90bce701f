/**
 * The canonical form behind `Region` (internal to core/).
 *
 * A D-dimensional point set is described as slabs along dimension 0: the maximal runs `[lo, hi)` of
 * dimension-0 coordinates over which the set's (D-1)-dimensional cross-section is the same and not
 * empty. Each cross-section is described the same way along dimension 1, and so on; along the last
 * dimension a slab is simply an interval (`sub` is null). Maximal runs of a given set are unique, so
 * this form is unique: two sets are equal exactly when their forms are structurally equal. Flattening
 * it gives disjoint boxes sorted lexicographically by their `min` corner (dimension 0 first).
 *
 * Every operation sweeps the sorted cut points of its operands along one dimension, so a slab always
 * covers an elementary interval entirely or not at all, then merges equal neighbours to stay maximal.
 */

/**
 * The form of the one point of a 0-dimensional space. Zero dimensions have no runs, so the point is
 * stood in for by the unit interval of one dimension: the operations work on it unchanged (with one
 * level), and a 0-dimensional set's form is either this or empty.
 */
export const POINT_FORM: Slabs = Object.freeze([Object.freeze({ lo: 0, hi: 1, sub: null })]);

/** One run along a dimension; `sub` is the cross-section, null along the last dimension. */
export interface Slab {
  readonly lo: number;
  readonly hi: number;
  readonly sub: Slabs | null;
}

/** Slabs sorted by `lo`, disjoint, each non-empty, no two touching neighbours with equal `sub`. */
export type Slabs = readonly Slab[];

/** The corners of a non-empty box. */
export interface Bounds {
  readonly min: readonly number[];
  readonly max: readonly number[];
}

export type SetOp = 'union' | 'intersection' | 'difference';

/** The canonical form of the union of non-empty, possibly overlapping boxes of `dims` dimensions. */
export function slabsOfBoxes(boxes: readonly Bounds[], dims: number, d = 0): Slabs {
  if (dims === 0) return boxes.length > 0 ? POINT_FORM : [];
  const cuts = sortedUnique(boxes.flatMap((b) => [b.min[d]!, b.max[d]!]));
  const out: Slab[] = [];
  for (let i = 0; i + 1 < cuts.length; i++) {
    const lo = cuts[i]!;
    const hi = cuts[i + 1]!;
    const covering = boxes.filter((b) => b.min[d]! <= lo && hi <= b.max[d]!);
    if (covering.length > 0) append(out, lo, hi, d + 1 === dims ? null : slabsOfBoxes(covering, dims, d + 1));
  }
  return out;
}

/** `a op b` for two canonical forms with `level` dimensions left (the full dimensionality at the top). */
export function combineSlabs(a: Slabs, b: Slabs, op: SetOp, level: number): Slabs {
  if (a.length === 0) return op === 'union' ? b : a;
  if (b.length === 0) return op === 'intersection' ? b : a;
  const cuts = sortedUnique([...a, ...b].flatMap((s) => [s.lo, s.hi]));
  const out: Slab[] = [];
  let ia = 0;
  let ib = 0;
  for (let i = 0; i + 1 < cuts.length; i++) {
    const lo = cuts[i]!;
    while (ia < a.length && a[ia]!.hi <= lo) ia++;
    while (ib < b.length && b[ib]!.hi <= lo) ib++;
    const sa = ia < a.length && a[ia]!.lo <= lo ? a[ia] : undefined;
    const sb = ib < b.length && b[ib]!.lo <= lo ? b[ib] : undefined;
    const sub = cell(sa, sb, op, level);
    if (sub !== undefined) append(out, lo, cuts[i + 1]!, sub);
  }
  return out;
}

/** The cross-section of `op` over one elementary interval; undefined when it is empty. */
function cell(sa: Slab | undefined, sb: Slab | undefined, op: SetOp, level: number): Slabs | null | undefined {
  if (sa === undefined && sb === undefined) return undefined;
  if (level === 1) {
    const present = op === 'union' || (op === 'intersection' ? sa !== undefined && sb !== undefined : sb === undefined);
    return present ? null : undefined;
  }
  let sub: Slabs;
  if (sa === undefined) sub = op === 'union' ? sb!.sub! : [];
  else if (sb === undefined) sub = op === 'intersection' ? [] : sa.sub!;
  else sub = combineSlabs(sa.sub!, sb.sub!, op, level - 1);
  return sub.length > 0 ? sub : undefined;
}

/** The disjoint boxes of a canonical form, sorted lexicographically by `min`. */
export function boxesOfSlabs(slabs: Slabs): Bounds[] {
  const out: Bounds[] = [];
  for (const s of slabs) {
    if (s.sub === null) out.push({ min: [s.lo], max: [s.hi] });
    else for (const inner of boxesOfSlabs(s.sub)) out.push({ min: [s.lo, ...inner.min], max: [s.hi, ...inner.max] });
  }
  return out;
}

/** Structural equality of canonical forms, which is equality of the point sets. */
export function slabsEqual(a: Slabs | null, b: Slabs | null): boolean {
  if (a === b) return true;
  if (a === null || b === null || a.length !== b.length) return false;
  return a.every((s, i) => {
    const t = b[i]!;
    return s.lo === t.lo && s.hi === t.hi && slabsEqual(s.sub, t.sub);
  });
}

/** Appends a run, merging it into the previous one when they touch and have equal cross-sections. */
function append(out: Slab[], lo: number, hi: number, sub: Slabs | null): void {
  const last = out[out.length - 1];
  if (last !== undefined && last.hi === lo && slabsEqual(last.sub, sub)) out[out.length - 1] = { lo: last.lo, hi, sub: last.sub };
  else out.push({ lo, hi, sub });
}

function sortedUnique(values: number[]): number[] {
  values.sort((x, y) => x - y);
  return values.filter((v, i) => i === 0 || v !== values[i - 1]);
}

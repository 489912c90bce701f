import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { box, emptyBox, type Box } from '../src/core/box.js';
import { chunk } from '../src/core/chunk.js';
import type { Dims } from '../src/core/dims.js';
import { GeometryError } from '../src/core/errors.js';
import { id } from '../src/core/id.js';
import {
  area, boundingBox, contains, difference, emptyRegion, equals, formatRegion, intersection, isEmpty, region, regionOf, union, type Region,
} from '../src/core/region.js';
import { subrange } from '../src/core/subrange.js';

const corners = (r: Region): [number[], number[]][] => r.boxes.map((b) => [[...b.min], [...b.max]]);

describe('region known answers', () => {
  it('merges an L shape into two boxes, slabs along dimension 0 first', () => {
    const l = region(2, [box([0, 0], [4, 2]), box([0, 0], [2, 10])]);
    expect(corners(l)).toEqual([[[0, 0], [2, 10]], [[2, 0], [4, 2]]]);
    expect(formatRegion(l)).toBe('{[(0,0),(2,10)), [(2,0),(4,2))}');
    expect(area(l)).toBe(24);
  });

  it('merges touching and overlapping intervals in 1-D', () => {
    const r = region(1, [box([5], [8]), box([0], [3]), box([3], [4]), box([7], [10])]);
    expect(corners(r)).toEqual([[[0], [4]], [[5], [10]]]);
  });

  it('merges side-by-side boxes into one box', () => {
    expect(union(box([0, 0], [4, 2]), box([0, 2], [4, 5]))).toEqual(regionOf(box([0, 0], [4, 5])));
    expect(union(box([0, 0, 0], [2, 2, 2]), box([2, 0, 0], [3, 2, 2])).boxes).toEqual([box([0, 0, 0], [3, 2, 2])]);
  });

  it('cuts a hole out of a square as four boxes around it', () => {
    const ring = difference(box([0, 0], [4, 4]), box([1, 1], [3, 3]));
    expect(corners(ring)).toEqual([
      [[0, 0], [1, 4]],
      [[1, 0], [3, 1]],
      [[1, 3], [3, 4]],
      [[3, 0], [4, 4]],
    ]);
    expect(area(ring)).toBe(12);
    expect(union(ring, box([1, 1], [3, 3]))).toEqual(regionOf(box([0, 0], [4, 4])));
  });

  it('intersects two overlapping squares as one box', () => {
    expect(intersection(box([0, 0], [4, 4]), subrange([2, 3], [10, 10]))).toEqual(regionOf(box([2, 3], [4, 4])));
    expect(intersection(box([0, 0], [4, 4]), box([4, 0], [5, 4]))).toBe(emptyRegion(2));
  });

  it('has one empty value per dimensionality and treats empty boxes as empty', () => {
    expect(region(3, [])).toBe(emptyRegion(3));
    expect(region(2, [box([1, 1], [1, 5])])).toBe(emptyRegion(2));
    expect(difference(box([0], [3]), box([0], [5]))).toBe(emptyRegion(1));
    expect(isEmpty(emptyRegion(1))).toBe(true);
    expect(isEmpty(emptyBox(2))).toBe(true);
    expect(isEmpty(subrange([3], [1]))).toBe(false);
    expect(formatRegion(emptyRegion(2))).toBe('{}');
    expect(boundingBox(emptyRegion(2))).toBe(emptyBox(2));
  });

  it('answers containment of sets and points, equality across forms, and bounding boxes', () => {
    const l = region(2, [box([0, 0], [4, 2]), box([0, 0], [2, 10])]);
    expect(contains(l, box([1, 1], [2, 9]))).toBe(true);
    expect(contains(l, box([1, 1], [3, 9]))).toBe(false);
    expect(contains(l, id([3, 1]))).toBe(true);
    expect(contains(l, id([3, 2]))).toBe(false);
    expect(contains(l, emptyRegion(2))).toBe(true);
    expect(equals(box([2, 3], [4, 4]), region(2, [subrange([2, 3], [2, 1])]))).toBe(true);
    expect(equals(chunk([0], [4], [8]), box([0], [3]))).toBe(false);
    expect(boundingBox(l)).toEqual(box([0, 0], [4, 10]));
  });

  it('names both dimensionalities when operands differ', () => {
    const a = box([0, 0], [1, 1]) as Box<Dims>;
    const b = regionOf(box([0, 0, 0], [1, 1, 1])) as Region<Dims>;
    expect(() => union(a, b)).toThrow(new GeometryError('union needs operands of one dimensionality, got a 2-dimensional box and a 3-dimensional region'));
    expect(() => difference(b, a)).toThrow(new GeometryError('difference needs operands of one dimensionality, got a 3-dimensional region and a 2-dimensional box'));
    expect(() => region(2, [box([0], [1]) as Box<Dims> as Box<2>])).toThrow(
      new GeometryError('region needs operands of one dimensionality, got a 2-dimensional region and a 1-dimensional box'),
    );
    expect(() => contains(a, id([0]) as never)).toThrow(new GeometryError('contains needs operands of one dimensionality, got a 2-dimensional box and a 1-dimensional point'));
  });

  it('freezes regions and their box lists', () => {
    const r = union(box([0], [1]), box([4], [5]));
    expect(Object.isFrozen(r)).toBe(true);
    expect(Object.isFrozen(r.boxes)).toBe(true);
  });
});

// ---- property tests against a brute-force set-of-points model ----

/** Coordinates range over [0, SIDE] per dimension, so grids stay small enough to enumerate. */
const SIDE: Record<Dims, number> = { 0: 0, 1: 12, 2: 6, 3: 4 };

const boxArb = (dims: Dims): fc.Arbitrary<Box> =>
  fc.array(fc.tuple(fc.nat(SIDE[dims]), fc.nat(SIDE[dims])), { minLength: dims, maxLength: dims }).map((pairs) =>
    box(pairs.map(([a, b]) => Math.min(a, b)), pairs.map(([a, b]) => Math.max(a, b))),
  );
const boxesArb = (dims: Dims) => fc.array(boxArb(dims), { maxLength: 5 });
// 0-dimensional cases too: a 0-D box is the one point '' of the model, so a 0-D set is empty or that point.
const caseArb = fc.constantFrom<Dims>(0, 1, 2, 3).chain((dims) => fc.tuple(fc.constant(dims), boxesArb(dims), boxesArb(dims)));

function pointsOfBox(b: Box): string[] {
  let out: number[][] = [[]];
  for (let d = 0; d < b.dims; d++) {
    const next: number[][] = [];
    for (const p of out) for (let x = b.min[d]!; x < b.max[d]!; x++) next.push([...p, x]);
    out = next;
  }
  return b.max[0] === 0 ? [] : out.map((p) => p.join(','));
}

/** A model point back as coordinates: '' is the point () of a 0-dimensional space. */
const coordsOf = (p: string): number[] => (p === '' ? [] : p.split(',').map(Number));

const model = (boxes: readonly Box[]): Set<string> => new Set(boxes.flatMap(pointsOfBox));

/** The points of a region, failing if two of its boxes share a point. */
function pointsOf(r: Region): Set<string> {
  const all = r.boxes.flatMap(pointsOfBox);
  const set = new Set(all);
  expect(set.size).toBe(all.length);
  return set;
}

const sorted = (s: Set<string>): string[] => [...s].sort();
const lexLess = (a: readonly number[], b: readonly number[]): boolean => {
  const d = a.findIndex((x, i) => x !== b[i]);
  return d >= 0 && a[d]! < b[d]!;
};

describe('region algebra against a set-of-points model', () => {
  it('holds exactly the union of its parts in disjoint, sorted boxes with the matching area', () => {
    fc.assert(
      fc.property(caseArb, ([dims, boxes]) => {
        const r = region(dims, boxes);
        expect(sorted(pointsOf(r))).toEqual(sorted(model(boxes)));
        expect(area(r)).toBe(model(boxes).size);
        expect(isEmpty(r)).toBe(model(boxes).size === 0);
        for (let i = 1; i < r.boxes.length; i++) expect(lexLess(r.boxes[i - 1]!.min, r.boxes[i]!.min)).toBe(true);
      }),
    );
  });

  it('computes union, intersection and difference point for point', () => {
    fc.assert(
      fc.property(caseArb, ([dims, as, bs]) => {
        const a = region(dims, as);
        const b = region(dims, bs);
        const ma = model(as);
        const mb = model(bs);
        expect(sorted(pointsOf(union(a, b)))).toEqual(sorted(new Set([...ma, ...mb])));
        expect(sorted(pointsOf(intersection(a, b)))).toEqual(sorted(new Set([...ma].filter((p) => mb.has(p)))));
        expect(sorted(pointsOf(difference(a, b)))).toEqual(sorted(new Set([...ma].filter((p) => !mb.has(p)))));
      }),
    );
  });

  it('answers equals and contains as the model does', () => {
    fc.assert(
      fc.property(caseArb, ([dims, as, bs]) => {
        const a = region(dims, as);
        const b = region(dims, bs);
        const ma = model(as);
        const mb = model(bs);
        expect(equals(a, b)).toBe(ma.size === mb.size && [...ma].every((p) => mb.has(p)));
        expect(contains(a, b)).toBe([...mb].every((p) => ma.has(p)));
        for (const bx of bs) {
          for (const p of pointsOfBox(bx).slice(0, 3)) expect(contains(a, id(coordsOf(p)) as never)).toBe(ma.has(p));
        }
      }),
    );
  });

  it('gives equal point sets one structure, however they were built', () => {
    fc.assert(
      fc.property(caseArb, ([dims, as, bs]) => {
        const a = region(dims, as);
        const b = region(dims, bs);
        // Rebuilt from single points, from its own boxes, in reverse order, and through the algebra.
        const unitBoxes = sorted(model(as)).map((p) => {
          const min = coordsOf(p);
          return box(min, min.map((x) => x + 1));
        });
        expect(region(dims, unitBoxes)).toEqual(a);
        expect(region(dims, a.boxes)).toEqual(a);
        expect(region(dims, [...as].reverse())).toEqual(a);
        expect(union(difference(a, b), intersection(a, b))).toEqual(a);
        expect(union(a, b)).toEqual(union(b, a));
        expect(intersection(a, b)).toEqual(intersection(b, a));
        expect(union(difference(a, b), b)).toEqual(union(a, b));
        expect(equals(union(a, b), union(b, a))).toBe(true);
      }),
    );
  });

  it('bounds every point with the smallest box', () => {
    fc.assert(
      fc.property(caseArb, ([dims, as]) => {
        const pts = [...model(as)].map((p) => coordsOf(p));
        // No box describes an empty 0-D set (a 0-D box is its one point).
        if (dims === 0 && pts.length === 0) {
          expect(() => boundingBox(region(0, as))).toThrow(/there is no empty 0-dimensional box/);
          return;
        }
        const bb = boundingBox(region(dims, as));
        if (pts.length === 0) {
          expect(bb).toBe(emptyBox(dims));
          return;
        }
        const min = Array.from({ length: dims }, (_, d) => Math.min(...pts.map((p) => p[d]!)));
        const max = Array.from({ length: dims }, (_, d) => Math.max(...pts.map((p) => p[d]!)) + 1);
        expect(bb).toEqual(box(min, max));
      }),
    );
  });
});

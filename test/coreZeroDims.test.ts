import { describe, expect, expectTypeOf, it } from 'vitest';
import { boxArea, boxContainsPoint, boxIntersection, boxIsEmpty, boxOfRange, boxSubrange, clampBox, formatBox } from '../src/core/box.js';
import { chunkSubrange } from '../src/core/chunk.js';
import { rangeSize } from '../src/core/range.js';
import {
  area, box, boundingBox, boxOf, chunk, contains, difference, emptyBox, emptyRegion, equals, formatRegion, GeometryError, id, intersection, isEmpty, range, region, regionOf,
  subrange, union, type Box, type Chunk, type Range, type Region,
} from '../src/index.js';

// A 0-dimensional index space has exactly one point, (): Celerity's scalars and reduction results.

describe('0-dimensional values', () => {
  it('makes ranges, points, subranges and chunks of no coordinates', () => {
    const r = range([]);
    expectTypeOf(r).toEqualTypeOf<Range<0>>();
    expect(r).toEqual([]);
    expect(rangeSize(r)).toBe(1);
    expect(id([])).toEqual([]);
    expect(subrange([], [])).toEqual({ kind: 'subrange', offset: [], range: [] });
    const c = chunk([], [], []);
    expectTypeOf(c).toEqualTypeOf<Chunk<0>>();
    expect(chunkSubrange(c)).toEqual(subrange([], []));
    expect(() => chunk([], [1], [])).toThrow(new GeometryError('chunk offset () is 0-dimensional but its range (1) is 1-dimensional'));
  });

  it('has one box, the point (), which is never empty and always the same object', () => {
    const p = box([], []);
    expectTypeOf(p).toEqualTypeOf<Box<0>>();
    expect(p).toEqual({ kind: 'box', dims: 0, min: [], max: [] });
    expect(boxOf(subrange([], []))).toBe(p);
    expect(boxOf(chunk([], [], []))).toBe(p);
    expect(boxOfRange(range([]))).toBe(p);
    expect(boxIsEmpty(p)).toBe(false);
    expect(boxArea(p)).toBe(1);
    expect(boxIntersection(p, p)).toBe(p);
    expect(clampBox(p, range([]))).toBe(p);
    expect(boxContainsPoint(p, id([]))).toBe(true);
    expect(boxSubrange(p)).toEqual(subrange([], []));
    expect(formatBox(p)).toBe('[(),())');
    expect(Object.isFrozen(p)).toBe(true);
  });

  it('has no empty box: an empty 0-dimensional set is the empty region', () => {
    expect(() => emptyBox(0)).toThrow(
      new GeometryError('there is no empty 0-dimensional box: a 0-dimensional box always holds its one point; use emptyRegion(0) for an empty 0-dimensional set'),
    );
    expect(emptyRegion(0)).toEqual({ kind: 'region', dims: 0, boxes: [] });
    expect(emptyRegion(0)).toBe(emptyRegion(0));
    expect(isEmpty(emptyRegion(0))).toBe(true);
    expect(area(emptyRegion(0))).toBe(0);
    expect(formatRegion(emptyRegion(0))).toBe('{}');
  });
});

describe('0-dimensional region algebra', () => {
  const full: Region<0> = regionOf(box([], []));
  const none = emptyRegion(0);

  it('holds either nothing or the one point, in one canonical form', () => {
    expect(full).toEqual({ kind: 'region', dims: 0, boxes: [box([], [])] });
    expect(region(0, [box([], []), subrange([], []), chunk([], [], [])])).toEqual(full);
    expect(region(0, [])).toBe(none);
    expect(region(0, [none, full])).toEqual(full);
    expect(area(full)).toBe(1);
    expect(formatRegion(full)).toBe('{[(),())}');
    expect(boundingBox(full)).toBe(box([], []));
    expect(() => boundingBox(none)).toThrow(/^there is no empty 0-dimensional box/);
  });

  it('combines as sets of at most one point', () => {
    expect(union(full, none)).toEqual(full);
    expect(union(none, none)).toBe(none);
    expect(union(box([], []), box([], []))).toEqual(full);
    expect(intersection(full, box([], []))).toEqual(full);
    expect(intersection(full, none)).toEqual(none);
    expect(difference(full, none)).toEqual(full);
    expect(difference(full, box([], []))).toBe(none);
    expect(difference(none, full)).toBe(none);
    expect(equals(full, box([], []))).toBe(true);
    expect(equals(full, none)).toBe(false);
    expect(contains(full, none)).toBe(true);
    expect(contains(none, full)).toBe(false);
    expect(contains(full, id([]))).toBe(true);
    expect(contains(none, id([]))).toBe(false);
  });

  it('refuses to combine a 0-dimensional set with one of another dimensionality', () => {
    expect(() => union(full, box([0], [1]) as never)).toThrow(
      new GeometryError('union needs operands of one dimensionality, got a 0-dimensional region and a 1-dimensional box'),
    );
    expect(() => region(0, [box([0], [1]) as never])).toThrow(
      new GeometryError('region needs operands of one dimensionality, got a 0-dimensional region and a 1-dimensional box'),
    );
  });
});

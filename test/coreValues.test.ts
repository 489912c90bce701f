import { describe, expect, expectTypeOf, it } from 'vitest';
import { chunk, chunkSubrange, type Chunk } from '../src/core/chunk.js';
import { GeometryError } from '../src/core/errors.js';
import { id, zeroId, type Id } from '../src/core/id.js';
import { range, rangeEquals, rangeSize, type Range } from '../src/core/range.js';
import { formatSubrange, subrange, type Subrange } from '../src/core/subrange.js';

describe('range', () => {
  it('keeps the extents as a frozen tuple whose length is the dimensionality', () => {
    const r = range([128, 64]);
    expect([...r]).toEqual([128, 64]);
    expect(Object.isFrozen(r)).toBe(true);
    expectTypeOf(r).toEqualTypeOf<Range<2>>();
    expectTypeOf(range([1, 2, 3])).toEqualTypeOf<Range<3>>();
  });

  it('allows zero extents and counts items as the product of extents', () => {
    expect(rangeSize(range([4, 0]))).toBe(0);
    expect(rangeSize(range([4, 5, 6]))).toBe(120);
    expect(rangeEquals(range([4, 5]), range([4, 5]))).toBe(true);
    expect(rangeEquals(range([4, 5]), range([4, 5, 1]))).toBe(false);
  });

  it('rejects negative, fractional, missing and surplus extents with the offending entry', () => {
    expect(() => range([4, -1])).toThrow(new GeometryError('range[1] must be a non-negative integer, got -1'));
    expect(() => range([1.5])).toThrow(new GeometryError('range[0] must be a non-negative integer, got 1.5'));
    expect(() => range([1, 2, 3, 4])).toThrow(new GeometryError('range must be an array of 0 to 3 coordinates, got an array of length 4'));
    expect(() => range('4' as never)).toThrow(new GeometryError("range must be an array of 0 to 3 coordinates, got '4'"));
  });

  it('is not interchangeable with a point at the type level', () => {
    expectTypeOf<Range<2>>().not.toMatchTypeOf<Id<2>>();
    expectTypeOf<Id<2>>().not.toMatchTypeOf<Range<2>>();
  });
});

describe('id', () => {
  it('makes frozen points and the origin of each dimensionality', () => {
    const p = id([5, 100]);
    expect([...p]).toEqual([5, 100]);
    expect(Object.isFrozen(p)).toBe(true);
    expect([...zeroId(3)]).toEqual([0, 0, 0]);
    expectTypeOf(p).toEqualTypeOf<Id<2>>();
  });

  it('rejects negative coordinates', () => {
    expect(() => id([0, -3])).toThrow(new GeometryError('id[1] must be a non-negative integer, got -3'));
  });
});

describe('subrange', () => {
  it('holds an offset and an extent of one dimensionality', () => {
    const s = subrange([32, 0, 32], [32, 128, 32]);
    expect(s).toEqual({ kind: 'subrange', offset: [32, 0, 32], range: [32, 128, 32] });
    expect(Object.isFrozen(s)).toBe(true);
    expectTypeOf(s).toEqualTypeOf<Subrange<3>>();
    expect(formatSubrange(s)).toBe('offset (32,0,32) range (32,128,32)');
  });

  it('names both dimensionalities when offset and range differ in length', () => {
    expect(() => subrange([1, 2], [3])).toThrow(new GeometryError('subrange offset (1,2) is 2-dimensional but its range (3) is 1-dimensional'));
  });
});

describe('chunk', () => {
  it('holds offset, range and global size, and converts to its subrange', () => {
    const c = chunk([5, 100], [10, 20], [128, 128]);
    expect(c).toEqual({ kind: 'chunk', offset: [5, 100], range: [10, 20], globalSize: [128, 128] });
    expectTypeOf(c).toEqualTypeOf<Chunk<2>>();
    expect(chunkSubrange(c)).toEqual(subrange([5, 100], [10, 20]));
  });

  it('rejects a chunk larger than its global size, or of another dimensionality', () => {
    expect(() => chunk([0, 0], [129, 1], [128, 1])).toThrow(new GeometryError('chunk offset (0,0) range (129,1) is larger than its globalSize (128,1)'));
    expect(() => chunk([0, 0], [1, 1], [4])).toThrow(new GeometryError('chunk offset (0,0) range (1,1) is 2-dimensional but its globalSize (4) is 1-dimensional'));
    expect(chunk([100], [28], [128]).range).toEqual([28]);
  });

  it('accepts a chunk that ends past its global size, as a kernel launched with an offset has', () => {
    expect(chunk([100], [29], [128])).toEqual({ kind: 'chunk', offset: [100], range: [29], globalSize: [128] });
  });
});

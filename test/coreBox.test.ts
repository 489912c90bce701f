import { describe, expect, it } from 'vitest';
import {
  box, boxArea, boxContainsPoint, boxIntersection, boxIsEmpty, boxOf, boxOfRange, boxSubrange, clampBox, emptyBox, formatBox,
} from '../src/core/box.js';
import { chunk } from '../src/core/chunk.js';
import { GeometryError } from '../src/core/errors.js';
import { id } from '../src/core/id.js';
import { range } from '../src/core/range.js';
import { subrange } from '../src/core/subrange.js';

describe('box', () => {
  it('holds the half-open corners and renders as [min,max)', () => {
    const b = box([0, 90], [25, 128]);
    expect(b).toEqual({ kind: 'box', dims: 2, min: [0, 90], max: [25, 128] });
    expect(Object.isFrozen(b)).toBe(true);
    expect(formatBox(b)).toBe('[(0,90),(25,128))');
    expect(boxArea(b)).toBe(25 * 38);
  });

  it('normalizes every empty box to the one canonical empty box of its dimensionality', () => {
    expect(box([3, 5], [3, 9])).toBe(emptyBox(2));
    expect(box([7, 5], [3, 9])).toBe(emptyBox(2));
    expect(boxOf(subrange([4, 4, 4], [1, 0, 1]))).toBe(emptyBox(3));
    expect(emptyBox(1)).toEqual({ kind: 'box', dims: 1, min: [0], max: [0] });
    expect(boxIsEmpty(emptyBox(2))).toBe(true);
    expect(boxIsEmpty(box([0, 0], [1, 1]))).toBe(false);
    expect(boxArea(emptyBox(3))).toBe(0);
  });

  it('converts to and from subranges and chunks', () => {
    expect(boxOf(subrange([64, 32], [32, 4]))).toEqual(box([64, 32], [96, 36]));
    expect(boxOf(chunk([1], [2], [8]))).toEqual(box([1], [3]));
    expect(boxSubrange(box([64, 32], [96, 36]))).toEqual(subrange([64, 32], [32, 4]));
    expect(boxSubrange(emptyBox(2))).toEqual(subrange([0, 0], [0, 0]));
    expect(boxOfRange(range([4, 5]))).toEqual(box([0, 0], [4, 5]));
  });

  it('intersects boxes, clamps to a buffer and tests points', () => {
    expect(boxIntersection(box([0, 0], [10, 10]), box([5, 8], [20, 9]))).toEqual(box([5, 8], [10, 9]));
    expect(boxIntersection(box([0, 0], [5, 5]), box([5, 0], [9, 5]))).toBe(emptyBox(2));
    expect(clampBox(box([100, 2], [140, 3]), range([128, 128]))).toEqual(box([100, 2], [128, 3]));
    expect(clampBox(box([130], [140]), range([128]))).toBe(emptyBox(1));
    expect(boxContainsPoint(box([0, 90], [25, 128]), id([24, 90]))).toBe(true);
    expect(boxContainsPoint(box([0, 90], [25, 128]), id([25, 90]))).toBe(false);
  });

  it('rejects corners of different dimensionality and boxes of different dimensionality', () => {
    expect(() => box([0, 0], [1])).toThrow(new GeometryError('box min (0,0) is 2-dimensional but its max (1) is 1-dimensional'));
    expect(() => boxIntersection(box([0], [1]) as never, box([0, 0], [1, 1]) as never)).toThrow(
      new GeometryError('boxIntersection needs operands of one dimensionality, got a 1-dimensional box and a 2-dimensional box'),
    );
  });
});

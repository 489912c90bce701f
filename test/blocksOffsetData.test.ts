import { describe, it, expect, expectTypeOf } from 'vitest';
import fc from 'fast-check';
import { OptionError } from '../src/core/errors.js';
import { subdivide } from '../src/blocks/blockScheduler.js';
import { maxSubsetElements, offsetData, offsetDataFrom, subset } from '../src/blocks/offsetData.js';

type Breakpoints = [t: number, v: number][];

/** Three PCF-like objects with 3, 2 and 3 breakpoints, as in the seed's offsets figure. */
const objects: Breakpoints[] = [
  [[0, 3], [1, 1], [2, 0]],
  [[0, 2], [1.5, 0]],
  [[0, 5], [0.5, 4], [4, 0]],
];
const flatten = (objs: Breakpoints[]) =>
  offsetDataFrom(objs, (f) => f.length, [Float64Array, Float32Array] as const, (f, e, out) => {
    const [t, v] = f[e] as [number, number];
    out[0] = t;
    out[1] = v;
  });

describe('offsetDataFrom', () => {
  it('flattens variable-length objects into offsets and one channel per field', () => {
    const data = flatten(objects);
    expect(data.count).toBe(3);
    expect(Array.from(data.offsets)).toEqual([0, 3, 5, 8]);
    expect(Array.from(data.channels[0])).toEqual([0, 1, 2, 0, 1.5, 0, 0.5, 4]);
    expect(Array.from(data.channels[1])).toEqual([3, 1, 0, 2, 0, 5, 4, 0]);
    expectTypeOf(data.channels[0]).toEqualTypeOf<Float64Array<ArrayBuffer>>();
    expectTypeOf(data.channels[1]).toEqualTypeOf<Float32Array<ArrayBuffer>>();
  });

  it('handles no objects and empty objects', () => {
    expect(Array.from(flatten([]).offsets)).toEqual([0]);
    expect(Array.from(flatten([[], [[0, 1]], []]).offsets)).toEqual([0, 0, 1, 1]);
  });

  it('rejects a bad size and an element function that leaves a field unset', () => {
    expect(() => offsetDataFrom([1, 2], (x) => x - 2, [Float64Array], () => {})).toThrow(
      new OptionError('sizeFn must return an integer >= 0, got -1 for object 0'),
    );
    expect(() => offsetDataFrom([1, 2], () => 1, [Float64Array, Float64Array], (x, _e, out) => { out[0] = x; })).toThrow(
      new OptionError('elementFn left field 1 of element 0 of object 0 unset'),
    );
  });
});

describe('offsetData', () => {
  it('adopts existing arrays after checking the layout', () => {
    const t = new Float64Array(3);
    const data = offsetData(new Float64Array([0, 2, 3]), [t]);
    expect([data.count, data.channels[0] === t]).toEqual([2, true]);
  });

  it('rejects offsets that do not start at 0, decrease, or disagree with a channel length', () => {
    expect(() => offsetData(new Float64Array([1, 2]), [])).toThrow(new OptionError('offsets[0] must be 0, got 1'));
    expect(() => offsetData(new Float64Array([0, 3, 2]), [])).toThrow(
      new OptionError('offsets must be non-decreasing integers, got offsets[1] = 3 and offsets[2] = 2'),
    );
    expect(() => offsetData(new Float64Array([0, 3]), [new Float32Array(2)])).toThrow(new OptionError('channel 0 has 2 elements but offsets end at 3'));
    expect(() => offsetData(new Float64Array(0), [])).toThrow(new OptionError('offsets must be a non-empty Float64Array, got a Float64Array'));
  });
});

describe('subset', () => {
  it('re-indexes a range of objects from 0 with rebased offsets', () => {
    const sub = subset(flatten(objects), 1, 2);
    expect(sub.count).toBe(2);
    expect(Array.from(sub.offsets)).toEqual([0, 2, 5]);
    expect(Array.from(sub.channels[0])).toEqual([0, 1.5, 0, 0.5, 4]);
    expect(Array.from(sub.channels[1])).toEqual([2, 0, 5, 4, 0]);
    expect(Array.from(subset(flatten(objects), 3, 0).offsets)).toEqual([0]);
  });

  it('returns channel views over the same memory, not copies', () => {
    const data = flatten(objects);
    const sub = subset(data, 2, 1);
    expect(sub.channels[0].buffer).toBe(data.channels[0].buffer);
    expect(sub.channels[0].byteOffset).toBe(5 * Float64Array.BYTES_PER_ELEMENT);
    sub.channels[1][0] = 9;
    expect(data.channels[1][5]).toBe(9);
  });

  it('rejects a range outside the objects', () => {
    const data = flatten(objects);
    expect(() => subset(data, 4, 0)).toThrow(new OptionError('first must be an integer in [0, 3], got 4'));
    expect(() => subset(data, 1, 3)).toThrow(new OptionError('count must be an integer in [0, 2], got 3'));
  });

  it('gives each object of the range the elements it had in the whole data (property)', () => {
    const arb = fc
      .array(fc.array(fc.tuple(fc.double({ noNaN: true }), fc.integer()), { maxLength: 6 }), { maxLength: 12 })
      .chain((objs) => fc.tuple(fc.constant(objs), fc.integer({ min: 0, max: objs.length })))
      .chain(([objs, first]) => fc.tuple(fc.constant(objs), fc.constant(first), fc.integer({ min: 0, max: objs.length - first })));
    fc.assert(
      fc.property(arb, ([objs, first, count]) => {
        const sub = subset(flatten(objs), first, count);
        for (let k = 0; k < count; k++) {
          const lo = sub.offsets[k] as number;
          const hi = sub.offsets[k + 1] as number;
          const obj = objs[first + k] as Breakpoints;
          expect(hi - lo).toBe(obj.length);
          expect(Array.from(sub.channels[0].subarray(lo, hi))).toEqual(obj.map(([t]) => t));
        }
      }),
    );
  });
});

describe('maxSubsetElements', () => {
  it('finds the largest element count over the bands, for sizing device arrays once', () => {
    const data = flatten(objects);
    expect(maxSubsetElements(data, subdivide(2, 3))).toBe(5); // [0,1] -> 5, [2,2] -> 3
    expect(maxSubsetElements(data, subdivide(1, 3))).toBe(3);
    expect(maxSubsetElements(data, [])).toBe(0);
  });

  it('rejects a band past the last object', () => {
    expect(() => maxSubsetElements(flatten(objects), [{ first: 2, last: 3 }])).toThrow(
      new OptionError('band.last must be an integer in [2, 2], got 3'),
    );
  });
});

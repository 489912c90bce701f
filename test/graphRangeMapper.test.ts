import { describe, expect, expectTypeOf, it } from 'vitest';
import { box } from '../src/core/box.js';
import { chunk, type Chunk } from '../src/core/chunk.js';
import { RangeMapperError } from '../src/core/errors.js';
import { range, type Range } from '../src/core/range.js';
import { emptyRegion, region, regionOf, type Region } from '../src/core/region.js';
import { subrange } from '../src/core/subrange.js';
import { neighborhood, oneToOne } from '../src/graph/mappers.js';
import { applyRangeMapper, checkRangeMapper, clampedBox, defineRangeMapper, mapperName, type RangeMapper } from '../src/graph/rangeMapper.js';

const c2 = chunk([4, 0], [4, 8], [8, 8]);
const buf2 = range([8, 8]);

describe('applyRangeMapper', () => {
  it('returns a built-in mapper result as a canonical region', () => {
    expect(applyRangeMapper(neighborhood([10, 10]), chunk([5, 100], [10, 20], [128, 128]), range([128, 128]))).toEqual(regionOf(box([0, 90], [25, 128])));
  });

  it('accepts a plain function of the chunk alone and clamps its subrange to the buffer', () => {
    const below = (c: Chunk<2>) => subrange([c.offset[0], 0], [c.range[0] + 10, 3]);
    expect(applyRangeMapper(below, c2, buf2)).toEqual(regionOf(box([4, 0], [8, 3])));
  });

  it('accepts boxes, regions and chunks as results', () => {
    const twoBoxes = (_c: Chunk<1>, r: Range<1>) => region(1, [box([0], [1]), box([r[0] - 1], [r[0] + 5])]);
    expect(applyRangeMapper(twoBoxes, chunk([0], [1], [1]), range([6])).boxes).toEqual([box([0], [1]), box([5], [6])]);
    expect(applyRangeMapper((c: Chunk<2>) => c, c2, buf2)).toEqual(regionOf(box([4, 0], [8, 8])));
    expect(applyRangeMapper(() => box([9, 9], [12, 12]), c2, buf2)).toBe(emptyRegion(2));
  });

  it('names the mapper and both dimensionalities when the result has the wrong dimensionality', () => {
    const flat = function rows(c: Chunk<2>) {
      return subrange([c.offset[0]], [c.range[0]]);
    };
    expect(() => applyRangeMapper(flat as unknown as RangeMapper<2, 2>, c2, buf2)).toThrow(
      new RangeMapperError("'rows'", 2, 2, "range mapper 'rows' returned a 1-dimensional subrange, but the buffer is 2-dimensional (the kernel is 2-dimensional)"),
    );
  });

  it('rejects a result that is not a subrange, box or region', () => {
    expect(() => applyRangeMapper((() => [0, 4]) as unknown as RangeMapper<2, 2>, c2, buf2)).toThrow(
      new RangeMapperError('(anonymous)', 2, 2, 'range mapper (anonymous) returned an array of length 2, not a subrange, box or region (the kernel is 2-dimensional, the buffer is 2-dimensional)'),
    );
  });

  it('wraps an error the mapper throws, with the chunk and the original as cause', () => {
    const boom = new Error('no');
    const failing = function failing(): never {
      throw boom;
    };
    let caught: unknown;
    try {
      applyRangeMapper(failing, c2, buf2);
    } catch (err) {
      caught = err;
    }
    expect(caught).toEqual(new RangeMapperError("'failing'", 2, 2, "range mapper 'failing' threw for the chunk offset (4,0) range (4,8): no"));
    expect((caught as Error).cause).toBe(boom);
  });

  it('checks a built-in against the dimensionalities before running it', () => {
    expect(() => applyRangeMapper(oneToOne() as unknown as RangeMapper<2, 3>, c2, range([8, 8, 8]))).toThrow(
      'range mapper oneToOne() needs a kernel and a buffer of one dimensionality, got a 2-dimensional kernel and a 3-dimensional buffer',
    );
  });
});

describe('defineRangeMapper', () => {
  const rows = defineRangeMapper(
    'rows',
    (k, b) => (k === 1 && b === 2 ? undefined : 'needs a 1-dimensional kernel and a 2-dimensional buffer'),
    (c: Chunk<1>, r: Range<2>) => subrange([c.offset[0], 0], [c.range[0], r[1]]),
  );

  it('names the mapper and reports a mismatch before any chunk runs', () => {
    expect(mapperName(rows)).toBe('rows');
    expect(() => checkRangeMapper(rows, 2, 2)).toThrow(
      new RangeMapperError('rows', 2, 2, 'range mapper rows needs a 1-dimensional kernel and a 2-dimensional buffer, got a 2-dimensional kernel and a 2-dimensional buffer'),
    );
    expect(applyRangeMapper(rows, chunk([2], [3], [8]), range([8, 4]))).toEqual(regionOf(box([2, 0], [5, 4])));
  });

  it('names plain functions by their name, or as anonymous', () => {
    expect(mapperName(function halo() { return box([0], [1]); })).toBe("'halo'");
    expect(mapperName([() => box([0], [1])][0]!)).toBe('(anonymous)');
  });
});

describe('clampedBox', () => {
  it('clamps corners outside the buffer at both edges', () => {
    expect(clampedBox([-5, 90], [25, 130], range([128, 128]))).toEqual(box([0, 90], [25, 128]));
    expect(clampedBox([-5], [-1], range([4]))).toEqual(box([0], [0]));
  });
});

describe('types', () => {
  it('lets built-ins serve matching dimensionalities only', () => {
    const ok: RangeMapper<2, 2> = oneToOne();
    expectTypeOf(ok).toMatchTypeOf<RangeMapper<2, 2>>();
    // @ts-expect-error a one-to-one mapping cannot serve a 2-D kernel over a 3-D buffer
    const bad: RangeMapper<2, 3> = oneToOne();
    expect(bad).toBe(oneToOne());
    expectTypeOf(applyRangeMapper(ok, c2, buf2)).toEqualTypeOf<Region<2>>();
  });
});

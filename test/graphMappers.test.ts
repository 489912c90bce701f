import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { box, boxSubrange, emptyBox, type Box } from '../src/core/box.js';
import { chunk, type Chunk } from '../src/core/chunk.js';
import type { Dims } from '../src/core/dims.js';
import { GeometryError, OptionError, RangeMapperError } from '../src/core/errors.js';
import { range, type Range } from '../src/core/range.js';
import { area, contains, emptyRegion, equals, region, regionOf, union, type Region } from '../src/core/region.js';
import { subrange } from '../src/core/subrange.js';
import { split } from '../src/graph/split.js';
import { all, evenSplit, fixed, neighborhood, oneToOne, slice } from '../src/graph/mappers.js';
import { checkRangeMapper, type AnyRangeMapper, type RangeMapper } from '../src/graph/rangeMapper.js';

const corners = (r: Region): [number[], number[]][] => r.boxes.map((b) => [[...b.min], [...b.max]]);

describe('oneToOne', () => {
  it('maps chunk offset (64,32) range (32,4) to the same subrange', () => {
    const b = oneToOne()(chunk([64, 32], [32, 4], [128, 128]), range([128, 128]));
    expect(boxSubrange(b)).toEqual(subrange([64, 32], [32, 4]));
  });

  it('clamps at both edges of the buffer', () => {
    const buf = range([100]);
    expect(oneToOne()(chunk([0], [8], [160]), buf)).toEqual(box([0], [8]));
    expect(oneToOne()(chunk([96], [8], [160]), buf)).toEqual(box([96], [100]));
    expect(oneToOne()(chunk([120], [8], [160]), buf)).toBe(emptyBox(1));
  });
});

describe('slice', () => {
  it('maps chunk offset (32,32,32) range (32,32,32) of a 128³ buffer to offset (32,0,32) range (32,128,32) for slice(1)', () => {
    const b = slice(1)(chunk([32, 32, 32], [32, 32, 32], [128, 128, 128]), range([128, 128, 128]));
    expect(boxSubrange(b)).toEqual(subrange([32, 0, 32], [32, 128, 32]));
  });

  it('spans the sliced dimension from 0 to the end and clamps the others at both edges', () => {
    const buf = range([128, 128]);
    expect(slice(0)(chunk([64, 0], [8, 16], [160, 160]), buf)).toEqual(box([0, 0], [128, 16]));
    expect(slice(0)(chunk([8, 120], [8, 16], [160, 160]), buf)).toEqual(box([0, 120], [128, 128]));
    expect(slice(1)(chunk([130, 5], [8, 16], [160, 160]), buf)).toBe(emptyBox(2));
    expect(slice(1)(chunk([3, 5], [0, 16], [160, 160]), buf)).toBe(emptyBox(2));
  });

  it('rejects a dimension outside 0..2', () => {
    expect(() => slice(3)).toThrow(new OptionError('slice dim must be an integer in [0, 2], got 3'));
  });
});

describe('neighborhood', () => {
  it('maps neighborhood([10,10]) on chunk offset (5,100) range (10,20) of a 128×128 buffer to [(0,90),(25,128))', () => {
    expect(neighborhood([10, 10])(chunk([5, 100], [10, 20], [128, 128]), range([128, 128]))).toEqual(box([0, 90], [25, 128]));
  });

  it('widens without clamping inside the buffer and clamps at the opposite corner too', () => {
    const buf = range([128, 128]);
    expect(neighborhood([3, 2])(chunk([50, 60], [8, 5], [128, 128]), buf)).toEqual(box([47, 58], [61, 67]));
    expect(neighborhood([3, 2])(chunk([120, 0], [8, 5], [128, 128]), buf)).toEqual(box([117, 0], [128, 7]));
    expect(neighborhood([1])(chunk([0], [4], [8]), range([8]))).toEqual(box([0], [5]));
    expect(neighborhood([1])(chunk([4], [4], [8]), range([8]))).toEqual(box([3], [8]));
    expect(neighborhood([1, 1, 1])(chunk([0, 0, 0], [1, 0, 1], [4, 4, 4]), range([4, 4, 4]))).toBe(emptyBox(3));
  });

  it("leaves out the diagonal corners with the 'alongAxes' shape", () => {
    const inner = neighborhood([1, 1], 'alongAxes')(chunk([4, 4], [2, 2], [10, 10]), range([10, 10]));
    expect(corners(inner)).toEqual([[[3, 4], [4, 6]], [[4, 3], [6, 7]], [[6, 4], [7, 6]]]);
    const cross = neighborhood([1, 1, 1], 'alongAxes')(chunk([2, 2, 2], [1, 1, 1], [5, 5, 5]), range([5, 5, 5]));
    expect(area(cross)).toBe(7);
  });

  it("clamps the 'alongAxes' shape at both edges", () => {
    const buf = range([10, 10]);
    const low = neighborhood([1, 1], 'alongAxes')(chunk([0, 0], [2, 2], [10, 10]), buf);
    expect(corners(low)).toEqual([[[0, 0], [2, 3]], [[2, 0], [3, 2]]]);
    const high = neighborhood([1, 1], 'alongAxes')(chunk([8, 8], [2, 2], [10, 10]), buf);
    expect(corners(high)).toEqual([[[7, 8], [8, 10]], [[8, 7], [10, 10]]]);
  });

  it('rejects a negative extent and an unknown shape', () => {
    expect(() => neighborhood([1, -1])).toThrow(new GeometryError('neighborhood extent[1] must be a non-negative integer, got -1'));
    expect(() => neighborhood([1], 'diamond' as never)).toThrow(
      new OptionError("neighborhood shape must be one of 'boundingBox', 'alongAxes', got 'diamond'"),
    );
  });
});

describe('fixed', () => {
  it('gives every chunk the same part, whatever the kernel dimensionality', () => {
    const m = fixed(subrange([0, 0], [3, 3]));
    expect(m(chunk([7], [1], [8]), range([16, 16]))).toEqual(box([0, 0], [3, 3]));
    expect(m(chunk([1, 2, 3], [1, 1, 1], [4, 4, 4]), range([16, 16]))).toEqual(box([0, 0], [3, 3]));
  });

  it('clamps the part at both edges of the buffer', () => {
    const buf = range([128, 128]);
    const c = chunk([0], [1], [1]);
    expect(fixed(box([0, 0], [5, 5]))(c, buf)).toEqual(box([0, 0], [5, 5]));
    expect(fixed(box([100, 120], [140, 130]))(c, buf)).toEqual(box([100, 120], [128, 128]));
    expect(fixed(box([130, 0], [140, 9]))(c, buf)).toBe(emptyBox(2));
    const r = fixed(region(1, [box([0], [2]), box([6], [20])]))(c, range([10]));
    expect(corners(r)).toEqual([[[0], [2]], [[6], [10]]]);
  });
});

describe('all', () => {
  it('gives every chunk the whole buffer, from 0 to its end in every dimension', () => {
    expect(all()(chunk([3], [2], [8]), range([4, 5, 6]))).toEqual(box([0, 0, 0], [4, 5, 6]));
    expect(all()(chunk([0, 0], [0, 0], [0, 0]), range([7]))).toEqual(box([0], [7]));
    expect(all()(chunk([0], [1], [1]), range([0, 3]))).toBe(emptyBox(2));
  });
});

describe('evenSplit', () => {
  it('deals the rows as Celerity does: the first items take the remainder', () => {
    const m = evenSplit();
    expect([0, 1, 2].map((i) => m(chunk([i], [1], [3]), range([10])))).toEqual([box([0], [4]), box([4], [7]), box([7], [10])]);
  });

  it('spreads a 1-D kernel over the rows of the buffer, whole chunks taking their items\' shares', () => {
    const buf = range([10, 3]);
    const m = evenSplit();
    // 10 rows over 4 items: 3, 3, 2, 2.
    expect(m(chunk([0], [1], [4]), buf)).toEqual(box([0, 0], [3, 3]));
    expect(m(chunk([1], [2], [4]), buf)).toEqual(box([3, 0], [8, 3]));
    expect(m(chunk([3], [1], [4]), buf)).toEqual(box([8, 0], [10, 3]));
  });

  it('tiles the buffer from its first row to its last for chunks that tile the kernel', () => {
    const buf = range([26]);
    const parts = [[0, 3], [3, 3], [6, 3], [9, 2], [11, 2]].map(([o, n]) => evenSplit()(chunk([o!], [n!], [13]), buf));
    expect(parts).toEqual([box([0], [6]), box([6], [12]), box([12], [18]), box([18], [22]), box([22], [26])]);
  });

  it('hands out whole granules to the first items and the tail that is not one to the last', () => {
    const shares = (rows: number, items: number, granularity: number): number[][] =>
      Array.from({ length: items }, (_, i) => {
        const b = evenSplit({ granularity })(chunk([i], [1], [items]), range([rows]));
        return [b.min[0] ?? 0, b.max[0] ?? 0];
      });
    expect(shares(100, 3, 16)).toEqual([[0, 32], [32, 64], [64, 100]]);
    expect(shares(20, 3, 4)).toEqual([[0, 8], [8, 16], [16, 20]]);
    expect(shares(22, 3, 4)).toEqual([[0, 8], [8, 16], [16, 22]]);
    expect(shares(130, 3, 16)).toEqual([[0, 48], [48, 96], [96, 130]]);
    // Fewer granules than items: the first items get one granule each, the rest nothing.
    expect(shares(10, 4, 4)).toEqual([[0, 4], [4, 8], [0, 0], [8, 10]]); // [0, 0]: the empty box
  });

  it('puts boundaries on multiples of the granularity, the end of the buffer excepted', () => {
    const m = evenSplit({ granularity: 4 });
    expect(m(chunk([0], [2], [4]), range([10]))).toEqual(box([0], [8]));
    expect(m(chunk([2], [2], [4]), range([10]))).toEqual(box([8], [10]));
    expect(m(chunk([0], [1], [4]), range([10]))).toEqual(box([0], [4]));
  });

  it('gives an empty chunk nothing and rejects a zero granularity', () => {
    expect(evenSplit()(chunk([2], [0], [4]), range([10]))).toBe(emptyBox(1));
    expect(() => evenSplit({ granularity: 0 })).toThrow(new OptionError('evenSplit granularity must be an integer in [1, 9007199254740991], got 0'));
  });

  it('agrees with split on where remainders go', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 16 }), (rows, items, g) => {
        fc.pre(items <= Math.ceil(rows / g));
        const chunks = split(range([rows]), items, { granularity: g });
        expect(chunks).toHaveLength(items);
        chunks.forEach((c, i) => {
          expect(evenSplit({ granularity: g })(chunk([i], [1], [items]), range([rows]))).toEqual(box([c.offset[0]], [c.offset[0] + c.range[0]]));
        });
      }),
    );
  });
});

describe('dimensionality mismatches', () => {
  const cases: [string, AnyRangeMapper, Dims, Dims, string][] = [
    ['oneToOne()', oneToOne(), 2, 3, 'range mapper oneToOne() needs a kernel and a buffer of one dimensionality, got a 2-dimensional kernel and a 3-dimensional buffer'],
    ['slice(2)', slice(2), 2, 2, 'range mapper slice(2) needs a kernel and a buffer of one dimensionality with a dimension 2, got a 2-dimensional kernel and a 2-dimensional buffer'],
    ['slice(0)', slice(0), 1, 2, 'range mapper slice(0) needs a kernel and a buffer of one dimensionality with a dimension 0, got a 1-dimensional kernel and a 2-dimensional buffer'],
    [
      'neighborhood([1,1])', neighborhood([1, 1]), 3, 3,
      'range mapper neighborhood([1,1]) needs a 2-dimensional kernel and a 2-dimensional buffer (one per extent entry), got a 3-dimensional kernel and a 3-dimensional buffer',
    ],
    [
      "neighborhood([1], 'alongAxes')", neighborhood([1], 'alongAxes'), 1, 2,
      "range mapper neighborhood([1], 'alongAxes') needs a 1-dimensional kernel and a 1-dimensional buffer (one per extent entry), got a 1-dimensional kernel and a 2-dimensional buffer",
    ],
    [
      'fixed([(0,0),(3,3)))', fixed(subrange([0, 0], [3, 3])), 1, 3,
      'range mapper fixed([(0,0),(3,3))) selects a 2-dimensional box, so it needs a 2-dimensional buffer, got a 1-dimensional kernel and a 3-dimensional buffer',
    ],
    ['evenSplit()', evenSplit(), 2, 2, 'range mapper evenSplit() needs a 1-dimensional kernel, got a 2-dimensional kernel and a 2-dimensional buffer'],
  ];

  it.each(cases)('rejects %s on a %i-D kernel and a %i-D buffer, naming both', (name, mapper, k, b, message) => {
    expect(() => checkRangeMapper(mapper, k, b)).toThrow(new RangeMapperError(name, k, b, message));
    expect(() => checkRangeMapper(mapper, k, b)).toThrow(expect.objectContaining({ code: 'PXL_RANGE_MAPPER', mapper: name, kernelDims: k, bufferDims: b }));
  });

  it('also throws when a built-in is called directly with mismatched values', () => {
    const call = oneToOne() as unknown as (c: Chunk, r: Range) => Box;
    expect(() => call(chunk([0, 0], [1, 1], [2, 2]), range([2, 2, 2]))).toThrow(
      'range mapper oneToOne() needs a kernel and a buffer of one dimensionality, got a 2-dimensional kernel and a 3-dimensional buffer',
    );
  });

  it('lets all() serve any pair of dimensionalities', () => {
    for (const k of [1, 2, 3] as const) for (const b of [1, 2, 3] as const) expect(() => checkRangeMapper(all(), k, b)).not.toThrow();
  });
});

// ---- the result for a chunk is the union of the results for its work items ----

const KERNEL = [9, 7] as const;
const chunkArb = fc
  .tuple(fc.nat(KERNEL[0]), fc.nat(KERNEL[0]), fc.nat(KERNEL[1]), fc.nat(KERNEL[1]))
  .map(([a, b, c, d]) => chunk([Math.min(a, b), Math.min(c, d)], [Math.abs(a - b), Math.abs(c - d)], KERNEL));

function perItemUnion(m: RangeMapper<2, 2>, c: Chunk<2>, buf: Range<2>): Region<2> {
  let out: Region<2> = emptyRegion(2);
  for (let i = c.offset[0]; i < c.offset[0] + c.range[0]; i++) {
    for (let j = c.offset[1]; j < c.offset[1] + c.range[1]; j++) {
      out = union(out, regionOf(m(chunk([i, j], [1, 1], KERNEL), buf) as Box<2> | Region<2>));
    }
  }
  return out;
}

describe('built-in mappers as unions of work items', () => {
  const buf = range([8, 8]);
  const mappers: [string, RangeMapper<2, 2>][] = [
    ['oneToOne', oneToOne()],
    ['slice(0)', slice(0)],
    ['slice(1)', slice(1)],
    ['neighborhood boundingBox', neighborhood([2, 1])],
    ['neighborhood alongAxes', neighborhood([1, 2], 'alongAxes')],
  ];

  it.each(mappers)('%s maps a chunk to the union of what its work items access, inside the buffer', (_name, m) => {
    fc.assert(
      fc.property(chunkArb, (c) => {
        const whole = regionOf(m(c, buf) as Box<2> | Region<2>);
        expect(whole).toEqual(perItemUnion(m, c, buf));
        expect(contains(box([0, 0], [8, 8]), whole)).toBe(true);
      }),
    );
  });

  it('evenSplit maps a 1-D chunk to the union of its work items and tiles the buffer without overlap', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 0, max: 30 }), fc.integer({ min: 1, max: 4 }), (total, rows, g) => {
        const m = evenSplit({ granularity: g });
        const buffer = range([rows, 2]);
        let covered: Region<2> = emptyRegion(2);
        for (let i = 0; i < total; i++) {
          const item = regionOf(m(chunk([i], [1], [total]), buffer));
          expect(area(union(covered, item))).toBe(area(covered) + area(item));
          covered = union(covered, item);
          expect(equals(regionOf(m(chunk([0], [i + 1], [total]), buffer)), covered)).toBe(true);
        }
        expect(covered).toEqual(regionOf(box([0, 0], [rows, 2])));
      }),
    );
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Chunk } from '../src/core/chunk.js';
import { OptionError } from '../src/core/errors.js';
import { range } from '../src/core/range.js';
import { split } from '../src/graph/split.js';

const sizes = (chunks: readonly Chunk[]): number[][] => chunks.map((c) => [...c.range]);
/** The distinct extents along dimension d, in order of first appearance. */
const along = (chunks: readonly Chunk[], d: number): number[] => {
  const seen = new Map<number, number>();
  for (const c of chunks) seen.set(c.offset[d]!, c.range[d]!);
  return [...seen.values()];
};

describe('split known answers', () => {
  it('splits 13 items on 5 into 3,3,3,2,2', () => {
    const chunks = split(range([13]), 5);
    expect(sizes(chunks)).toEqual([[3], [3], [3], [2], [2]]);
    expect(chunks.map((c) => c.offset[0])).toEqual([0, 3, 6, 9, 11]);
    expect(chunks[0]).toEqual({ kind: 'chunk', offset: [0], range: [3], globalSize: [13] });
  });

  it('splits 80 items on 3 with granularity 16 into 32,32,16', () => {
    expect(sizes(split(range([80]), 3, { granularity: 16 }))).toEqual([[32], [32], [16]]);
  });

  it('splits 100×100 on 6 into rows 34,33,33 × columns 50,50', () => {
    const chunks = split(range([100, 100]), 6);
    expect(chunks).toHaveLength(6);
    expect(along(chunks, 0)).toEqual([34, 33, 33]);
    expect(along(chunks, 1)).toEqual([50, 50]);
    expect(chunks.map((c) => [...c.offset])).toEqual([[0, 0], [0, 50], [34, 0], [34, 50], [67, 0], [67, 50]]);
  });

  it('splits 128×128 on 12 with granularity (16,8) into 4 rows of 32 × columns 48,40,40', () => {
    const chunks = split(range([128, 128]), 12, { granularity: [16, 8] });
    expect(chunks).toHaveLength(12);
    expect(along(chunks, 0)).toEqual([32, 32, 32, 32]);
    expect(along(chunks, 1)).toEqual([48, 40, 40]);
  });

  it('gives the whole granules left over to the first parts and the tail to the last, as evenSplit does', () => {
    expect(sizes(split(range([10]), 3))).toEqual([[4], [3], [3]]);
    expect(sizes(split(range([100]), 3, { granularity: 16 }))).toEqual([[32], [32], [36]]);
    expect(sizes(split(range([130]), 3, { granularity: 16 }))).toEqual([[48], [48], [34]]);
  });

  it('picks the 2-D factors as Celerity does: 256×64 on 8 is 4×2 chunks of 64×32', () => {
    const chunks = split(range([256, 64]), 8);
    expect(chunks).toHaveLength(8);
    expect(along(chunks, 0)).toEqual([64, 64, 64, 64]);
    expect(along(chunks, 1)).toEqual([32, 32]);
    expect(sizes(split(range([64, 256]), 8))).toEqual(new Array(8).fill([32, 64]));
  });

  it('cuts a square-ish range more along dimension 0, another by the shorter chunk edges', () => {
    // 2×4 and 4×2 tie on chunks; 100×98 is square within 5%, so dimension 0 takes the 4.
    expect(along(split(range([100, 98]), 8), 0)).toHaveLength(4);
    expect(along(split(range([98, 100]), 8), 0)).toHaveLength(4);
    // 1000×10 on 4: 2×2 and 2×2 are one pair, taken as it comes; 500 + 5 is the edge sum either way.
    expect(sizes(split(range([1000, 10]), 4))).toEqual([[500, 5], [500, 5], [500, 5], [500, 5]]);
    // 60×200 on 6: 2×3 (30 + 66 = 96) beats 3×2 (20 + 100 = 120).
    const c = split(range([60, 200]), 6);
    expect([along(c, 0).length, along(c, 1).length]).toEqual([2, 3]);
  });

  it('goes down to a smaller factor pair when the granules do not allow the first, and keeps the best', () => {
    // 9 = 3×3, but dimension 1 has 2 granules: 3×2 = 6 < 9, then 1×9 → 9×1 gives 9 chunks.
    const c = split(range([90, 2]), 9);
    expect(c).toHaveLength(9);
    expect([along(c, 0).length, along(c, 1).length]).toEqual([9, 1]);
    // 4 on a 1×3 range: 2×2 → 1×2 (2 chunks), 1×4 → 1×3 (3 chunks): the best, 3.
    expect(sizes(split(range([1, 3]), 4))).toEqual([[1, 1], [1, 1], [1, 1]]);
  });

  it('cuts only dimension 0 with axes 1, and keeps dimension 2 of a 3-D range whole', () => {
    expect(sizes(split(range([100, 100]), 3, { axes: 1 }))).toEqual([[34, 100], [33, 100], [33, 100]]);
    expect(sizes(split(range([4, 4, 7]), 4))).toEqual([[2, 2, 7], [2, 2, 7], [2, 2, 7], [2, 2, 7]]);
  });

  it('never returns an empty chunk: fewer chunks for fewer units, none for an empty range', () => {
    expect(sizes(split(range([3]), 8))).toEqual([[1], [1], [1]]);
    expect(sizes(split(range([40]), 8, { granularity: 16 }))).toEqual([[16], [16], [8]]);
    expect(split(range([0, 5]), 4)).toEqual([]);
    expect(sizes(split(range([1, 100]), 6))).toHaveLength(6);
  });

  it('rejects a bad count, granularity or axes', () => {
    expect(() => split(range([8]), 0)).toThrow(new OptionError('split count must be an integer in [1, 9007199254740991], got 0'));
    expect(() => split(range([8]), 2, { granularity: 0 })).toThrow(new OptionError('split granularity must be an integer in [1, 9007199254740991], got 0'));
    expect(() => split(range([8, 8]), 2, { granularity: [1, 2, 3] })).toThrow(
      new OptionError('split granularity must be a number or one number per dimension of the 2-dimensional range, got an array of length 3'),
    );
    expect(() => split(range([8, 8]), 2, { granularity: [1, 0.5] })).toThrow(new OptionError('split granularity[1] must be an integer in [1, 9007199254740991], got 0.5'));
    expect(() => split(range([8]), 2, { axes: 2 })).toThrow(new OptionError('split axes must be an integer in [1, 1], got 2'));
  });
});

describe('split properties', () => {
  const caseArb = fc.oneof(
    fc.record({ extent: fc.tuple(fc.integer({ min: 0, max: 60 })), gran: fc.tuple(fc.integer({ min: 1, max: 8 })) }),
    fc.record({
      extent: fc.tuple(fc.integer({ min: 0, max: 24 }), fc.integer({ min: 0, max: 24 })),
      gran: fc.tuple(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 5 })),
    }),
    fc.record({
      extent: fc.tuple(fc.integer({ min: 0, max: 8 }), fc.integer({ min: 0, max: 8 }), fc.integer({ min: 0, max: 4 })),
      gran: fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 3 }), fc.constant(1)),
    }),
  );

  it('covers the range exactly once with non-empty chunks that respect granularity and put large parts first, the tail last', () => {
    fc.assert(
      fc.property(caseArb, fc.integer({ min: 1, max: 20 }), ({ extent, gran }, count) => {
        const chunks = split(range(extent), count, { granularity: gran });
        expect(chunks.length).toBeLessThanOrEqual(count);
        const hits = new Map<string, number>();
        for (const c of chunks) {
          expect([...c.globalSize]).toEqual(extent);
          expect(c.range.every((e) => e > 0)).toBe(true);
          c.offset.forEach((o, d) => {
            expect(o % gran[d]!).toBe(0);
            const end = o + c.range[d]!;
            if (end !== extent[d]) expect(c.range[d]! % gran[d]!).toBe(0);
          });
          const [o0, o1 = 0, o2 = 0] = c.offset;
          const [r0, r1 = 1, r2 = 1] = c.range;
          for (let i = o0; i < o0 + r0; i++) for (let j = o1; j < o1 + r1; j++) for (let k = o2; k < o2 + r2; k++) {
            const key = `${i},${j},${k}`;
            hits.set(key, (hits.get(key) ?? 0) + 1);
          }
        }
        const total = extent.reduce((p, e) => p * e, 1);
        expect(hits.size).toBe(total);
        expect([...hits.values()].every((n) => n === 1)).toBe(true);
        // Row-major order, and along each dimension the parts never grow.
        for (let i = 1; i < chunks.length; i++) {
          const a = chunks[i - 1]!.offset;
          const b = chunks[i]!.offset;
          const d = a.findIndex((x, k) => x !== b[k]);
          expect(a[d]!).toBeLessThan(b[d]!);
        }
        // Along each dimension every part but the last is `step` or `step + g`, larger ones first.
        for (let d = 0; d < extent.length; d++) {
          const parts = along(chunks, d).slice(0, -1);
          for (let i = 1; i < parts.length; i++) expect(parts[i]!).toBeLessThanOrEqual(parts[i - 1]!);
          if (parts.length > 0) expect(parts[0]! - parts[parts.length - 1]!).toBeLessThanOrEqual(gran[d]!);
        }
      }),
    );
  });

  it('uses every core when the range has enough granules along the cut dimension', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 400 }), fc.integer({ min: 1, max: 16 }), (n, count) => {
        expect(split(range([n]), count)).toHaveLength(Math.min(n, count));
      }),
    );
  });
});

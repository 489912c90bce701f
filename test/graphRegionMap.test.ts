import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { box, type Box } from '../src/core/box.js';
import { range } from '../src/core/range.js';
import { area, intersection, isEmpty, region, union, type Region } from '../src/core/region.js';
import { RegionMap } from '../src/graph/regionMap.js';

const W = 6;
const H = 5;
const domain = range([W, H]);

const arbBox = fc
  .tuple(fc.integer({ min: 0, max: W }), fc.integer({ min: 0, max: W }), fc.integer({ min: 0, max: H }), fc.integer({ min: 0, max: H }))
  .map(([a, b, c, d]) => box([Math.min(a, b), Math.min(c, d)], [Math.max(a, b), Math.max(c, d)]));

function inBox(b: Box, x: number, y: number): boolean {
  return b.min[0]! <= x && x < b.max[0]! && b.min[1]! <= y && y < b.max[1]!;
}

describe('RegionMap', () => {
  it('starts as one entry covering the domain', () => {
    const m = new RegionMap(domain, 'a', String);
    expect(m.entries).toEqual([{ region: region(2, [box([0, 0], [W, H])]), value: 'a' }]);
  });

  it('splits on assignment and merges points that get equal values again', () => {
    const m = new RegionMap<2, number>(domain, 0, String);
    m.assign(box([0, 0], [2, H]), 1);
    expect(m.entries).toHaveLength(2);
    expect(m.query(box([1, 0], [3, 1]))).toEqual([
      { region: region(2, [box([2, 0], [3, 1])]), value: 0 },
      { region: region(2, [box([1, 0], [2, 1])]), value: 1 },
    ]);
    m.assign(box([0, 0], [2, H]), 0);
    expect(m.entries).toEqual([{ region: region(2, [box([0, 0], [W, H])]), value: 0 }]);
  });

  it('updates from the old value of each part', () => {
    const m = new RegionMap<2, readonly number[]>(domain, [], (v) => v.join(','));
    m.update(box([0, 0], [4, H]), (r) => [...r, 1]);
    m.update(box([2, 0], [W, H]), (r) => [...r, 2]);
    const got = m.query(box([0, 0], [W, 1])).map((e) => [e.region.boxes.map((b) => [b.min[0], b.max[0]]), e.value]);
    expect(got).toEqual(
      expect.arrayContaining([
        [[[0, 2]], [1]],
        [[[2, 4]], [1, 2]],
        [[[4, 6]], [2]],
      ]),
    );
  });

  it('ignores an empty region', () => {
    const m = new RegionMap<2, number>(domain, 0, String);
    m.assign(box([3, 3], [3, 5]), 9);
    expect(m.entries).toHaveLength(1);
    expect(m.query(box([1, 1], [1, 1]))).toEqual([]);
  });

  it('agrees with a point-by-point model and stays a partition with one entry per value', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(arbBox, fc.integer({ min: 0, max: 3 })), { maxLength: 12 }), (ops) => {
        const m = new RegionMap<2, number>(domain, 0, String);
        const model = Array.from({ length: W }, () => new Array<number>(H).fill(0));
        for (const [b, v] of ops) {
          m.assign(b, v);
          for (let x = 0; x < W; x++) for (let y = 0; y < H; y++) if (inBox(b, x, y)) model[x]![y] = v;
        }
        const values = m.entries.map((e) => e.value);
        expect(new Set(values).size).toBe(values.length);
        let covered: Region<2> = region(2, []);
        for (const e of m.entries) {
          expect(isEmpty(intersection(covered, e.region))).toBe(true);
          covered = union(covered, e.region);
          for (const b of e.region.boxes) {
            for (let x = b.min[0]!; x < b.max[0]!; x++) for (let y = b.min[1]!; y < b.max[1]!; y++) expect(model[x]![y]).toBe(e.value);
          }
        }
        expect(area(covered)).toBe(W * H);
      }),
    );
  });
});

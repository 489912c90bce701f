import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { averageLinkageLeaves, clusterOrder } from '../src/web/clustering.js';

/** Points on a line; the distance of i and j is |x_i - x_j|. */
const onLine = (xs: readonly number[]) => (i: number, j: number): number => Math.abs(xs[i]! - xs[j]!);

function isPermutation(order: Uint32Array, n: number): boolean {
  if (order.length !== n) return false;
  const seen = new Uint8Array(n);
  for (const i of order) {
    if (i >= n || seen[i] === 1) return false;
    seen[i] = 1;
  }
  return true;
}

/** Whether the members of `group` sit at consecutive positions of `order`. */
function contiguous(order: Uint32Array, group: readonly number[]): boolean {
  const at = group.map((i) => order.indexOf(i)).sort((a, b) => a - b);
  return at[at.length - 1]! - at[0]! === group.length - 1;
}

describe('clusterOrder', () => {
  it('puts each of three interleaved clusters together', () => {
    // Items 0, 3, 6, 9 near 0; 1, 4, 7, 10 near 100; 2, 5, 8, 11 near 1000.
    const xs = Array.from({ length: 12 }, (_, i) => [0, 100, 1000][i % 3]! + i * 0.5);
    const order = clusterOrder(xs.length, onLine(xs));
    expect(isPermutation(order, 12)).toBe(true);
    expect(contiguous(order, [0, 3, 6, 9])).toBe(true);
    expect(contiguous(order, [1, 4, 7, 10])).toBe(true);
    expect(contiguous(order, [2, 5, 8, 11])).toBe(true);
  });

  it('keeps nested clusters nested: the two close pairs inside the near group', () => {
    // 0 and 4 are close, 2 and 5 are close, those four near each other, 1 and 3 far away.
    const xs = [0, 500, 10, 510, 0.1, 10.1];
    const order = [...clusterOrder(6, onLine(xs))];
    expect(contiguous(Uint32Array.from(order), [0, 4])).toBe(true);
    expect(contiguous(Uint32Array.from(order), [2, 5])).toBe(true);
    expect(contiguous(Uint32Array.from(order), [0, 4, 2, 5])).toBe(true);
    expect(contiguous(Uint32Array.from(order), [1, 3])).toBe(true);
  });

  it('orders 0, 1 and 2 items trivially', () => {
    expect([...clusterOrder(0, onLine([]))]).toEqual([]);
    expect([...clusterOrder(1, onLine([5]))]).toEqual([0]);
    expect([...clusterOrder(2, onLine([5, 1]))]).toEqual([0, 1]);
  });

  it('survives NaN and infinite distances and still returns a permutation', () => {
    const order = clusterOrder(5, (i, j) => ((i + j) % 2 === 0 ? Number.NaN : Infinity));
    expect(isPermutation(order, 5)).toBe(true);
  });

  it('above maxClustered clusters a sample and still groups the clusters', () => {
    const n = 300;
    const xs = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 0 : 1000) + (i % 7));
    const order = clusterOrder(n, onLine(xs), { maxClustered: 40 });
    expect(isPermutation(order, n)).toBe(true);
    const evens = Array.from({ length: n / 2 }, (_, k) => 2 * k);
    expect(contiguous(order, evens)).toBe(true);
  });

  it('refuses a bad n or maxClustered with the value in the message', () => {
    expect(() => clusterOrder(-1, onLine([]))).toThrow('clusterOrder: n must be an integer >= 0, got -1');
    expect(() => clusterOrder(1.5, onLine([]))).toThrow('clusterOrder: n must be an integer >= 0, got 1.5');
    expect(() => clusterOrder(3, onLine([1, 2, 3]), { maxClustered: 1 })).toThrow('clusterOrder: maxClustered must be an integer >= 2, got 1');
  });

  it('is a permutation of 0 .. n-1 for any distances (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40 }).chain((n) => fc.tuple(fc.constant(n), fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { minLength: n * n, maxLength: n * n }), fc.integer({ min: 2, max: 50 }))),
        ([n, raw, maxClustered]) => {
          // Symmetric distances from an arbitrary square of numbers (ties and zeros included).
          const distance = (i: number, j: number): number => raw[Math.min(i, j) * n + Math.max(i, j)]!;
          return isPermutation(clusterOrder(n, distance, { maxClustered }), n);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('on points on a line, two well separated groups each stay contiguous (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 3, maxLength: 30 }), (xs) => {
        // Two well separated groups: every item of the low group must be contiguous in the order.
        const values = xs.map((x, i) => (i % 2 === 0 ? x : x + 1e6));
        const order = averageLinkageLeaves(values.length, onLine(values));
        const low = values.map((_, i) => i).filter((i) => i % 2 === 0);
        return isPermutation(order, values.length) && contiguous(order, low);
      }),
      { numRuns: 200 },
    );
  });
});

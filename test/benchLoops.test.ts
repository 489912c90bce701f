import { afterAll, describe, expect, it } from 'vitest';
import { pcfSetFrom } from '../src/pcf/pcfSet.js';
import { pdist } from '../src/pcf/operations.js';
import { randomPcfs } from '../src/pcf/random.js';
import { destroyDefaultContext } from '../src/pcf/defaultContext.js';
import type { PcfSet } from '../src/pcf/pcfSet.js';

/**
 * bench/pdist.mjs and bench/cli.mjs divide pxl's time by two single-thread loops' (the plain merge
 * and pxl's branch-free pair kernels). A speed-up means something only if both loops compute what
 * pxl computes, so both must equal pdist bit for bit, entry by entry.
 */

type Loop = (set: PcfSet, p: 1 | 2) => Float64Array;
interface Loops { plainLoop: Loop; pairKernelLoop: Loop }

const loops = async (): Promise<Loops> => (await import(new URL('../bench/lib/loops.mjs', import.meta.url).href)) as Loops;

// A = 10 on [0,2), 5 on [2,3); B = 5 on [0,6); C = 4 on [0,3): L1 |A-B| = 25, |A-C| = 13, |B-C| = 18.
const HAND = pcfSetFrom([[[0, 10], [2, 5], [3, 0]], [[0, 5], [6, 0]], [[0, 4], [3, 0]]]);
// Shared breakpoint times (both sides advance in one step) and a single-breakpoint PCF. Each ends
// at 0, as the benchmarks' PCFs do: the loops have none of pxl's rescue of sums out of range.
const SHARED = pcfSetFrom([[[0, 1], [1, 2], [2, 0]], [[0, 3], [1, 1], [2, 0]], [[0, 0]], [[0, 2], [2, 5], [4, 0]], [[0, -1], [2, 0]]]);

describe("bench's single-thread loops", () => {
  afterAll(() => destroyDefaultContext());

  it('give the hand-computed L1 distances', async () => {
    const { plainLoop, pairKernelLoop } = await loops();
    // Rows i > j at i(i-1)/2 + j: (1,0), (2,0), (2,1).
    expect(Array.from(plainLoop(HAND, 1))).toEqual([25, 13, 18]);
    expect(Array.from(pairKernelLoop(HAND, 1))).toEqual([25, 13, 18]);
  });

  it.each([
    ['hand-made', HAND],
    ['shared times and single breakpoints', SHARED],
    ['1 breakpoint each', randomPcfs({ n: 40, points: 1, seed: 5 })],
    ['2 breakpoints each', randomPcfs({ n: 40, points: 2, seed: 6 })],
    ['100 breakpoints each', randomPcfs({ n: 60, points: 100, seed: 7 })],
  ])('equal pdist bit for bit for p = 1 and 2 (%s)', async (_name, set) => {
    const { plainLoop, pairKernelLoop } = await loops();
    for (const p of [1, 2] as const) {
      const d = await pdist(set, { p });
      const expected: number[] = [];
      for (let i = 1; i < set.count; i++) for (let j = 0; j < i; j++) expected.push(d.get(i, j));
      expect(Array.from(plainLoop(set, p)), `plain loop, p = ${p}`).toEqual(expected);
      expect(Array.from(pairKernelLoop(set, p)), `pair-kernel loop, p = ${p}`).toEqual(expected);
    }
  });
});

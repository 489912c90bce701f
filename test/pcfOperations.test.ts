import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext, type Context } from '../src/index.js';
import { CancelledError, OptionError, PcfError } from '../src/core/errors.js';
import { cdist, l2Kernel, pdist } from '../src/pcf/operations.js';
import { referenceCdist, referenceL2Kernel, referencePdist } from '../src/pcf/distance.js';
import { randomPcfs } from '../src/pcf/random.js';
import { pcfAt, pcfSetFrom } from '../src/pcf/pcfSet.js';
import { expectAllClose } from './helpers/closeTo.js';

let ctx: Context;
beforeAll(async () => {
  ctx = await createContext({ topology: { subs: 2, clustersPerSub: 1, coresPerCluster: 2 } });
});
afterAll(async () => {
  await ctx.destroy();
});

const F1: [number, number][] = [[0, 10], [2, 5], [3, 0]];
const G1: [number, number][] = [[0, 5], [6, 0]];

describe('pdist, l2Kernel and cdist on MU cores', () => {
  it('gives the known answers', async () => {
    expect((await pdist([F1, G1], { context: ctx })).get(1, 0)).toBe(25);
    expect((await pdist([[[0, 6], [3, 0]], [[0, 2], [1, 4], [2, 0]]], { context: ctx })).get(1, 0)).toBe(12);
    expect((await pdist([[[0, 4], [1, 0]], [[0, 1], [1, 0]]], { context: ctx, p: 3 })).get(0, 1)).toBeCloseTo(3, 12);
    const k = await l2Kernel([[[0, 4], [3, 0]], [[0, 2], [3, 0]]], { context: ctx });
    expect([k.get(0, 0), k.get(1, 0), k.get(0, 1), k.get(1, 1)]).toEqual([48, 24, 24, 12]);
    expect((await pdist([[[0, 1]], [[0, 0]]], { context: ctx })).get(1, 0)).toBe(1.7976931348623157e308);
    expect((await pdist([[[0, 1]], [[0, 0]]], { context: ctx, dtype: 'float32' })).get(1, 0)).toBe(3.4028234663852886e38);
  });

  for (const dtype of ['float64', 'float32'] as const) {
    // float32: p = 1, 2 and the kernel are float32 sums (about 25 roundings: 2e-6), p = 3 and 2.5
    // float64 sums rounded once, as the reference is (one ulp: 2e-7).
    const tolFor = (inFloat32: boolean): number => (dtype === 'float64' ? 1e-12 : inFloat32 ? 2e-6 : 2e-7);
    it(`matches the brute-force reference on random data in ${dtype}, over several blocks and two devices`, async () => {
      const set = randomPcfs({ n: 70, points: 12, seed: 7, dtype });
      const pcfs = Array.from({ length: set.count }, (_, i) => pcfAt(set, i));
      const jobs = [ctx.createJob(1), ctx.createJob(1)];
      try {
        const small = { context: ctx, jobs, maxOutputElements: 200, minBlockSide: 8 };
        for (const p of [1, 2, 3, 2.5]) {
          const d = await pdist(set, { ...small, p });
          const ref = referencePdist(pcfs, p);
          const lower = (get: (i: number, j: number) => number) => Array.from({ length: set.count }, (_, i) => Array.from({ length: i }, (_, j) => get(i, j)));
          const tol = tolFor(p <= 2);
          expectAllClose(lower((i, j) => d.get(i, j)), lower((i, j) => ref[i]![j]!), { rtol: tol, atol: tol, what: `pdist p=${p}` });
        }
        const k = await l2Kernel(set, small);
        const kref = referenceL2Kernel(pcfs);
        const withDiagonal = (get: (i: number, j: number) => number) => Array.from({ length: set.count }, (_, i) => Array.from({ length: i + 1 }, (_, j) => get(i, j)));
        expectAllClose(withDiagonal((i, j) => k.get(i, j)), withDiagonal((i, j) => kref[i]![j]!), { rtol: tolFor(true), atol: tolFor(true), what: 'l2Kernel' });
      } finally {
        for (const j of jobs) ctx.destroyJob(j);
      }
    });
  }

  it('computes cdist over multi-dimensional inputs with shape (*X.shape, *Y.shape)', async () => {
    const xs = randomPcfs({ n: 6, points: 5, seed: 1 });
    const ys = randomPcfs({ n: 8, points: 7, seed: 2 });
    const X = pcfSetFrom(Array.from({ length: 6 }, (_, i) => pcfAt(xs, i)), 'float64', { shape: [2, 3] });
    const Y = pcfSetFrom(Array.from({ length: 8 }, (_, i) => pcfAt(ys, i)), 'float64', { shape: [2, 2, 2] });
    const t = await cdist(X, Y, { context: ctx, p: 2, maxOutputElements: 9, minBlockSide: 1 });
    expect(t.shape).toEqual([2, 3, 2, 2, 2]);
    const ref = referenceCdist(Array.from({ length: 6 }, (_, i) => pcfAt(xs, i)), Array.from({ length: 8 }, (_, i) => pcfAt(ys, i)), 2);
    expectAllClose(Array.from({ length: 6 }, (_, i) => t.data.subarray(i * 8, (i + 1) * 8)), ref, { atol: 5e-11, what: 'cdist' });
    expect(t.data.length).toBe(48);
    const inner = await cdist(X, Y, { context: ctx, op: 'l2Inner' });
    const iref = referenceL2Kernel([...Array.from({ length: 6 }, (_, i) => pcfAt(xs, i)), ...Array.from({ length: 8 }, (_, i) => pcfAt(ys, i))]);
    expect(inner.data[0]).toBeCloseTo(iref[6]![0]!, 10);
  });

  it('runs without a context, on the default Context', async () => {
    expect((await pdist([F1, G1])).get(1, 0)).toBe(25);
  });

  it('gives each call the distances of its own input when calls of the same size follow each other on one Context', async () => {
    // Calls of one size reuse the Context's device buffers (new contents, same pointers), so every
    // launch argument repeats; a core must not keep the previous call's columns.
    const calls: { pcfs: [number, number][][]; p: number; want: number }[] = [
      { pcfs: [[[0, 2], [1, 0]], [[0, 0]]], p: 2, want: 2 },
      { pcfs: [[[0, 2], [1, 0]], [[0, 0]]], p: 3, want: 2 },
      { pcfs: [[[0, 5], [1, 0]], [[0, 0]]], p: 2, want: 5 },
      { pcfs: [[[0, 7], [1, 0]], [[0, 0]]], p: 1, want: 7 },
      { pcfs: [[[0, 3], [1, 0]], [[0, 0]]], p: 1, want: 3 },
    ];
    for (const { pcfs, p, want } of calls) {
      for (const context of [ctx, undefined]) {
        expect((await pdist(pcfs, { p, ...(context === undefined ? {} : { context }) })).get(1, 0)).toBe(want);
      }
    }
  });

  it('rejects p < 1 and invalid PCFs with typed errors', async () => {
    await expect(pdist([F1, G1], { context: ctx, p: 0.5 })).rejects.toThrow(new OptionError('p must be a number >= 1, got 0.5'));
    await expect(pdist([F1, [[1, 2]]], { context: ctx })).rejects.toBeInstanceOf(PcfError);
  });

  it('reports progress up to every pair and stops with CancelledError when aborted', async () => {
    const set = randomPcfs({ n: 60, points: 10, seed: 3 });
    const seen: number[] = [];
    await pdist(set, { context: ctx, maxOutputElements: 100, minBlockSide: 4, onProgress: (p) => seen.push(p.pairsDone) });
    expect(seen.at(-1)).toBe((60 * 59) / 2);
    const abort = new AbortController();
    const run = pdist(set, { context: ctx, maxOutputElements: 100, minBlockSide: 4, signal: abort.signal, onProgress: (p) => { if (p.blocksDone === 2) abort.abort(); } });
    await expect(run).rejects.toBeInstanceOf(CancelledError);
    expect(ctx.availableSubCount).toBe(2);
  });
});

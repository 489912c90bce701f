import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { OptionError } from '../src/core/errors.js';
import { l2InnerProduct, lpDistance, lpNorm, referenceCdist, referenceL2Kernel, referencePdist } from '../src/pcf/distance.js';
import { integratePair, integrateRow, L2_INNER, pcfOp, widenPcfData } from '../src/pcf/integrate.js';
import type { PcfOp, SkipRule } from '../src/pcf/integrate.js';
import { l2Pair32 } from '../src/pcf/pairKernels32.js';
import { integrationLimit, Pcf } from '../src/pcf/pcf.js';
import type { PcfDtype } from '../src/pcf/pcf.js';
import { pcfAt, pcfSetFrom } from '../src/pcf/pcfSet.js';
import type { PcfSet } from '../src/pcf/pcfSet.js';
import { randomPcfs } from '../src/pcf/random.js';
import { expectAllClose } from './helpers/closeTo.js';

const DTYPES: PcfDtype[] = ['float64', 'float32'];
const pcfsOf = (set: PcfSet): Pcf[] => Array.from({ length: set.count }, (_, k) => pcfAt(set, k));

/** The dense matrix of `op` between every PCF of `a` and every PCF of `b`, row by row. */
function fastCdist(op: PcfOp, a: PcfSet, b: PcfSet, out: Float64Array | Float32Array = new Float64Array(a.count * b.count)): number[][] {
  for (let i = 0; i < a.count; i++) integrateRow(op, a, i, b, 0, b.count, out, i * b.count, 'none', 0, 0, integrationLimit(a.dtype));
  return Array.from({ length: a.count }, (_, i) => Array.from(out.subarray(i * b.count, (i + 1) * b.count)));
}

describe('known answers', () => {
  for (const dtype of DTYPES) {
    const P = (pts: Array<[number, number]>): Pcf => Pcf.from(pts, { dtype });

    it(`L1 distances are exact in ${dtype}`, () => {
      expect(lpDistance(P([[0, 10], [2, 5], [3, 0]]), P([[0, 5], [6, 0]]))).toBe(25);
      expect(lpDistance(P([[0, 6], [3, 0]]), P([[0, 2], [1, 4], [2, 0]]))).toBe(12);
    });

    it(`the L3 distance of [(0,4),(1,0)] and [(0,1),(1,0)] is 3 in ${dtype}`, () => {
      expect(lpDistance(P([[0, 4], [1, 0]]), P([[0, 1], [1, 0]]), 3)).toBe(3);
    });

    it(`the l2 kernel of [(0,4),(3,0)] and [(0,2),(3,0)] is [[48,24],[24,12]] in ${dtype}`, () => {
      const f = P([[0, 4], [3, 0]]);
      const g = P([[0, 2], [3, 0]]);
      expect([[l2InnerProduct(f, f), l2InnerProduct(f, g)], [l2InnerProduct(g, f), l2InnerProduct(g, g)]]).toEqual([[48, 24], [24, 12]]);
      expect(referenceL2Kernel([f, g])).toEqual([[48, 24], [24, 12]]);
      const set = pcfSetFrom([f, g], dtype);
      const out = new Float64Array(4);
      for (let i = 0; i < 2; i++) integrateRow(L2_INNER, set, i, set, 0, 2, out, 2 * i, 'skipAbove', 0, 0, integrationLimit(dtype));
      expect([...out]).toEqual([48, 0, 24, 12]);
    });
  }

  it('integrates a nonzero tail up to the largest finite float of the dtype', () => {
    expect(lpDistance(Pcf.from([[0, 1]]), Pcf.from([[0, 0]]))).toBe(1.7976931348623157e308);
    expect(lpNorm(Pcf.from([[0, 1]]))).toBe(1.7976931348623157e308);
    const f32 = { dtype: 'float32' } as const;
    expect(lpDistance(Pcf.from([[0, 1]], f32), Pcf.from([[0, 0]], f32))).toBe(3.4028234663852886e38);
    expect(lpNorm(Pcf.from([[0, 1]], f32))).toBe(3.4028234663852886e38);
  });

  it('gives 0 between a PCF and itself, and the plain integral as its norm', () => {
    const f = Pcf.from([[0, 10], [2, 5], [3, 0]]);
    expect(lpDistance(f, f, 2.5)).toBe(0);
    expect(lpNorm(f)).toBe(25);
    expect(lpNorm(f, 2)).toBe(Math.sqrt(225));
  });
});

describe('pcfOp and p validation', () => {
  it('chooses L1 for p = 1 and Lp otherwise', () => {
    expect(pcfOp()).toEqual({ kind: 'l1' });
    expect(pcfOp(1)).toEqual({ kind: 'l1' });
    expect(pcfOp(2.5)).toEqual({ kind: 'lp', p: 2.5 });
  });

  it('rejects p < 1, NaN, infinite p and non-numbers', () => {
    expect(() => pcfOp(0.5)).toThrow(new OptionError('p must be a number >= 1, got 0.5'));
    expect(() => pcfOp(NaN)).toThrow(new OptionError('p must be a number >= 1, got NaN'));
    expect(() => pcfOp(Infinity)).toThrow(new OptionError('p must be a number >= 1, got Infinity'));
    expect(() => pcfOp('2' as unknown as number)).toThrow(new OptionError("p must be a number >= 1, got '2'"));
    const f = Pcf.from([[0, 1]]);
    expect(() => lpDistance(f, f, 0.5)).toThrow(OptionError);
    expect(() => integrateRow({ kind: 'lp', p: 0.5 }, pcfSetFrom([f]), 0, pcfSetFrom([f]), 0, 1, new Float64Array(1), 0, 'none', 0, 0, 1)).toThrow(
      new OptionError('p must be a number >= 1, got 0.5'),
    );
  });

  it('rejects PCFs of different dtypes', () => {
    expect(() => lpDistance(Pcf.from([[0, 1]]), Pcf.from([[0, 1]], { dtype: 'float32' }))).toThrow(
      new OptionError("f and g must have the same dtype, got 'float64' and 'float32'"),
    );
  });
});

describe('fast kernels against the brute-force reference on random PCFs', () => {
  // Reference: referenceCdist (evaluate at every merged breakpoint, Math.pow per piece). The fast
  // kernels sum the same pieces in the same order, so float64 differs only by the p-specialised
  // power (repeated multiplication, sqrt): relative 1e-12. float32 L1, L2 and inner products are
  // summed in float32 (pairKernels32.ts): about 20 float32 roundings here, relative 2e-6; other
  // float32 exponents are float64 sums rounded once, as is the reference: within one ulp, 2e-7.
  const cases: Array<[string, PcfOp]> = [['L1', pcfOp(1)], ['L2', pcfOp(2)], ['L3', pcfOp(3)], ['L2.5', pcfOp(2.5)], ['L20', pcfOp(20)], ['inner product', L2_INNER]];
  for (const dtype of DTYPES) {
    const a = randomPcfs({ n: 9, points: 13, seed: 11, dtype });
    const b = randomPcfs({ n: 7, points: 5, seed: 12, dtype });
    for (const [name, op] of cases) {
      const inFloat32 = op.kind !== 'lp' || op.p === 2;
      const rel = dtype === 'float64' ? 1e-12 : inFloat32 ? 2e-6 : 2e-7;
      it(`${name} in ${dtype}`, () => {
        expectAllClose(fastCdist(op, a, b), referenceCdist(pcfsOf(a), pcfsOf(b), op), { rtol: rel, what: `${name} ${dtype}` });
      });
    }
  }

  it('computes a float32 set in float32 and its widened copy in float64, except exponents without a float32 kernel', () => {
    const a = randomPcfs({ n: 6, points: 20, seed: 3, dtype: 'float32' });
    const wide = { ...a, ...widenPcfData(a) };
    expect(wide.times).toBeInstanceOf(Float64Array);
    const upper = integrationLimit('float32');
    const [wt, wv] = [wide.times as Float64Array, wide.values as Float64Array];
    const pair32 = (i: number, j: number): number => l2Pair32(wt, wv, a.offsets[i]!, a.offsets[i + 1]!, wt, wv, a.offsets[j]!, a.offsets[j + 1]!, upper);
    expect(fastCdist(pcfOp(2), a, a)).toEqual(Array.from({ length: 6 }, (_, i) => Array.from({ length: 6 }, (_, j) => pair32(i, j))));
    expect(fastCdist(pcfOp(2), a, a)).not.toEqual(fastCdist(pcfOp(2), wide, wide));
    expect(fastCdist(pcfOp(3), a, a)).toEqual(fastCdist(pcfOp(3), wide, wide));
  });

  it('gives lpDistance and l2InnerProduct of float32 PCFs the float32 row results bit for bit', () => {
    const a = randomPcfs({ n: 5, points: 30, seed: 4, dtype: 'float32' });
    const pcfs = pcfsOf(a);
    const single = (op: PcfOp, i: number, j: number): number => (op.kind === 'l2inner' ? l2InnerProduct(pcfs[i]!, pcfs[j]!) : lpDistance(pcfs[i]!, pcfs[j]!, op.kind === 'l1' ? 1 : op.p));
    for (const op of [pcfOp(1), pcfOp(2), pcfOp(3), L2_INNER]) {
      expect(fastCdist(op, a, a, new Float32Array(25))).toEqual(Array.from({ length: 5 }, (_, i) => Array.from({ length: 5 }, (_, j) => single(op, i, j))));
    }
  });

  it('rounds results written to a Float32Array output', () => {
    const a = randomPcfs({ n: 4, points: 10, seed: 5, dtype: 'float32' });
    const wide = fastCdist(pcfOp(1), a, a);
    const narrow = fastCdist(pcfOp(1), a, a, new Float32Array(16));
    expect(narrow).toEqual(wide.map((row) => row.map(Math.fround)));
  });

  it('matches the reference exactly on integer grids with shared breakpoint times (property)', () => {
    // times on a small integer grid (so PCFs share breakpoints), integer values, last value 0
    const pcfArb = fc.uniqueArray(fc.integer({ min: 1, max: 12 }), { maxLength: 8 }).chain((ts) =>
      fc
        .array(fc.integer({ min: -4, max: 4 }), { minLength: ts.length, maxLength: ts.length })
        .map((vs) => [0, ...[...ts].sort((x, y) => x - y)].map((t, k) => [t, k === ts.length ? 0 : vs[k]!] as [number, number])),
    );
    fc.assert(
      fc.property(pcfArb, pcfArb, (fp, gp) => {
        const f = Pcf.from(fp);
        const g = Pcf.from(gp);
        expect(lpDistance(f, g)).toBe(referenceCdist([f], [g], 1)[0]![0]);
        expect(l2InnerProduct(f, g)).toBe(referenceCdist([f], [g], L2_INNER)[0]![0]);
        expectAllClose([lpDistance(f, g, 2), lpDistance(f, g, 3)], [referenceCdist([f], [g], 2)[0]![0]!, referenceCdist([f], [g], 3)[0]![0]!], { rtol: 1e-12 });
      }),
    );
  });

  it('integratePair picks the same value as the row kernels', () => {
    const a = randomPcfs({ n: 3, points: 8, seed: 9 });
    const row = fastCdist(pcfOp(3), a, a);
    const t = a.times as Float64Array;
    const v = a.values as Float64Array;
    const o = a.offsets;
    expect(integratePair(pcfOp(3), t, v, o[0]!, o[1]!, t, v, o[2]!, o[3]!, Number.MAX_VALUE)).toBe(row[0]![2]);
    expect(integratePair({ kind: 'lp', p: 1 }, t, v, o[0]!, o[1]!, t, v, o[2]!, o[3]!, Number.MAX_VALUE)).toBe(fastCdist(pcfOp(1), a, a)[0]![2]);
  });
});

describe('skip rules', () => {
  const set = randomPcfs({ n: 10, points: 6, seed: 21 });
  const upper = integrationLimit('float64');

  /** Runs every row of the n x n matrix as blocks of side 4, untouched entries stay NaN. */
  function blocked(op: PcfOp, skip: SkipRule): number[][] {
    const n = set.count;
    const out = new Float64Array(n * n).fill(NaN);
    for (let r0 = 0; r0 < n; r0 += 4) {
      for (let c0 = 0; c0 < n; c0 += 4) {
        const rows = { ...set, offsets: set.offsets.subarray(r0) };
        for (let r = 0; r < Math.min(4, n - r0); r++) {
          integrateRow(op, rows, r, set, c0, Math.min(c0 + 4, n), out, (r0 + r) * n + c0, skip, r0, 0, upper);
        }
      }
    }
    return Array.from({ length: n }, (_, i) => Array.from(out.subarray(i * n, (i + 1) * n)));
  }

  it("'skipDiagAndAbove' computes only j < i (pdist) and leaves the rest untouched", () => {
    const got = blocked(pcfOp(1), 'skipDiagAndAbove');
    const ref = referencePdist(pcfsOf(set), 1);
    // Skipped entries keep the NaN they started with; computed ones match the reference.
    expectAllClose(got, ref.map((row, i) => row.map((x, j) => (j < i ? x : NaN))), { rtol: 1e-12, nanEqual: true });
  });

  it("'skipDiagAndBelow' computes only j > i (pdist's transposed blocks), each at its own column, bit for bit pdist's", () => {
    for (const op of [pcfOp(1), pcfOp(2), pcfOp(3)]) {
      const got = blocked(op, 'skipDiagAndBelow');
      const below = blocked(op, 'skipDiagAndAbove');
      // Entry (i, j), j > i, is the distance of (j, i), computed with the two PCFs swapped.
      expect(got).toEqual(below.map((row, i) => row.map((_, j) => (j > i ? below[j]![i]! : NaN))));
    }
  });

  it("'skipAbove' computes only j <= i (l2Kernel)", () => {
    const got = blocked(L2_INNER, 'skipAbove');
    const ref = referenceL2Kernel(pcfsOf(set));
    expectAllClose(got, ref.map((row, i) => row.map((x, j) => (j <= i ? x : NaN))), { rtol: 1e-12, nanEqual: true });
  });

  it("'none' computes every pair (cdist)", () => {
    const got = blocked(pcfOp(2), 'none');
    expectAllClose(got, referenceCdist(pcfsOf(set), pcfsOf(set), 2), { rtol: 1e-12 });
  });

  it('compares global indices: a row whose columns all lie above the diagonal writes nothing', () => {
    const out = new Float64Array(3).fill(NaN);
    integrateRow(pcfOp(1), set, 0, set, 0, 3, out, 0, 'skipDiagAndAbove', 2, 5, upper);
    expect([...out]).toEqual([NaN, NaN, NaN]);
    // local row 0 is global row 1: columns 0 and 1 are computed, column 2 is not
    integrateRow(pcfOp(1), set, 0, set, 0, 3, out, 0, 'skipAbove', 1, 0, upper);
    expect(out[0]).toBe(0);
    expect(out[1]).toBe(lpDistance(pcfAt(set, 0), pcfAt(set, 1)));
    expect(out[2]).toBeNaN();
  });
});

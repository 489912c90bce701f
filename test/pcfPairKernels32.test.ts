import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { integrateRow, L2_INNER, pcfOp } from '../src/pcf/integrate.js';
import { l1Pair, l2InnerPair, l2Pair } from '../src/pcf/pairKernels.js';
import { l1Pair32, l2InnerPair32, l2Pair32 } from '../src/pcf/pairKernels32.js';
import { FLOAT32_MAX, Pcf } from '../src/pcf/pcf.js';
import { randomPcfs } from '../src/pcf/random.js';
import { expectAllClose } from './helpers/closeTo.js';

type Kernel = typeof l1Pair;
type Kind = 'l1' | 'l2' | 'inner';
const KERNELS: Record<Kind, { f32: Kernel; f64: Kernel }> = {
  l1: { f32: l1Pair32, f64: l1Pair },
  l2: { f32: l2Pair32, f64: l2Pair },
  inner: { f32: l2InnerPair32, f64: l2InnerPair },
};
const f = Math.fround;

/** Runs a pair kernel on two PCFs given as [time, value] lists (rounded to float32 as a float32 Pcf is). */
function run(kernel: Kernel, a: Array<[number, number]>, b: Array<[number, number]>): number {
  const [x, y] = [Pcf.from(a, { dtype: 'float32' }), Pcf.from(b, { dtype: 'float32' })];
  const w = (p: Pcf): [Float64Array, Float64Array] => [new Float64Array(p.times), new Float64Array(p.values)];
  const [at, av] = w(x);
  const [bt, bv] = w(y);
  return kernel(at, av, 0, x.size, bt, bv, 0, y.size, FLOAT32_MAX);
}

/**
 * The plain float32 sum the kernels must equal: the pieces between consecutive breakpoints of
 * both PCFs, left to right, each PCF evaluated at the piece's left end, every operation rounded to
 * float32; the last piece ends at the largest float32 (none after a breakpoint there). Where that
 * loses the result (not finite; for L2 also a sum, or the square of the last values' difference,
 * below 2^-102, 2^24 times the smallest normal float32; for the inner product also the last values'
 * product below 2^-102), the float64 kernel's result rounded to float32.
 */
function pieceByPiece(kind: Kind, a: Array<[number, number]>, b: Array<[number, number]>): number {
  const [x, y] = [Pcf.from(a, { dtype: 'float32' }), Pcf.from(b, { dtype: 'float32' })];
  const cuts = [...new Set([...x.times, ...y.times])].sort((p, q) => p - q);
  let sum = 0;
  for (let k = 0; k < cuts.length && cuts[k]! < FLOAT32_MAX; k++) {
    const [fv, gv] = [x.evaluate(cuts[k]!), y.evaluate(cuts[k]!)];
    const d = f(fv - gv);
    const value = kind === 'l1' ? Math.abs(d) : kind === 'l2' ? f(d * d) : f(fv * gv);
    sum = f(sum + f(f((cuts[k + 1] ?? FLOAT32_MAX) - cuts[k]!) * value));
  }
  const min = 2 ** -102;
  const d = f(x.values[x.size - 1]! - y.values[y.size - 1]!);
  const product = x.values[x.size - 1]! * y.values[y.size - 1]!;
  const lost = kind === 'l2' ? !(sum >= min && sum < Infinity) || (d !== 0 && f(d * d) < min) : !Number.isFinite(sum) || (kind === 'inner' && product !== 0 && Math.abs(f(product)) < min);
  if (lost) return f(run(KERNELS[kind].f64, a, b));
  return kind === 'l2' ? f(Math.sqrt(sum)) : sum;
}

describe('float32 pair kernels', () => {
  it('give the known answers, exact in float32', () => {
    expect(run(l1Pair32, [[0, 10], [2, 5], [3, 0]], [[0, 5], [6, 0]])).toBe(25);
    expect(run(l1Pair32, [[0, 6], [3, 0]], [[0, 2], [1, 4], [2, 0]])).toBe(12);
    expect(run(l2Pair32, [[0, 6], [3, 0]], [[0, 2], [1, 4], [2, 0]])).toBe(f(Math.sqrt(16 + 4 + 36)));
    expect(run(l2InnerPair32, [[0, 4], [3, 0]], [[0, 2], [3, 0]])).toBe(24);
    expect(run(l1Pair32, [[0, 1]], [[0, 0]])).toBe(FLOAT32_MAX);
  });

  it('equal the plain float32 piece-by-piece sum bit for bit, on shared, random and limit times (fast-check)', () => {
    const value = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.double({ min: -1e3, max: 1e3, noNaN: true }));
    const time = fc.oneof(fc.integer({ min: 1, max: 12 }).map((k) => k / 4), fc.double({ min: 1e-3, max: 1e6, noNaN: true }), fc.constant(FLOAT32_MAX));
    const pcf = fc.uniqueArray(time.map(f), { maxLength: 12 }).chain((ts) => {
      const times = [0, ...[...ts].sort((p, q) => p - q)];
      return fc.array(value, { minLength: times.length, maxLength: times.length }).map((vs) => times.map((t, k): [number, number] => [t, vs[k]!]));
    });
    fc.assert(fc.property(pcf, pcf, (a, b) => {
      for (const kind of ['l1', 'l2', 'inner'] as const) expect(run(KERNELS[kind].f32, a, b)).toBe(pieceByPiece(kind, a, b));
    }), { numRuns: 500 });
  });

  it('end the walk at a breakpoint on the integration limit, adding nothing after it', () => {
    expect(run(l1Pair32, [[0, 1], [FLOAT32_MAX, 1e30]], [[0, 0]])).toBe(FLOAT32_MAX);
    expect(run(l1Pair32, [[0, 1], [FLOAT32_MAX, 1e30]], [[0, 0], [FLOAT32_MAX, -1e30]])).toBe(FLOAT32_MAX);
  });

  it('compute in float64 and round once where float32 loses the result, as float32 results were computed before', () => {
    const cases: Array<[Kind, Array<[number, number]>, Array<[number, number]>, number]> = [
      ['l1', [[0, 2]], [[0, 0]], Infinity], // 2 x the largest float32 overflows either way
      ['l1', [[0, 3e38], [1, 0]], [[0, -3e38], [1, 0]], f(6e38)], // |f - g| overflows float32 only
      ['l2', [[0, 2]], [[0, 0]], f(Math.sqrt(4 * FLOAT32_MAX))], // the float32 sum overflows, its root does not
      ['l2', [[0, 1e-30], [1, 0]], [[0, 0]], f(1e-30)], // (1e-30)^2 underflows float32
      ['inner', [[0, 2e19], [1, -2e19], [2, 0]], [[0, 2e19], [2, 0]], 0], // Infinity - Infinity in float32
      ['inner', [[0, 3e38], [1, 0]], [[0, 3e38], [1, 0]], Infinity],
      // The last values' product underflows float32 (1e-46: 0; 9e-46: a subnormal of one bit)
      // while the last rectangle, as wide as the largest float32, makes it count.
      ['inner', [[0, 1e-23]], [[0, 1e-23]], f(FLOAT32_MAX * f(1e-23) * f(1e-23))],
      ['inner', [[0, 1], [1, 3e-23]], [[0, 2], [2, 3e-23]], f(2 + 2 * 3 * f(3e-23) + (FLOAT32_MAX - 2) * f(3e-23) * f(3e-23))],
    ];
    for (const [kind, a, b, expected] of cases) {
      expect(run(KERNELS[kind].f32, a, b)).toBe(expected);
      expect(run(KERNELS[kind].f32, a, b)).toBe(f(run(KERNELS[kind].f64, a, b)));
    }
  });

  it('stay within 5e-6 of the largest entry of the float64 results on 200-breakpoint random PCFs', () => {
    // Measured: at most 9e-7 (L1), 5e-7 (L2), 8e-7 (inner product) relative to the largest entry
    // of a row; about 2e-6 with 1,000 breakpoints. The bound is that of the GPU's float32 sums.
    const set = randomPcfs({ n: 40, points: 200, seed: 17, dtype: 'float32' });
    const wide = { times: new Float64Array(set.times), values: new Float64Array(set.values), offsets: set.offsets };
    for (const op of [pcfOp(1), pcfOp(2), L2_INNER]) {
      for (let i = 0; i < set.count; i++) {
        const [got, want] = [new Float32Array(set.count), new Float64Array(set.count)];
        integrateRow(op, set, i, set, 0, set.count, got, 0, 'none', 0, 0, FLOAT32_MAX);
        integrateRow(op, wide, i, wide, 0, set.count, want, 0, 'none', 0, 0, FLOAT32_MAX);
        const largest = Math.max(...want.map(Math.abs));
        expectAllClose(got, want, { atol: 5e-6 * largest, what: `${op.kind} row ${i}` });
        expect(Array.from(got)).not.toEqual(Array.from(want, f)); // summed in float32, not rounded float64 sums
      }
    }
  });
});

import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { OptionError } from '../src/core/errors.js';
import { pcfAt, pcfSetFrom } from '../src/pcf/pcfSet.js';
import type { PcfSet } from '../src/pcf/pcfSet.js';
import { randomPcfs, RANDOM_TIME_SPAN, SeededRng } from '../src/pcf/random.js';

/** The first broken invariant of the generator's promise, or undefined; checked on the flat arrays. */
function brokenInvariant(set: PcfSet, n: number, points: number): string | undefined {
  if (set.count !== n || set.shape.length !== 1 || set.shape[0] !== n) return `count ${set.count}, shape [${set.shape.join(', ')}]`;
  if (set.offsets.length !== n + 1) return `offsets length ${set.offsets.length}`;
  for (let i = 0; i < n; i++) {
    const at = set.offsets[i]!;
    if (at !== i * points || set.offsets[i + 1]! - at !== points) return `PCF ${i}: offsets ${at}..${set.offsets[i + 1]}`;
    if (set.times[at] !== 0) return `PCF ${i}: t0 = ${set.times[at]}`;
    for (let k = 1; k < points; k++) {
      const t = set.times[at + k]!;
      if (!(t > set.times[at + k - 1]!) || !(t < RANDOM_TIME_SPAN)) return `PCF ${i}: time ${k} = ${t}`;
    }
    for (let k = 0; k < points - 1; k++) {
      const v = set.values[at + k]!;
      if (!(v >= 0 && v < 1)) return `PCF ${i}: value ${k} = ${v}`;
    }
    if (set.values[at + points - 1] !== 0) return `PCF ${i}: last value ${set.values[at + points - 1]}`;
  }
  return undefined;
}

describe('SeededRng', () => {
  it('repeats its stream for the same seed and differs for another', () => {
    const a = new SeededRng(7);
    const b = new SeededRng(7);
    const c = new SeededRng(8);
    const xs = Array.from({ length: 8 }, () => a.nextUint32());
    expect(Array.from({ length: 8 }, () => b.nextUint32())).toEqual(xs);
    expect(Array.from({ length: 8 }, () => c.nextUint32())).not.toEqual(xs);
  });

  it('tells apart seeds that differ only above 32 bits', () => {
    expect(new SeededRng(1).nextUint32()).not.toBe(new SeededRng(1 + 2 ** 32).nextUint32());
  });

  it('draws doubles in [0, 1) with a mean near 1/2 and all 32-bit words unsigned', () => {
    const rng = new SeededRng(123);
    let sum = 0;
    let min = Infinity;
    let max = -Infinity;
    const n = 20_000;
    for (let k = 0; k < n; k++) {
      const x = rng.nextDouble();
      sum += x;
      min = Math.min(min, x);
      max = Math.max(max, x);
    }
    expect(min).toBeGreaterThanOrEqual(0);
    expect(max).toBeLessThan(1);
    // standard error of the mean of U(0,1) over 20k draws is about 0.002
    expect(Math.abs(sum / n - 0.5)).toBeLessThan(0.01);
    const words = Array.from({ length: 100 }, () => rng.nextUint32());
    expect(words.every((u) => Number.isInteger(u) && u >= 0 && u <= 0xffff_ffff)).toBe(true);
    expect(words.some((u) => u >= 2 ** 31)).toBe(true);
  });
});

describe('randomPcfs', () => {
  it('is deterministic: the same options give the same PCFs', () => {
    const a = randomPcfs({ n: 20, points: 10, seed: 42 });
    const b = randomPcfs({ n: 20, points: 10, seed: 42 });
    expect(b.times).toEqual(a.times);
    expect(b.values).toEqual(a.values);
    const c = randomPcfs({ n: 20, points: 10, seed: 43 });
    expect(c.times).not.toEqual(a.times);
  });

  it('satisfies the distribution invariants in both dtypes', () => {
    expect(brokenInvariant(randomPcfs({ n: 50, points: 100, seed: 1 }), 50, 100)).toBeUndefined();
    const f32 = randomPcfs({ n: 50, points: 100, seed: 1, dtype: 'float32' });
    expect(f32.times).toBeInstanceOf(Float32Array);
    expect(brokenInvariant(f32, 50, 100)).toBeUndefined();
  });

  it('satisfies the invariants for any small n, points and seed (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 6 }), fc.integer({ min: 1, max: 12 }), fc.nat(), fc.constantFrom('float64' as const, 'float32' as const), (n, points, seed, dtype) => {
        expect(brokenInvariant(randomPcfs({ n, points, seed, dtype }), n, points)).toBeUndefined();
      }),
    );
  });

  it('gives float64 PCFs whose times stay distinct rounded to float32, so --dtype float32 takes them', () => {
    // Seed 107 drew, in PCF 511, two times that differ in float64 and round to one float32.
    const set = randomPcfs({ n: 1000, points: 20, seed: 107 });
    const rounded = pcfSetFrom(Array.from({ length: set.count }, (_, i) => pcfAt(set, i)), 'float32');
    expect(rounded.count).toBe(1000);
  });

  it('produces PCFs that pass validation', () => {
    const set = randomPcfs({ n: 5, points: 30, seed: 2, dtype: 'float32' });
    for (let k = 0; k < set.count; k++) expect(pcfAt(set, k).size).toBe(30);
  });

  it('spreads times over [0, 10) and values over [0, 1)', () => {
    const set = randomPcfs({ n: 200, points: 50, seed: 5 });
    let tSum = 0;
    let vSum = 0;
    let count = 0;
    for (let i = 0; i < set.count; i++) {
      for (let k = 1; k < 49; k++) {
        tSum += set.times[i * 50 + k]!;
        vSum += set.values[i * 50 + k]!;
        count++;
      }
    }
    expect(Math.abs(tSum / count - 5)).toBeLessThan(0.1);
    expect(Math.abs(vSum / count - 0.5)).toBeLessThan(0.02);
  });

  it('allocates shared memory when asked', () => {
    expect(randomPcfs({ n: 2, points: 3, shared: true }).times.buffer).toBeInstanceOf(SharedArrayBuffer);
  });

  it('rejects bad options with messages naming them', () => {
    expect(() => randomPcfs({ n: -1, points: 3 })).toThrow(new OptionError('n must be an integer in [0, 2147483647], got -1'));
    expect(() => randomPcfs({ n: 1, points: 0 })).toThrow(new OptionError('points must be an integer in [1, 2147483647], got 0'));
    expect(() => randomPcfs({ n: 1, points: 2, seed: 1.5 })).toThrow(new OptionError('seed must be an integer in [0, 9007199254740991], got 1.5'));
    expect(() => randomPcfs({ n: 1, points: 2, dtype: 'int8' as 'float32' })).toThrow(new OptionError("dtype must be one of 'float64', 'float32', got 'int8'"));
    expect(() => randomPcfs({ n: 70_000, points: 70_000 })).toThrow(new OptionError('n * points must be at most 2147483647 (the most breakpoints a PCF set holds), got 70000 * 70000 = 4900000000; lower n or points'));
  });
});

import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { OptionError, PcfError } from '../src/core/errors.js';
import { FLOAT32_MAX, integrationLimit, Pcf } from '../src/pcf/pcf.js';

function rejection(fn: () => unknown): PcfError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(PcfError);
    return err as PcfError;
  }
  throw new Error('expected a PcfError');
}

describe('Pcf.from', () => {
  it('keeps sorted breakpoints as float64 by default', () => {
    const f = Pcf.from([[0, 10], [2, 5], [3, 0]]);
    expect(f.dtype).toBe('float64');
    expect(f.times).toBeInstanceOf(Float64Array);
    expect([...f.times]).toEqual([0, 2, 3]);
    expect([...f.values]).toEqual([10, 5, 0]);
    expect(f.size).toBe(3);
  });

  it('sorts unsorted breakpoints by time, moving values with their times', () => {
    const f = Pcf.from([[3, 0], [0, 10], [2, 5]]);
    expect(f.points()).toEqual([[0, 10], [2, 5], [3, 0]]);
  });

  it('stores float32 PCFs in Float32Arrays with values rounded on construction', () => {
    const f = Pcf.from([[0, 0.1], [0.3, 1 / 3]], { dtype: 'float32' });
    expect(f.times).toBeInstanceOf(Float32Array);
    expect(f.values).toBeInstanceOf(Float32Array);
    expect(f.values[0]).toBe(Math.fround(0.1));
    expect(f.times[1]).toBe(Math.fround(0.3));
    expect(f.values[1]).toBe(Math.fround(1 / 3));
  });

  it('accepts a single breakpoint at time 0 and turns -0 into 0', () => {
    const f = Pcf.from([[-0, 7]]);
    expect(f.size).toBe(1);
    expect(Object.is(f.times[0], 0)).toBe(true);
  });

  it('copies its input, so later changes to the points do not leak in', () => {
    const pts: Array<[number, number]> = [[0, 1], [1, 0]];
    const f = Pcf.from(pts);
    pts[0]![1] = 99;
    expect(f.values[0]).toBe(1);
  });

  it('rejects an empty PCF', () => {
    const err = rejection(() => Pcf.from([], { index: 4 }));
    expect(err.message).toBe('PCF 4: has no breakpoints; a PCF starts with a breakpoint at time 0');
    expect(err.pcfIndex).toBe(4);
    expect(err.code).toBe('PXL_PCF_INVALID');
  });

  it('rejects a breakpoint that is not a pair of numbers', () => {
    const bad = [[0, 1], [1, 'x']] as unknown as Array<[number, number]>;
    expect(rejection(() => Pcf.from(bad, { index: 2 })).message).toBe("PCF 2: breakpoint 1 is not a [t, v] pair of numbers (got 'x')");
    const nul = [[0, 1], null] as unknown as Array<[number, number]>;
    expect(rejection(() => Pcf.from(nul)).message).toBe('PCF 0: breakpoint 1 is not a [t, v] pair of numbers (got null)');
  });

  it('rejects non-finite times, naming the breakpoint in input order', () => {
    expect(rejection(() => Pcf.from([[0, 1], [NaN, 2]], { index: 3 })).message).toBe('PCF 3: breakpoint 1 has a non-finite time (NaN)');
    expect(rejection(() => Pcf.from([[0, 1], [Infinity, 2]])).message).toBe('PCF 0: breakpoint 1 has a non-finite time (Infinity)');
  });

  it('rejects non-finite values', () => {
    expect(rejection(() => Pcf.from([[0, 1], [1, -Infinity]])).message).toBe('PCF 0: breakpoint 1 has a non-finite value (-Infinity)');
    expect(rejection(() => Pcf.from([[0, NaN]], { index: 9 })).message).toBe('PCF 9: breakpoint 0 has a non-finite value (NaN)');
  });

  it('rejects negative times', () => {
    expect(rejection(() => Pcf.from([[0, 1], [-1, 2]], { index: 1 })).message).toBe('PCF 1: breakpoint 1 has a negative time (-1)');
  });

  it('rejects a PCF whose earliest breakpoint is not at time 0', () => {
    expect(rejection(() => Pcf.from([[2, 1], [0.5, 2]], { index: 5 })).message).toBe(
      'PCF 5: the first breakpoint must be at time 0, but the earliest is breakpoint 1 at time 0.5',
    );
  });

  it('rejects duplicate times, naming both breakpoints in input order', () => {
    expect(rejection(() => Pcf.from([[0, 1], [2, 2], [1, 0], [2, 3]], { index: 7 })).message).toBe(
      'PCF 7: breakpoints 1 and 3 have the same time (2)',
    );
  });

  it('rejects times that only collide after rounding to float32', () => {
    expect(rejection(() => Pcf.from([[0, 1], [1, 2], [1 + 1e-12, 3]], { dtype: 'float32' })).message).toBe(
      "PCF 0: breakpoints 1 and 2 have the same time (1) in float32, where the input's times 1 and 1.000000000001 differ; read it as float64 (--dtype float64; dtype: 'float64') to keep them apart",
    );
  });

  it('rejects finite numbers that overflow float32', () => {
    expect(rejection(() => Pcf.from([[0, 1e39]], { dtype: 'float32' })).message).toBe('PCF 0: breakpoint 0 has value 1e+39, which overflows float32; read it as float64 (--dtype float64; dtype: \'float64\')');
    expect(rejection(() => Pcf.from([[0, 1], [1e39, 0]], { dtype: 'float32' })).message).toBe('PCF 0: breakpoint 1 has time 1e+39, which overflows float32; read it as float64 (--dtype float64; dtype: \'float64\')');
  });

  it('rejects an unknown dtype with an OptionError', () => {
    expect(() => Pcf.from([[0, 1]], { dtype: 'int8' as 'float32' })).toThrow(new OptionError("dtype must be one of 'float64', 'float32', got 'int8'"));
  });
});

describe('Pcf.evaluate', () => {
  const f = Pcf.from([[0, 10], [2, 5], [3, 0]]);

  it('returns the value of the last breakpoint at or before t', () => {
    expect([0, 1.99, 2, 2.5, 3, 1e300].map((t) => f.evaluate(t))).toEqual([10, 10, 5, 5, 0, 0]);
  });

  it('rejects negative or NaN times', () => {
    expect(() => f.evaluate(-1)).toThrow(new OptionError('t must be a number >= 0, got -1'));
    expect(() => f.evaluate(NaN)).toThrow(new OptionError('t must be a number >= 0, got NaN'));
  });

  it('agrees with a linear scan for any valid PCF (property)', () => {
    const pcfArb = fc
      .uniqueArray(fc.double({ min: 0.001, max: 100, noNaN: true }), { maxLength: 20 })
      .chain((ts) => fc.tuple(fc.constant([0, ...ts]), fc.array(fc.double({ min: -5, max: 5, noNaN: true }), { minLength: ts.length + 1, maxLength: ts.length + 1 })));
    fc.assert(
      fc.property(pcfArb, fc.double({ min: 0, max: 120, noNaN: true }), ([ts, vs], t) => {
        const g = Pcf.from(ts.map((x, k) => [x, vs[k]!] as [number, number]));
        const sorted = g.points();
        let expected = sorted[0]![1];
        for (const [tk, vk] of sorted) if (tk <= t) expected = vk;
        expect(g.evaluate(t)).toBe(expected);
      }),
    );
  });
});

describe('integrationLimit', () => {
  it('is the largest finite float of the dtype', () => {
    expect(integrationLimit('float64')).toBe(1.7976931348623157e308);
    expect(integrationLimit('float32')).toBe(3.4028234663852886e38);
    expect(FLOAT32_MAX).toBe(Math.fround(FLOAT32_MAX));
    expect(Math.fround(FLOAT32_MAX * (1 + 2 ** -23))).toBe(Infinity);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cdist, createContext, l2Kernel, OptionError, pdist, randomPcfs, UnsupportedError, type Context } from '../src/index.js';
import { gpu } from './fixtures/wgslGpu.js';
import { FLOAT32_MAX } from '../src/pcf/pcf.js';
import { expectAllClose } from './helpers/closeTo.js';

/**
 * GPU pdist/cdist/l2Kernel against the CPU cores. Reference: the CPU backend with dtype float32,
 * which integrates float32 inputs in float64 and rounds once; the GPU sums in float32, so entries
 * agree to float32 accumulation error: 5e-6 relative to the largest entry, about 40 float32 ulps
 * (random PCFs of 20 breakpoints give about 40 rectangles per pair; llvmpipe measured 3e-7).
 */
function expectClose(actual: ArrayLike<number>, expected: ArrayLike<number>): void {
  let scale = 1;
  for (let k = 0; k < expected.length; k++) scale = Math.max(scale, Math.abs(expected[k]!));
  expectAllClose(actual, expected, { atol: 5e-6 * scale });
}

describe.runIf(gpu.run)('PCF block operations on the GPU', () => {
  let ctx: Context;
  const xs = randomPcfs({ n: 150, points: 20, seed: 7, dtype: 'float32' });
  const ys = randomPcfs({ n: 70, points: 13, seed: 8, dtype: 'float32' });
  // Small blocks, so a run has many blocks, partial ones and diagonal ones.
  const blocks = { maxOutputElements: 2000, minBlockSide: 16 };

  beforeAll(async () => {
    ctx = await createContext({ backend: 'webgpu' });
  });

  afterAll(async () => {
    await ctx?.destroy();
  });

  it('gives the known answers of small inputs', async () => {
    const d = await pdist([[[0, 10], [2, 5], [3, 0]], [[0, 5], [6, 0]]], { device: 'gpu' });
    expect(d.dtype).toBe('float32');
    expect(d.get(1, 0)).toBe(25);
    const k = await l2Kernel([[[0, 4], [3, 0]], [[0, 2], [3, 0]]], { context: ctx });
    expect(Array.from(k.toSquare().data)).toEqual([48, 24, 24, 12]);
  });

  it.each([1, 2, 3, 2.5])('pdist with p = %s agrees with CPU cores', async (p) => {
    const [onGpu, onCpu] = [await pdist(xs, { context: ctx, p, ...blocks }), await pdist(xs, { p, ...blocks })];
    expect(onGpu.dtype).toBe('float32');
    expectClose(onGpu.condensed, onCpu.condensed);
  });

  it('l2Kernel agrees with CPU cores', async () => {
    const [onGpu, onCpu] = [await l2Kernel(xs, { context: ctx, ...blocks }), await l2Kernel(xs, blocks)];
    expectClose(onGpu.packed, onCpu.packed);
  });

  it.each(['distance', 'l2Inner'] as const)('cdist (%s) agrees with CPU cores', async (op) => {
    const opts = op === 'distance' ? { op, p: 2 } : { op };
    const [onGpu, onCpu] = [await cdist(xs, ys, { context: ctx, ...opts, ...blocks }), await cdist(xs, ys, { ...opts, ...blocks })];
    expect(onGpu.shape).toEqual([150, 70]);
    expectClose(onGpu.data, onCpu.data);
  });

  it('runs with its default block sizes and converts float64 input to float32', async () => {
    const set = randomPcfs({ n: 300, points: 10, seed: 3 });
    const [onGpu, onCpu] = [await pdist(set, { context: ctx }), await pdist(set, { dtype: 'float32' })];
    expect(onGpu.dtype).toBe('float32');
    expectClose(onGpu.condensed, onCpu.condensed);
  });

  it('refuses float64 with a message that says what to use', async () => {
    await expect(pdist(xs, { context: ctx, dtype: 'float64' })).rejects.toThrow(
      new UnsupportedError("dtype 'float64' cannot run on the GPU: WGSL has no 64-bit floats; pass dtype: 'float32', or device: 'cpu' for float64"),
    );
  });

  it('refuses a device that contradicts the context', async () => {
    await expect(pdist(xs, { context: ctx, device: 'cpu' })).rejects.toThrow(
      new OptionError("device 'cpu' does not match the context, whose backend is 'webgpu'; pass a context of that kind or leave device out"),
    );
  });

  describe('large p: float32 range', () => {
    // Reference: the CPU cores with dtype float32, which integrate in float64 (rescaling pairs whose
    // |f - g|^p sum left the float64 range) and round once. The GPU sums in float32 and recomputes
    // the pairs whose float32 sum lost range with the scaled form m * (sum of w (|d| / m)^p)^(1/p);
    // its pow has about 2^-21 absolute error in the exponent, which the 1/p root turns into about
    // 3e-7 relative error, so entries agree to 2e-6 relative.
    const tolerance = { rtol: 2e-6 };
    const set = randomPcfs({ n: 40, points: 10, seed: 5, dtype: 'float32' });

    // p = 1e300 is beyond float32: the GPU runs it as 2^32, the same float32 distance to one ulp.
    it.each([1000, 1e6, 1e300])('pdist with p = %s on 40 random PCFs has no zero and no Infinity off the diagonal, and agrees with CPU cores', async (p) => {
      const [onGpu, onCpu] = [await pdist(set, { context: ctx, p, ...blocks }), await pdist(set, { p, ...blocks })];
      expect(Array.from(onGpu.condensed).filter((x) => !(x > 0 && x < Infinity))).toEqual([]);
      expectAllClose(onGpu.condensed, onCpu.condensed, { ...tolerance, what: `pdist with p = ${p}` });
    });

    it('is not 0 for differences below 1 at p = 1000', async () => {
      // 0.4^1000 is 0 in float32 (and in float64); the distance is 0.4 * 3^(1/1000).
      const d = await pdist([[[0, 0.4], [3, 0]], [[0, 0]]], { context: ctx, p: 1000 });
      expectAllClose([d.get(1, 0)], [Math.fround(0.4) * Math.pow(3, 1 / 1000)], tolerance);
    });

    // 0.5^130 is below the normal float32 range, yet over the last rectangle (2^128 wide) it adds
    // a quarter to the integral: the distance is (1 + (FLOAT32_MAX - 1) * 2^-130)^(1/130), not 1.
    it('counts a last rectangle whose |f - g|^p is below the float32 range', async () => {
      const d = await pdist([[[0, 1], [1, 0.5]], [[0, 0]]], { context: ctx, p: 130 });
      expectAllClose([d.get(1, 0)], [Math.pow(1 + (FLOAT32_MAX - 1) * 2 ** -130, 1 / 130)], tolerance);
    });

    // Differences near the largest float32 over short widths: |f - g|^2 overflows float32, the
    // distance (sqrt(w) |f - g|) does not.
    it.each([0.25, 1])('is finite for p = 2 when a difference of 3e38 lasts %s', async (w) => {
      const input: [number, number][][] = [[[0, 3e38], [w, 0]], [[0, 0]]];
      const [onGpu, onCpu] = [await pdist(input, { context: ctx, p: 2 }), await pdist(input, { p: 2, dtype: 'float32' })];
      expectAllClose([onCpu.get(1, 0), onGpu.get(1, 0)], [Math.sqrt(w) * Math.fround(3e38), Math.sqrt(w) * Math.fround(3e38)], tolerance);
    });

    const f = Math.fround;
    // The sum overflows float32 and the last rectangle, 2^128 wide, carries most of the distance
    // with a difference 2^-65 of the largest: (h / m)^2 is below the normal range, w (h / m)^2 is not.
    it('recomputes an L2 distance within the rescue\'s 2e-6 where the largest difference dwarfs the last', async () => {
      const input: [number, number][][] = [[[0, -4e18]], [[0, 1.8e38], [0.001, 0]]];
      const [a, b, w] = [f(-4e18), f(1.8e38), f(0.001)];
      const expected = Math.sqrt(w * (b - a) ** 2 + (FLOAT32_MAX - w) * a ** 2);
      const [onGpu, onCpu] = [await pdist(input, { context: ctx, p: 2 }), await pdist(input, { p: 2, dtype: 'float32' })];
      expectAllClose([onCpu.get(1, 0)], [expected], { rtol: 5e-7 });
      // A GPU may divide and take square roots a few ulps off (Vulkan allows 2.5 ulps for a
      // division): an H200 came within 1.8e-6 here, llvmpipe within 5e-7. Before the ratio h / m was
      // formed with m's exponent apart, the H200 flushed 1 / m to 0 and lost the last term (7.7%).
      expectAllClose([onGpu.get(1, 0)], [expected], { rtol: 2e-6 });
    });

    // A term overflows float32 where the integral does not (|3e38 - -3e38| over 0.25; 2e19 * 2e19
    // over 0.5), or terms overflow both ways (Infinity - Infinity) where the integral is 0; and
    // Infinity, with its sign, only where the integral exceeds the largest float32.
    const sums: [string, 'l1' | 'inner', [number, number][][], number][] = [
      ['an L1 difference', 'l1', [[[0, 3e38], [0.25, 0]], [[0, -3e38], [0.25, 0]]], 0.25 * 2 * f(3e38)],
      ['an inner product', 'inner', [[[0, 2e19], [0.5, 0]], [[0, 2e19], [0.5, 0]]], 0.5 * f(2e19) ** 2],
      ['inner products both ways', 'inner', [[[0, 2e19], [1, -2e19], [2, 0]], [[0, 2e19], [2, 0]]], 0],
      ['an inner product beyond float32', 'inner', [[[0, 3e38], [1, 0]], [[0, -3e38], [1, 0]]], -Infinity],
    ];
    it.each(sums)('sums %s overflowing float32 alike on both paths', async (_, kind, input, expected) => {
      const run = (options: { context?: Context; dtype?: 'float32' }) =>
        kind === 'l1' ? pdist(input, options).then((d) => d.get(1, 0)) : cdist([input[0]!], [input[1]!], { ...options, op: 'l2Inner' }).then((t) => t.data[0]!);
      const [onGpu, onCpu] = [await run({ context: ctx }), await run({ dtype: 'float32' })];
      expectAllClose([onCpu, onGpu], [expected, expected], tolerance);
    });

    // The last values' product underflows float32 (1e-23 * 1e-23 is 0, 3e-23 * 3e-23 a one-bit
    // subnormal) while the last rectangle, as wide as the largest float32, makes it count.
    it('counts a last rectangle whose inner product is below the float32 range, as the CPU cores do', async () => {
      const input: [number, number][][] = [[[0, 1e-23]], [[0, 1], [1, 3e-23]], [[0, 2], [2, -3e-23]]];
      const [onGpu, onCpu] = [await l2Kernel(input, { context: ctx }), await l2Kernel(input, { dtype: 'float32' })];
      expectAllClose([onCpu.get(0, 0), onCpu.get(1, 1)], [FLOAT32_MAX * f(1e-23) ** 2, 1 + (FLOAT32_MAX - 1) * f(3e-23) ** 2], tolerance);
      expectAllClose(onGpu.packed, onCpu.packed, tolerance);
    });

    // The last values differ over [0, largest float32): the sum overflows float32, the distance does not.
    const finite: [number, number, number][] = [
      [2, 2, 2 * Math.sqrt(FLOAT32_MAX)],
      [3, 2, 2 * Math.cbrt(FLOAT32_MAX)],
      [2.5, 2, 2 * Math.pow(FLOAT32_MAX, 1 / 2.5)],
      [1e6, 1e30, 1e30 * Math.pow(FLOAT32_MAX, 1e-6)],
    ];
    it.each(finite)('is finite for p = %s when the last values differ by %s', async (p, diff, expected) => {
      const input: [number, number][][] = [[[0, diff]], [[0, 0]]];
      const [onGpu, onCpu] = [await pdist(input, { context: ctx, p }), await pdist(input, { p, dtype: 'float32' })];
      expectAllClose([onCpu.get(1, 0)], [expected], tolerance);
      expectAllClose([onGpu.get(1, 0)], [expected], tolerance);
    });

    // Both paths give Infinity only where the distance itself exceeds the largest float32: the CPU
    // cores compute it in float64 (1e30 * sqrt(FLOAT32_MAX) = 1.8e49 at p = 2; at least the largest
    // difference, 6e38, at p = 1e6) and rounding to float32 gives Infinity. A difference of 3e38
    // at p = 1e6 stays finite: 3e38 * FLOAT32_MAX^(1e-6).
    const near = Math.fround(3e38) * Math.pow(FLOAT32_MAX, 1e-6);
    const beyond: [number, [number, number][][], number[]][] = [
      [2, [[[0, 1e30]], [[0, 0]], [[0, -1e30]]], [Infinity, Infinity, Infinity]],
      [1e6, [[[0, 3e38]], [[0, 0]], [[0, -3e38]]], [near, Infinity, near]],
    ];
    it.each(beyond)('is Infinity for p = %s on both paths only where the distance exceeds the largest float32', async (p, input, expected) => {
      const [onGpu, onCpu] = [await pdist(input, { context: ctx, p }), await pdist(input, { p, dtype: 'float32' })];
      expectAllClose(onCpu.condensed, expected, { ...tolerance, what: 'CPU cores' });
      expectAllClose(onGpu.condensed, expected, { ...tolerance, what: 'GPU' });
    });

    it('agrees with CPU cores in a multi-device run with p = 1000', async () => {
      const cpu = await createContext();
      try {
        const [both, onCpu] = [await pdist(set, { devices: [ctx, cpu], p: 1000, ...blocks }), await pdist(set, { p: 1000, ...blocks })];
        expectAllClose(both.condensed, onCpu.condensed, { ...tolerance, what: 'pdist on a GPU and CPU cores' });
      } finally {
        await cpu.destroy();
      }
    });
  });

  it('frees what it allocated on a caller\'s context', async () => {
    const before = ctx.availableMemSize;
    await pdist(xs, { context: ctx, ...blocks });
    expect(ctx.availableMemSize).toBe(before);
    expect(ctx.availableSubCount).toBe(1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cdist, createContext, l2Kernel, OptionError, pdist, randomPcfs, UnsupportedError, type Context } from '../src/index.js';
import { gpu } from './fixtures/wgslGpu.js';
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

  it('frees what it allocated on a caller\'s context', async () => {
    const before = ctx.availableMemSize;
    await pdist(xs, { context: ctx, ...blocks });
    expect(ctx.availableMemSize).toBe(before);
    expect(ctx.availableSubCount).toBe(1);
  });
});

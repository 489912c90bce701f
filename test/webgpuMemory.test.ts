import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArgumentError, createContext, OutOfMemoryError, StateError, type Context } from '../src/index.js';
import { gpu } from './fixtures/wgslGpu.js';

describe.runIf(gpu.run)('webgpu device memory', () => {
  let ctx: Context;

  beforeAll(async () => {
    ctx = await createContext({ backend: 'webgpu', memorySize: 1 << 20 });
  });

  afterAll(async () => {
    await ctx?.destroy();
  });

  it('is zero-filled on allocation', async () => {
    const ptr = ctx.memAlloc(37);
    const out = new Uint8Array(37).fill(9);
    await ctx.copyFromDevice(out, ptr);
    expect(out).toEqual(new Uint8Array(37));
    ctx.memFree(ptr);
  });

  it('round-trips bytes at any offset and length, leaving the rest untouched', async () => {
    const size = 64;
    const ptr = ctx.memAlloc(size);
    const mirror = new Uint8Array(size);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: size }), fc.uint8Array({ minLength: 0, maxLength: size }), async (at, data) => {
        const bytes = data.subarray(0, size - at);
        await ctx.copyToDevice(ptr.add(at), bytes);
        mirror.set(bytes, at);
        const whole = new Uint8Array(size);
        await ctx.copyFromDevice(whole, ptr);
        expect(whole).toEqual(mirror);
        const part = new Uint8Array(bytes.length);
        await ctx.copyFromDevice(part, ptr.add(at));
        expect(part).toEqual(bytes);
      }),
      { numRuns: 60 },
    );
    ctx.memFree(ptr);
  });

  it('copies from and into shared memory and typed arrays of any element type', async () => {
    const ptr = ctx.memAlloc(32);
    const src = new Float64Array(new SharedArrayBuffer(32));
    src.set([1.5, -2, 1e300, Math.PI]);
    await ctx.copyToDevice(ptr, src);
    const back = new Float64Array(new SharedArrayBuffer(32));
    await ctx.copyFromDevice(back, ptr);
    expect(back).toEqual(src);
    ctx.memFree(ptr);
  });

  it('accounts allocations against memorySize', () => {
    const before = ctx.availableMemSize;
    const ptr = ctx.memAlloc(1000);
    expect(ctx.availableMemSize).toBe(before - 1000);
    expect(() => ctx.memAlloc(before)).toThrow(OutOfMemoryError);
    ctx.memFree(ptr);
    expect(ctx.availableMemSize).toBe(before);
  });

  it('is not visible to the host without a copy', () => {
    const ptr = ctx.memAlloc(16);
    expect(() => ctx.hostView(ptr, 'float32')).toThrow(new StateError("hostView: the webgpu backend's memory is not visible to the host; use copyFromDevice"));
    ctx.memFree(ptr);
  });

  it('refuses copies into freed memory', async () => {
    const ptr = ctx.memAlloc(16);
    ctx.memFree(ptr);
    await expect(ctx.copyToDevice(ptr, new Uint8Array(4))).rejects.toThrow(ArgumentError);
  });
});

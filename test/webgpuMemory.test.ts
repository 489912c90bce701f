import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArgumentError, createContext, OutOfMemoryError, StateError, type Context } from '../src/index.js';
import { acquireGpuDevice } from '../src/backends/webgpu/index.js';
import { GpuMemory } from '../src/backends/webgpu/gpuMemory.js';
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

  it('serves reads in flight at once, round after round, each from its own staging buffer', async () => {
    const a = ctx.memAlloc(4096);
    const b = ctx.memAlloc(8192);
    await ctx.copyToDevice(a, new Uint32Array(1024).fill(7));
    await ctx.copyToDevice(b, new Uint32Array(2048).fill(9));
    for (let round = 0; round < 3; round++) {
      const x = new Uint32Array(1024);
      const y = new Uint32Array(2048);
      const z = new Uint32Array(3);
      await Promise.all([ctx.copyFromDevice(x, a), ctx.copyFromDevice(y, b), ctx.copyFromDevice(z, b.add(4 * round))]);
      expect([x.every((v) => v === 7), y.every((v) => v === 9), [...z]]).toEqual([true, true, [9, 9, 9]]);
    }
    ctx.memFree(a);
    ctx.memFree(b);
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

describe.runIf(gpu.run)('webgpu allocations the GPU cannot hold', () => {
  it('refuses more than maxBufferSize at memAlloc with OutOfMemoryError naming the size, the limits and what to do; the Context stays usable', async () => {
    const probe = await acquireGpuDevice();
    const { maxBufferSize, maxStorageBufferBindingSize } = probe.device.limits;
    probe.device.destroy();
    const ctx = await createContext({ backend: 'webgpu', memorySize: 2 * maxBufferSize + 64 });
    try {
      const bytes = maxBufferSize + 1;
      let err: unknown;
      try {
        ctx.memAlloc(bytes);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(OutOfMemoryError);
      expect((err as OutOfMemoryError).code).toBe('PXL_OUT_OF_MEMORY');
      expect((err as OutOfMemoryError).requested).toBe(bytes);
      expect((err as OutOfMemoryError).available).toBe(maxBufferSize);
      expect((err as OutOfMemoryError).message).toBe(
        `cannot allocate ${bytes} bytes in one piece on this GPU: its largest buffer is ${maxBufferSize} bytes (maxBufferSize), and a kernel argument binds at most ${maxStorageBufferBindingSize} bytes (maxStorageBufferBindingSize); split the data over several allocations of at most ${maxStorageBufferBindingSize} bytes`,
      );
      expect(ctx.availableMemSize).toBe(2 * maxBufferSize + 64);
      const ptr = ctx.memAlloc(16);
      await ctx.copyToDevice(ptr, Uint32Array.of(1, 2, 3, 4));
      const back = new Uint32Array(4);
      await ctx.copyFromDevice(back, ptr);
      expect(Array.from(back)).toEqual([1, 2, 3, 4]);
      ctx.memFree(ptr);
    } finally {
      await ctx.destroy();
    }
  });
});

/**
 * A device whose createBuffer fails inside the error scopes, as a GPU out of memory reports it:
 * WebGPU returns a buffer at once and says in the scope, later, that it could not be made.
 */
function deviceOutOfMemory(): GPUDevice {
  const scopes: string[] = [];
  let failNext = true;
  const buffer = { destroy: () => {}, size: 0 } as unknown as GPUBuffer;
  return {
    limits: { maxBufferSize: 1 << 30, maxStorageBufferBindingSize: 1 << 27 },
    pushErrorScope: (filter: string) => scopes.push(filter),
    popErrorScope: async () => {
      const filter = scopes.pop();
      if (filter === 'out-of-memory' && failNext) {
        failNext = false;
        return { message: 'Out of memory allocating 67108864 bytes' };
      }
      return null;
    },
    createBuffer: () => buffer,
    queue: { writeBuffer: () => {} },
  } as unknown as GPUDevice;
}

describe('an allocation the device reports out of memory after memAlloc returned', () => {
  it('fails its first use with OutOfMemoryError, can still be freed, and leaves other allocations usable', async () => {
    const memory = new GpuMemory(deviceOutOfMemory(), 1 << 30);
    const bad = memory.allocate(1 << 26);
    const good = memory.allocate(16);
    const message =
      'the GPU could not allocate 67108864 bytes (out of memory: Out of memory allocating 67108864 bytes); a kernel argument binds at most 134217728 bytes (maxStorageBufferBindingSize): memFree allocations you no longer need, use smaller ones, or lower memorySize in createContext';
    const err = await memory.write(bad, 0, new Uint8Array(4)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutOfMemoryError);
    expect(err).toMatchObject({ message, requested: 1 << 26, available: 0 });
    await expect(memory.created([bad])).rejects.toThrow(message);
    // Once the scope has answered, the synchronous check used by execute() knows too.
    expect(() => memory.checkCreated(bad)).toThrow(message);
    expect(() => memory.checkCreated(good)).not.toThrow();
    await expect(memory.write(good, 0, new Uint8Array(4))).resolves.toBeUndefined();
    expect(memory.allocatedBytes).toBe((1 << 26) + 16);
    memory.free(bad);
    expect(memory.allocatedBytes).toBe(16);
  });
});

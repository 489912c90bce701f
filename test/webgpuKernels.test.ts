import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ArgumentError,
  createContext,
  KernelError,
  MaxTaskCount,
  ModuleLoadError,
  NDArray,
  StateError,
  UnsupportedError,
  type Context,
  type DevicePtr,
  type Job,
} from '../src/index.js';
import { gpu } from './fixtures/wgslGpu.js';

const kernels = new URL('./fixtures/wgslKernels.ts', import.meta.url);

async function readU32(ctx: Context, ptr: DevicePtr, n: number): Promise<Uint32Array> {
  const out = new Uint32Array(n);
  await ctx.copyFromDevice(out, ptr);
  return out;
}

describe.runIf(gpu.run)('WGSL kernels through Context, Job and Map on the webgpu backend', () => {
  let ctx: Context;
  let job: Job;

  beforeAll(async () => {
    ctx = await createContext({ backend: 'webgpu' });
    job = ctx.createJob();
    job.load(await ctx.createModule(kernels));
  });

  afterAll(async () => {
    await ctx?.destroy();
  });

  it('lists the module\'s kernels as the CPU backend does, WGSL or not', () => {
    expect(job.kernelNames).toEqual(['axpy_rows', 'count_hits', 'echo_constants', 'fill_rows', 'gpu_only', 'js_only', 'slow_hits', 'task_info', 'view_info', 'whole_sizes']);
  });

  it('runs every task index exactly once for any taskCount and batchSize', async () => {
    const hits = ctx.memAlloc(4 * 3000);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 1, max: 300 }), async (taskCount, batchSize) => {
        await ctx.copyToDevice(hits, new Uint32Array(3000));
        const map = job.buildMap('count_hits', taskCount).setBatchSize(batchSize);
        await map.execute(hits);
        await map.synchronize();
        expect(map.getExecuteStatus()).toBe('Idle');
        const counts = await readU32(ctx, hits, 3000);
        expect(counts.subarray(0, taskCount).every((c) => c === 1)).toBe(true);
        expect(counts.subarray(taskCount).every((c) => c === 0)).toBe(true);
        expect(map.getProgress()).toEqual({ target: Math.ceil(taskCount / batchSize), issued: Math.ceil(taskCount / batchSize), done: Math.ceil(taskCount / batchSize) });
      }),
      { numRuns: 25 },
    );
    ctx.memFree(hits);
  });

  it('runs MaxTaskCount tasks of one per batch exactly once, over several dispatches', async () => {
    const hits = ctx.memAlloc(4 * MaxTaskCount);
    const map = job.buildMap('count_hits', MaxTaskCount).setBatchSize(1);
    await map.execute(hits);
    await map.synchronize();
    const counts = await readU32(ctx, hits, MaxTaskCount);
    expect(counts.every((c) => c === 1)).toBe(true);
    ctx.memFree(hits);
  });

  it('gives WGSL the task index and the task count', async () => {
    const out = ctx.memAlloc(4 * 2 * 50);
    const map = job.buildMap('task_info', 50).setBatchSize(7);
    await map.execute(out);
    await map.synchronize();
    const info = await readU32(ctx, out, 100);
    expect(Array.from(info)).toEqual(Array.from({ length: 50 }, (_, t) => [t, 50]).flat());
    ctx.memFree(out);
  });

  it('slices an NDArray along its leading dimension for a task kernel', async () => {
    const rows = 20;
    const cols = 5;
    const ptr = ctx.memAlloc(rows * cols * 4);
    const map = job.buildMap('fill_rows', rows).setBatchSize(3);
    await map.execute(new NDArray(ptr, 'float32', [rows, cols]), 0.5);
    await map.synchronize();
    const out = new Float32Array(rows * cols);
    await ctx.copyFromDevice(out, ptr);
    expect(Array.from(out)).toEqual(Array.from({ length: rows * cols }, (_, k) => 0.5 * (Math.floor(k / cols) + 1) + (k % cols)));
    ctx.memFree(ptr);
  });

  it('gives each task its slice\'s elements, size and shape, wherever the NDArray starts', async () => {
    const tasks = 6;
    const values = Int32Array.from({ length: 1 + tasks * 6 }, (_, k) => 100 + k);
    const ptr = ctx.memAlloc(values.byteLength);
    await ctx.copyToDevice(ptr, values);
    const out = ctx.memAlloc(4 * 5 * tasks);
    // One int32 past the start: off every binding alignment.
    const view = new NDArray(ptr.add(4), 'int32', [tasks, 2, 3]);
    const map = job.buildMap('view_info', tasks);
    await map.execute(view, out);
    await map.synchronize();
    const info = new Int32Array(5 * tasks);
    await ctx.copyFromDevice(info, out);
    expect(Array.from(info)).toEqual(Array.from({ length: tasks }, (_, t) => [101 + 6 * t, 6, 2, 3, 1]).flat());
    ctx.memFree(ptr);
    ctx.memFree(out);
  });

  it('reads one NDArray and writes another in the same launch', async () => {
    const n = 8;
    const x = ctx.memAlloc(n * 2 * 4);
    const y = ctx.memAlloc(n * 2 * 4);
    await ctx.copyToDevice(x, Float32Array.from({ length: 2 * n }, (_, k) => k));
    await ctx.copyToDevice(y, new Float32Array(2 * n).fill(1));
    const map = job.buildMap('axpy_rows', n);
    await map.execute(new NDArray(x, 'float32', [n, 2]), new NDArray(y, 'float32', [n, 2]), 0.5);
    await map.synchronize();
    const out = new Float32Array(2 * n);
    await ctx.copyFromDevice(out, y);
    expect(Array.from(out)).toEqual(Array.from({ length: 2 * n }, (_, k) => 1 + 0.5 * k));
    ctx.memFree(x);
    ctx.memFree(y);
  });

  it('passes scalar and struct constants through the uniform', async () => {
    const out = ctx.memAlloc(4 * 7);
    const map = job.buildMap('echo_constants', 3);
    await map.execute(1.5, -7, 4_000_000_000, true, { x: 0.25, k: 9, on: false }, out);
    await map.synchronize();
    const got = new Float32Array(7);
    await ctx.copyFromDevice(got, out);
    expect(Array.from(got)).toEqual([1.5, -7, 4_000_000_000, 1, 0.25, 9, 0]);
    ctx.memFree(out);
  });

  it('passes NDArrays whole to a batch-form kernel', async () => {
    const n = 40;
    const ptr = ctx.memAlloc(4 * n);
    const map = job.buildMap('whole_sizes', n).setBatchSize(16);
    await map.execute(new NDArray(ptr, 'uint32', [n]));
    await map.synchronize();
    expect(Array.from(await readU32(ctx, ptr, n))).toEqual(new Array(n).fill(n));
    ctx.memFree(ptr);
  });

  it('runs each queued execute once, in order', async () => {
    const hits = ctx.memAlloc(4 * 100);
    const map = job.buildMap('count_hits', 100).setBatchSize(4);
    for (let k = 0; k < 10; k++) await map.execute(hits);
    await map.synchronize();
    expect((await readU32(ctx, hits, 100)).every((c) => c === 10)).toBe(true);
    ctx.memFree(hits);
  });

  it('cancels between dispatches: batches already submitted drain, the rest never run, and the Map stays usable', async () => {
    const hits = ctx.memAlloc(4 * MaxTaskCount);
    const map = job.buildMap('slow_hits', MaxTaskCount).setBatchSize(1);
    await map.execute(hits, 200);
    await map.cancel();
    expect(map.getExecuteStatus()).toBe('Cancelled');
    const progress = map.getProgress();
    expect(progress.done).toBe(progress.issued);
    expect(progress.done).toBeLessThan(MaxTaskCount);
    let counts = await readU32(ctx, hits, MaxTaskCount);
    expect(counts.reduce((a, c) => a + c, 0)).toBe(progress.done);
    expect(counts.every((c) => c <= 1)).toBe(true);

    await ctx.copyToDevice(hits, new Uint32Array(MaxTaskCount));
    await map.execute(hits, 0);
    await map.synchronize();
    expect(map.getExecuteStatus()).toBe('Idle');
    counts = await readU32(ctx, hits, MaxTaskCount);
    expect(counts.every((c) => c === 1)).toBe(true);
    ctx.memFree(hits);
  });

  it('runs a WGSL-only kernel', async () => {
    const out = ctx.memAlloc(4 * 10);
    const map = job.buildMap('gpu_only', 10);
    await map.execute(out);
    await map.synchronize();
    expect(Array.from(await readU32(ctx, out, 10))).toEqual(new Array(10).fill(7));
    ctx.memFree(out);
  });

  it('fails the Map of a kernel without WGSL with a message that says what to add', async () => {
    const out = ctx.memAlloc(4 * 10);
    const map = job.buildMap('js_only', 10);
    await map.execute(out);
    const err = await map.synchronize().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsupportedError);
    expect((err as UnsupportedError).message).toBe(
      "kernel 'js_only' has no WGSL body, so the webgpu backend cannot run it: give its defineKernel a wgsl: { params, body } (see WgslKernel in pxl/mu), or run it on a Context created with backend: 'cpu'",
    );
    expect(map.getExecuteStatus()).toBe('Fail');
    ctx.memFree(out);
  });

  it('refuses float64 NDArrays at execute: WGSL has no 64-bit floats', async () => {
    const ptr = ctx.memAlloc(8 * 4);
    const map = job.buildMap('fill_rows', 4);
    await expect(map.execute(new NDArray(ptr, 'float64', [4, 1]), 1)).rejects.toThrow(
      new ArgumentError('argument 0 is a float64 NDArray, which the webgpu backend cannot bind (WGSL has no 64-bit floats: store the data as float32)', 0),
    );
    expect(map.getExecuteStatus()).toBe('Idle');
    ctx.memFree(ptr);
  });

  it.each([
    ['too few arguments', (p: DevicePtr): unknown[] => [new NDArray(p, 'float32', [4, 1])], "kernel 'fill_rows' declares 2 WGSL parameters (rows, scale), but execute() passed 1 argument", undefined],
    ['an NDArray of the wrong element type', (p: DevicePtr): unknown[] => [new NDArray(p, 'int32', [4, 1]), 1], "argument 0 ('rows', declared array<f32, read_write>) is a int32 NDArray; pass float32 data or change the declared type", 0],
    ['a constant for an array', (): unknown[] => [1, 1], "argument 0 ('rows', declared array<f32, read_write>) must be an NDArray or a device pointer, got a constant", 0],
    ['an array for a constant', (p: DevicePtr): unknown[] => [new NDArray(p, 'float32', [4, 1]), p], "argument 1 ('scale', declared f32) must be a constant, got a device pointer", 1],
  ])('fails the Map for %s, saying what the kernel declares', async (_, args, message, argIndex) => {
    const ptr = ctx.memAlloc(4 * 4);
    const map = job.buildMap('fill_rows', 4);
    await map.execute(...(args(ptr) as Parameters<typeof map.execute>));
    await expect(map.synchronize()).rejects.toThrow(new ArgumentError(message, argIndex));
    ctx.memFree(ptr);
  });

  it('checks integer constants against their WGSL type', async () => {
    const out = ctx.memAlloc(4 * 7);
    const map = job.buildMap('echo_constants', 1);
    await map.execute(1, 1.5, 1, true, { x: 0, k: 1, on: true }, out);
    await expect(map.synchronize()).rejects.toThrow(new ArgumentError("argument 1 ('n', declared i32) must be an integer in [-2147483648, 2147483647], got 1.5", 1));
    ctx.memFree(out);
  });

  it('refuses a writable argument that overlaps another in the same memory', async () => {
    const ptr = ctx.memAlloc(4 * 8);
    const map = job.buildMap('axpy_rows', 4);
    await map.execute(new NDArray(ptr, 'float32', [4, 2]), new NDArray(ptr, 'float32', [4, 2]), 1);
    const err = await map.synchronize().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ArgumentError);
    expect((err as ArgumentError).message).toMatch(/^arguments 0 \('x'\) and 1 \('y'\) of kernel 'axpy_rows' overlap in device memory, and 'y' is read_write/);
    ctx.memFree(ptr);
  });

  it('rejects createModule for WGSL that does not compile, at the line of the kernel\'s body', async () => {
    const err = await ctx.createModule(new URL('./fixtures/wgslBroken.ts', import.meta.url)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModuleLoadError);
    expect((err as ModuleLoadError).message).toMatch(/^kernel 'broken' in file:.*wgslBroken\.ts: its WGSL does not compile: body line 2:\d+: .*no_such_value/);
  });

  it('records one trace slice per dispatch while tracing', async () => {
    const hits = ctx.memAlloc(4 * 100);
    ctx.startTrace();
    const map = job.buildMap('count_hits', 100);
    await map.execute(hits);
    await map.synchronize();
    const trace = ctx.stopTrace();
    const batches = trace.traceEvents.filter((e) => e.cat === 'batch');
    expect(batches).toHaveLength(1);
    expect(batches[0]!.name).toBe('count_hits');
    ctx.memFree(hits);
  });
});

describe.runIf(gpu.run)('destroying a webgpu Context', () => {
  it('fails the launch in flight instead of leaving it pending, and refuses further use', async () => {
    const ctx = await createContext({ backend: 'webgpu' });
    const job = ctx.createJob();
    job.load(await ctx.createModule(kernels));
    const hits = ctx.memAlloc(4 * MaxTaskCount);
    const map = job.buildMap('slow_hits', MaxTaskCount).setBatchSize(1);
    await map.execute(hits, 200);
    const settled = map.synchronize().then(
      () => 'resolved',
      (e: unknown) => e,
    );
    await ctx.destroy();
    const outcome = await settled;
    expect(outcome).toBeInstanceOf(StateError);
    expect((outcome as StateError).message).toBe('the Context was destroyed while this launch was in flight');
    expect(() => ctx.memAlloc(4)).toThrow(StateError);
  });
});

describe('a WGSL-only kernel on CPU cores', () => {
  it('fails with a message that says it runs on the webgpu backend only', async () => {
    const ctx = await createContext({ topology: { coresPerCluster: 1 } });
    try {
      const job = ctx.createJob();
      job.load(await ctx.createModule(kernels));
      const out = ctx.memAlloc(4 * 4);
      const map = job.buildMap('gpu_only', 4);
      await map.execute(out);
      const err = await map.synchronize().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(KernelError);
      expect((err as KernelError).kernelMessage).toBe(
        'this kernel has only a WGSL body, so it runs on the webgpu backend only: give its defineKernel a run (or bind) function to run it on CPU cores',
      );
    } finally {
      await ctx.destroy();
    }
  });
});

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
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
import type { LaunchArg, LaunchRequest, ModuleInfo } from '../src/backends/backend.js';
import { WebGpuBackend } from '../src/backends/webgpu/index.js';
import { MESSAGE_CAPACITY } from '../src/backends/webgpu/wgslSignature.js';
import { gpu } from './fixtures/wgslGpu.js';

const kernels = new URL('./fixtures/wgslKernels.ts', import.meta.url);

async function readU32(ctx: Context, ptr: DevicePtr, n: number): Promise<Uint32Array> {
  const out = new Uint32Array(n);
  await ctx.copyFromDevice(out, ptr);
  return out;
}

async function readF32(ctx: Context, ptr: DevicePtr, n: number): Promise<Float32Array> {
  const out = new Float32Array(n);
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
      fc.asyncProperty(fc.integer({ min: 1, max: 3000 }), fc.integer({ min: 1, max: 300 }), async (taskCount, batchSize) => {
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
    ['an NDArray where a scalar is declared', (p: DevicePtr): unknown[] => [new NDArray(p, 'float32', [4, 1]), new NDArray(p, 'float32', [4, 1])], "argument 1 ('scale', declared f32) must be a constant, got an NDArray", 1],
  ])('rejects execute() for %s, saying what the kernel declares, and keeps the Map usable', async (_, args, message, argIndex) => {
    const ptr = ctx.memAlloc(4 * 4);
    const map = job.buildMap('fill_rows', 4);
    await expect(map.execute(...(args(ptr) as Parameters<typeof map.execute>))).rejects.toThrow(new ArgumentError(message, argIndex));
    expect(map.getExecuteStatus()).toBe('Idle');
    await map.execute(new NDArray(ptr, 'float32', [4, 1]), 2);
    await map.synchronize();
    expect(Array.from(await readF32(ctx, ptr, 4))).toEqual([2, 4, 6, 8]);
    ctx.memFree(ptr);
  });

  it('rejects execute() for an integer constant outside its WGSL type', async () => {
    const out = ctx.memAlloc(4 * 7);
    const map = job.buildMap('echo_constants', 1);
    await expect(map.execute(1, 1.5, 1, true, { x: 0, k: 1, on: true }, out)).rejects.toThrow(
      new ArgumentError("argument 1 ('n', declared i32) must be an integer in [-2147483648, 2147483647], got 1.5", 1),
    );
    expect(map.getExecuteStatus()).toBe('Idle');
    ctx.memFree(out);
  });

  it('rejects execute() for a writable argument that overlaps another in the same memory', async () => {
    const ptr = ctx.memAlloc(4 * 8);
    const map = job.buildMap('axpy_rows', 4);
    const err = await map.execute(new NDArray(ptr, 'float32', [4, 2]), new NDArray(ptr, 'float32', [4, 2]), 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ArgumentError);
    expect((err as ArgumentError).message).toMatch(/^arguments 0 \('x'\) and 1 \('y'\) of kernel 'axpy_rows' overlap in device memory, and 'y' is read_write/);
    expect(map.getExecuteStatus()).toBe('Idle');
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

/** A launch request of the webgpu backend, as a Map would make it. */
function request(info: ModuleInfo, name: string, taskCount: number, args: LaunchArg[], mapToken: object, launchId: number): LaunchRequest {
  const kernel = info.kernels.findIndex((k) => k.name === name);
  return { launchId, module: info.id, kernel, kernelName: name, mapId: 1, mapToken, taskCount, batchSize: 1, args, cores: [], onMessage: () => {} };
}

describe.runIf(gpu.run)('the webgpu backend checking arguments against WGSL params', () => {
  let backend: WebGpuBackend;
  let info: ModuleInfo;

  beforeAll(async () => {
    backend = await WebGpuBackend.create({ maxBatches: MaxTaskCount });
    info = await backend.loadModule(kernels.href);
  });

  afterAll(async () => {
    await backend?.destroy();
  });

  const fill = (): { module: number; kernel: number } => ({ module: info.id, kernel: info.kernels.findIndex((k) => k.name === 'fill_rows') });
  const rows = (buffer: number, dtype: 'float32' | 'float64' | 'int32'): LaunchArg => ({ kind: 'ndarray', buffer, byteOffset: 0, dtype, shape: [4, 1], sliced: true });

  it.each([
    ['the wrong count', (b: number): LaunchArg[] => [rows(b, 'float32')], "kernel 'fill_rows' declares 2 WGSL parameters (rows, scale), but execute() passed 1 argument"],
    ['an NDArray where a scalar is declared', (b: number): LaunchArg[] => [rows(b, 'float32'), rows(b, 'float32')], "argument 1 ('scale', declared f32) must be a constant, got an NDArray"],
    ['a float64 NDArray for array<f32>', (b: number): LaunchArg[] => [rows(b, 'float64'), { kind: 'constant', value: 1 }], 'argument 0 is a float64 NDArray, which the webgpu backend cannot bind (WGSL has no 64-bit floats: store the data as float32)'],
    ['an int32 NDArray for array<f32>', (b: number): LaunchArg[] => [rows(b, 'int32'), { kind: 'constant', value: 1 }], "argument 0 ('rows', declared array<f32, read_write>) is a int32 NDArray; pass float32 data or change the declared type"],
  ])('throws ArgumentError for %s when given the kernel', (_, args, message) => {
    const b = backend.allocate(64);
    expect(() => backend.checkArgs(args(b), fill())).toThrow(message);
    backend.free(b);
  });

  it('checks only what no WGSL kernel can bind when not given the kernel', () => {
    const b = backend.allocate(64);
    expect(() => backend.checkArgs([rows(b, 'float32')])).not.toThrow();
    expect(() => backend.checkArgs([rows(b, 'float64')])).toThrow(ArgumentError);
    expect(() => backend.checkArgs([rows(b, 'float32'), { kind: 'constant', value: 1 }], fill())).not.toThrow();
    backend.free(b);
  });

  it('leaves a kernel without WGSL to fail at launch, as before', () => {
    const js = info.kernels.findIndex((k) => k.name === 'js_only');
    expect(() => backend.checkArgs([{ kind: 'constant', value: 1 }], { module: info.id, kernel: js })).not.toThrow();
  });
});

describe.runIf(gpu.run)('what a launch moves between host and GPU', () => {
  let backend: WebGpuBackend;
  let info: ModuleInfo;

  beforeAll(async () => {
    backend = await WebGpuBackend.create({ maxBatches: MaxTaskCount });
    info = await backend.loadModule(kernels.href);
  });

  afterAll(async () => {
    await backend?.destroy();
  });

  const launch = async (r: LaunchRequest): Promise<void> => {
    const outcome = await (await backend.launch(r)).done;
    expect(outcome).toEqual({ kind: 'completed' });
  };

  it('moves no array data: a launch binds only the range its argument covers, and only what it writes is writable', async () => {
    const a = backend.allocate(4 * 64);
    const b = backend.allocate(4 * 64);
    await backend.write(a, 0, new Uint8Array(4 * 64).fill(1));
    await backend.write(b, 0, new Uint8Array(4 * 64).fill(2));
    const before = backend.transferStats();
    const token = {};
    // fill_rows writes 4 rows of 2 floats of `a`, starting 64 bytes in; `b` is not an argument.
    const view: LaunchArg = { kind: 'ndarray', buffer: a, byteOffset: 64, dtype: 'float32', shape: [4, 2], sliced: true };
    await launch(request(info, 'fill_rows', 4, [view, { kind: 'constant', value: 1 }], token, 9001));
    const after = backend.transferStats();
    expect(after.uploadedBytes - before.uploadedBytes).toBe(0);
    expect(after.downloadedBytes - before.downloadedBytes).toBe(0);
    const t = after.launches.at(-1)!;
    expect(t.launchId).toBe(9001);
    expect(t.downloadedBytes).toBe(0);
    expect(t.bound).toEqual([{ name: 'rows', buffer: a, byteOffset: 64, byteLength: 32, writable: true }]);
    // Explicit copies count their own bytes, nothing more.
    const back = new Float32Array(8);
    await backend.read(a, 64, new Uint8Array(back.buffer));
    expect(Array.from(back)).toEqual([1, 2, 2, 3, 3, 4, 4, 5]);
    expect(backend.transferStats().downloadedBytes - after.downloadedBytes).toBe(32);
    backend.free(a);
    backend.free(b);
  });

  it('binds a read-only argument read-only, and each argument only over its own bytes', async () => {
    const x = backend.allocate(4 * 8);
    const y = backend.allocate(4 * 8);
    const nd = (buffer: number): LaunchArg => ({ kind: 'ndarray', buffer, byteOffset: 0, dtype: 'float32', shape: [4, 2], sliced: true });
    await launch(request(info, 'axpy_rows', 4, [nd(x), nd(y), { kind: 'constant', value: 2 }], {}, 9002));
    expect(backend.transferStats().launches.at(-1)!.bound).toEqual([
      { name: 'x', buffer: x, byteOffset: 0, byteLength: 32, writable: false },
      { name: 'y', buffer: y, byteOffset: 0, byteLength: 32, writable: true },
    ]);
    backend.free(x);
    backend.free(y);
  });

  it("uploads a Map's launch descriptor again only when it changed", async () => {
    const a = backend.allocate(4 * 8);
    const token = {};
    const args = (scale: number): LaunchArg[] => [{ kind: 'ndarray', buffer: a, byteOffset: 0, dtype: 'float32', shape: [4, 2], sliced: true }, { kind: 'constant', value: scale }];
    await launch(request(info, 'fill_rows', 4, args(1), token, 9003));
    const first = backend.transferStats().launches.at(-1)!.uploadedBytes;
    // The PxlArgs uniform (96 bytes: an 80-byte view, then the f32 on a 16-byte boundary) and the
    // dispatch table (one slot of at least 16 bytes).
    expect(first).toBeGreaterThanOrEqual(96 + 16);
    await launch(request(info, 'fill_rows', 4, args(1), token, 9004));
    expect(backend.transferStats().launches.at(-1)!.uploadedBytes).toBe(0);
    await launch(request(info, 'fill_rows', 4, args(3), token, 9005));
    expect(backend.transferStats().launches.at(-1)!.uploadedBytes).toBe(96);
    const out = new Float32Array(8);
    await backend.read(a, 0, new Uint8Array(out.buffer));
    expect(Array.from(out)).toEqual([3, 4, 6, 7, 9, 10, 12, 13]);
    // Another Map (another token) has descriptors of its own.
    await launch(request(info, 'fill_rows', 4, args(3), {}, 9006));
    expect(backend.transferStats().launches.at(-1)!.uploadedBytes).toBe(first);
    backend.free(a);
  });

  it('reports figures through describe() too', () => {
    expect(backend.describe()).toMatchObject({ uploadedBytes: backend.transferStats().uploadedBytes, downloadedBytes: backend.transferStats().downloadedBytes });
  });
});

describe.runIf(gpu.run)('work-group kernels on the webgpu backend', () => {
  const groupKernels = new URL('./fixtures/wgslGroupKernels.ts', import.meta.url);
  const message =
    "kernel 'group_fill' is a work-group kernel (defineGroupKernel) without a WGSL body, so the webgpu backend cannot run it: give its defineGroupKernel a wgsl: { params, body, local? } (see GroupKernelSpec in pxl/mu), or run it on a Context created with backend: 'cpu'";

  it('loads the module but refuses to launch a group kernel without a WGSL body, with UnsupportedError', async () => {
    const backend = await WebGpuBackend.create({ maxBatches: MaxTaskCount });
    try {
      const info = await backend.loadModule(groupKernels.href);
      expect(info.kernels).toEqual([
        { name: 'group_fill', form: 'group' },
        { name: 'group_fill_wgsl', form: 'group' },
        { name: 'plain_fill', form: 'task' },
      ]);
      const out = backend.allocate(16);
      const nd: LaunchArg = { kind: 'ndarray', buffer: out, byteOffset: 0, dtype: 'uint32', shape: [4], sliced: false };
      expect(() => backend.checkArgs([nd], { module: info.id, kernel: 0 })).toThrow(new UnsupportedError(message));
      await expect(backend.launch(request(info, 'group_fill', 1, [nd], {}, 9100))).rejects.toThrow(new UnsupportedError(message));
    } finally {
      await backend.destroy();
    }
  });

  it('refuses it through a Map with that message, and the module\'s other kernels, group kernels with WGSL included, still run', async () => {
    const ctx = await createContext({ backend: 'webgpu' });
    try {
      const job = ctx.createJob();
      job.load(await ctx.createModule(groupKernels));
      const out = ctx.memAlloc(16);
      const map = job.buildMap('group_fill', { global: [4], local: [2] });
      // Rejected by execute() once the Map asks the backend with the kernel; until then, the launch fails the Map.
      const err = await map
        .execute(new NDArray(out, 'uint32', [4]))
        .then(() => map.synchronize())
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnsupportedError);
      expect((err as UnsupportedError).message).toBe(message);
      const plain = job.buildMap('plain_fill', 4);
      await plain.execute(out);
      await plain.synchronize();
      expect(Array.from(await readU32(ctx, out, 4))).toEqual([7, 7, 7, 7]);
      const group = job.buildMap('group_fill_wgsl', { global: [4], local: [2] });
      await group.execute(new NDArray(out, 'uint32', [4]));
      await group.synchronize();
      expect(Array.from(await readU32(ctx, out, 4))).toEqual([1, 1, 1, 1]);
    } finally {
      await ctx.destroy();
    }
  });
});

describe.runIf(gpu.run)('message() from WGSL', () => {
  const messageKernels = new URL('./fixtures/wgslMessageKernels.ts', import.meta.url);
  let ctx: Context;
  let job: Job;

  beforeAll(async () => {
    ctx = await createContext({ backend: 'webgpu' });
    job = ctx.createJob();
    job.load(await ctx.createModule(messageKernels));
  });

  afterAll(async () => {
    await ctx?.destroy();
  });

  it('delivers every message before completion, by task and in each task\'s order, as CPU cores send them', async () => {
    const events: unknown[] = [];
    const map = job.buildMap('send_messages', 5).setBatchSize(2);
    map.setMessageCallback((m) => events.push(m)).setCompletionCallback(() => events.push('done'));
    await map.execute(3);
    await map.synchronize();
    expect(events).toEqual([0, 1, 2, 100, 101, 102, 200, 201, 202, 300, 301, 302, 400, 401, 402, 'done']);

    const cpu = await createContext({ topology: { coresPerCluster: 2 } });
    try {
      const cpuJob = cpu.createJob();
      cpuJob.load(await cpu.createModule(messageKernels));
      const cpuMap = cpuJob.buildMap('send_messages', 5).setBatchSize(2);
      const sent: number[] = [];
      cpuMap.setMessageCallback((m) => sent.push(m as number));
      await cpuMap.execute(3);
      await cpuMap.synchronize();
      expect(sent.sort((a, b) => a - b)).toEqual(events.slice(0, -1));
    } finally {
      await cpu.destroy();
    }
  });

  it(`keeps the first ${MESSAGE_CAPACITY} messages of a launch and warns once with the number dropped`, async () => {
    const warnings: string[] = [];
    const spy = vi.spyOn(process, 'emitWarning').mockImplementation((w: string | Error) => {
      warnings.push(String(w));
    });
    try {
      const received: number[] = [];
      const map = job.buildMap('send_messages', 2000).setMessageCallback((m) => received.push(m as number));
      await map.execute(3);
      await map.synchronize();
      expect(received).toHaveLength(MESSAGE_CAPACITY);
      expect(warnings).toEqual([
        `kernel 'send_messages' sent 6000 messages in one launch, but the GPU message buffer holds ${MESSAGE_CAPACITY}: ${6000 - MESSAGE_CAPACITY} were dropped (send fewer, or launch fewer tasks at a time)`,
      ]);
      // Each task's messages that were kept are still in its order.
      const byTask = new Map<number, number[]>();
      for (const m of received) byTask.set(Math.floor(m / 100), [...(byTask.get(Math.floor(m / 100)) ?? []), m % 100]);
      for (const ks of byTask.values()) expect(ks).toEqual([...ks].sort((a, b) => a - b));
    } finally {
      spy.mockRestore();
    }
  });

  it('reads back only the counter and the filled slots, and nothing for a kernel that sends none', async () => {
    const backend = await WebGpuBackend.create({ maxBatches: MaxTaskCount });
    try {
      const info = await backend.loadModule(messageKernels.href);
      const values: unknown[] = [];
      const r = { ...request(info, 'send_messages', 4, [{ kind: 'constant', value: 2 }], {}, 9200), onMessage: (v: unknown) => values.push(v) };
      expect(await (await backend.launch(r)).done).toEqual({ kind: 'completed' });
      expect(values).toEqual([0, 1, 100, 101, 200, 201, 300, 301]);
      expect(backend.transferStats().launches.at(-1)!.downloadedBytes).toBe(4 + 8 * 8);
      expect(await (await backend.launch(request(info, 'send_nothing', 4, [], {}, 9201))).done).toEqual({ kind: 'completed' });
      expect(backend.transferStats().launches.at(-1)!.downloadedBytes).toBe(0);
    } finally {
      await backend.destroy();
    }
  });
});

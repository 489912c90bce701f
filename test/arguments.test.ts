import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { ArgumentError, createContext, NDArray, Result, type Context, type DevicePtr, type Job, type KernelArg, type KernelMap } from '../src/index.js';

const kernels = new URL('./fixtures/kernels.ts', import.meta.url);

let ctx: Context;
let other: Context;
let job: Job;

beforeAll(async () => {
  [ctx, other] = await Promise.all([
    createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } }),
    createContext({ topology: { coresPerCluster: 1 } }),
  ]);
  job = ctx.createJob();
  job.load(await ctx.createModule(kernels));
});

afterAll(async () => {
  await Promise.all([ctx?.destroy(), other?.destroy()]);
});

/** Runs one launch and returns the messages its kernel sent, ordered by task. */
async function messagesOf(map: KernelMap, ...args: KernelArg[]): Promise<Record<string, unknown>[]> {
  const seen: Record<string, unknown>[] = [];
  map.setMessageCallback((m) => seen.push(m as Record<string, unknown>));
  expect(await map.execute(...args)).toBe(Result.Success);
  await map.synchronize();
  return seen.sort((a, b) => (a.task as number) - (b.task as number));
}

function int32s(ptr: DevicePtr): number[] {
  return [...ctx.hostView(ptr, 'int32')];
}

describe('constant arguments', () => {
  it('broadcasts numbers, bigints, booleans and one nested plain object to every task, with their types', async () => {
    const settings = { scale: 3, inner: { id: 42n, on: false } };
    const big = (1n << 64n) - 1n;
    const neg = -(1n << 63n);
    const seen = await messagesOf(job.buildMap('echo_constants', 5).setBatchSize(1), 2.5, big, neg, true, settings);
    expect(seen).toEqual([0, 1, 2, 3, 4].map((task) => ({ task, n: 2.5, big, neg, flag: true, settings })));
  });

  it('passes non-finite numbers unchanged', async () => {
    const seen = await messagesOf(job.buildMap('echo_constants', 1), Number.NaN, 0n, -1n, false, { scale: -Infinity, inner: { id: 0n, on: true } });
    expect(seen).toEqual([{ task: 0, n: Number.NaN, big: 0n, neg: -1n, flag: false, settings: { scale: -Infinity, inner: { id: 0n, on: true } } }]);
  });

  it('accepts nine parameters', async () => {
    const out = ctx.memAlloc(8 * 3);
    const map = job.buildMap('nine_params', 3).setBatchSize(1);
    await map.execute(out, 1, 2, 3, 4, 5, 6, 7, 8);
    await map.synchronize();
    expect([...ctx.hostView(out, 'float64')]).toEqual([36, 36, 36]);
    ctx.memFree(out);
  });

  it('counts a plain object of constants, however many fields it holds, as one parameter', async () => {
    const out = ctx.memAlloc(8 * 2);
    const map = job.buildMap('grouped', 2);
    await map.execute(out, 1, 2, 3, 4, 5, 6, 7, { x: 100, y: 200, z: { w: 1000 } });
    await map.synchronize();
    expect([...ctx.hostView(out, 'float64')]).toEqual([1328, 1328]);
    ctx.memFree(out);
  });
});

describe('device pointer arguments', () => {
  it('broadcasts the same pointer, offset included, to every task', async () => {
    const data = ctx.memAlloc(64);
    const out = ctx.memAlloc(8 * 2 * 4);
    const map = job.buildMap('pointer_info', 4).setBatchSize(1);
    await map.execute(data.add(24), out);
    await map.synchronize();
    expect([...ctx.hostView(out, 'float64')]).toEqual([24, 40, 24, 40, 24, 40, 24, 40]);
    ctx.memFree(data);
    ctx.memFree(out);
  });
});

describe('NDArray arguments', () => {
  it('gives each task of a task kernel its own row along the leading dimension', async () => {
    const ptr = ctx.memAlloc(4 * 3 * 8);
    const map = job.buildMap('fill_rows', 4).setBatchSize(1);
    await map.execute(new NDArray(ptr, 'float64', [4, 3]), 0.5);
    await map.synchronize();
    expect([...ctx.hostView(ptr, 'float64')]).toEqual([0.5, 0.5, 0.5, 1, 1, 1, 1.5, 1.5, 1.5, 2, 2, 2]);
    ctx.memFree(ptr);
  });

  it('types and shapes each slice from the NDArray, dropping the leading dimension', async () => {
    const ptr = ctx.memAlloc(3 * 2 * 2 * 4);
    ctx.hostView(ptr, 'int32').set(Array.from({ length: 12 }, (_, i) => i));
    const seen = await messagesOf(job.buildMap('describe_view', 3).setBatchSize(2), new NDArray(ptr, 'int32', [3, 2, 2]));
    expect(seen).toEqual([
      { task: 0, shape: [2, 2], size: 4, type: 'Int32Array', elements: [0, 1, 2, 3] },
      { task: 1, shape: [2, 2], size: 4, type: 'Int32Array', elements: [4, 5, 6, 7] },
      { task: 2, shape: [2, 2], size: 4, type: 'Int32Array', elements: [8, 9, 10, 11] },
    ]);
    ctx.memFree(ptr);
  });

  it('slices a one-dimensional NDArray into single elements, at the pointer offset', async () => {
    const ptr = ctx.memAlloc(8 + 3 * 4);
    ctx.hostView(ptr.add(8), 'float32').set([1.5, 2.5, 3.5]);
    const seen = await messagesOf(job.buildMap('describe_view', 3), new NDArray(ptr.add(8), 'float32', [3]));
    expect(seen).toEqual([
      { task: 0, shape: [], size: 1, type: 'Float32Array', elements: [1.5] },
      { task: 1, shape: [], size: 1, type: 'Float32Array', elements: [2.5] },
      { task: 2, shape: [], size: 1, type: 'Float32Array', elements: [3.5] },
    ]);
    ctx.memFree(ptr);
  });

  it('gives a batch kernel the whole NDArray, whatever its leading dimension', async () => {
    const ptr = ctx.memAlloc(5 * 2 * 8);
    const batches = ctx.memAlloc(3 * 4 * 4);
    const seen: unknown[] = [];
    const map = job.buildMap('describe_batches', 4).setBatchSize(2).setMessageCallback((m) => seen.push(m));
    await map.execute(new NDArray(ptr, 'float64', [5, 2]), batches);
    await map.synchronize();
    // Two batches on two cores: each core binds the arguments once and reports what it got.
    expect(seen).toEqual([{ shape: [5, 2], size: 10, offset: 0 }, { shape: [5, 2], size: 10, offset: 0 }]);
    // Per batch: [first, end, getTaskIdx()] at index 3 * first.
    expect(int32s(batches)).toEqual([0, 2, 0, 0, 0, 0, 2, 4, 2, 0, 0, 0]);
    ctx.memFree(ptr);
    ctx.memFree(batches);
  });

  it('runs a batch kernel over whole arrays (triad y = a·x + y)', async () => {
    const x = ctx.memAlloc(10 * 8);
    const y = ctx.memAlloc(10 * 8);
    ctx.hostView(x, 'float64').set(Array.from({ length: 10 }, (_, i) => i));
    ctx.hostView(y, 'float64').fill(1);
    const map = job.buildMap('triad', 5).setBatchSize(2);
    await map.execute(2, new NDArray(x, 'float64', [10]), new NDArray(y, 'float64', [10]), 2);
    await map.synchronize();
    expect([...ctx.hostView(y, 'float64')]).toEqual([1, 3, 5, 7, 9, 11, 13, 15, 17, 19]);
    ctx.memFree(x);
    ctx.memFree(y);
  });
});

describe('rejected arguments', () => {
  let counts: DevicePtr;
  beforeAll(() => {
    counts = ctx.memAlloc(4 * 4);
  });

  /** Asserts that execute rejects with exactly this ArgumentError and that nothing ran. */
  async function rejects(map: KernelMap, args: unknown[], message: string, argIndex?: number): Promise<void> {
    await expect(map.execute(...(args as KernelArg[]))).rejects.toThrow(new ArgumentError(message, argIndex));
    expect(map.getExecuteStatus()).toBe('Idle');
  }

  it('refuses a tenth parameter and says to group constants', async () => {
    const map = job.buildMap('nine_params', 1);
    await rejects(map, [counts, 1, 2, 3, 4, 5, 6, 7, 8, 9], 'execute() takes at most 9 kernel parameters, got 10: group constants into one plain object, which counts as one parameter');
  });

  it.each<[string, unknown, string]>([
    ['a string', 'abc', "argument 1 is 'abc', which cannot be passed to a kernel: constants may be numbers, bigints, booleans, or plain objects of those, device pointers, or NDArrays"],
    ['an array', [1, 2, 3], 'argument 1 is an array of length 3, which cannot be passed to a kernel: constants may be numbers, bigints, booleans, or plain objects of those, device pointers, or NDArrays'],
    ['null', null, 'argument 1 is null, which cannot be passed to a kernel: constants may be numbers, bigints, booleans, or plain objects of those, device pointers, or NDArrays'],
    ['undefined', undefined, 'argument 1 is undefined, which cannot be passed to a kernel: constants may be numbers, bigints, booleans, or plain objects of those, device pointers, or NDArrays'],
    ['a function', (x: number) => x * 2, 'argument 1 is a function, which cannot be passed to a kernel: constants may be numbers, bigints, booleans, or plain objects of those, device pointers, or NDArrays'],
    ['a class instance', new Date(0), 'argument 1 is a Date, which cannot be passed to a kernel: constants may be numbers, bigints, booleans, or plain objects of those, device pointers, or NDArrays'],
    ['a string inside a constant object', { a: { b: 'x' } }, "argument 1.a.b is 'x', which cannot be passed to a kernel: constants may be numbers, bigints, booleans, or plain objects of those, device pointers, or NDArrays"],
    ['a typed array', new Float64Array(4), 'argument 1 is a Float64Array: host memory cannot be passed to a kernel; copy it to device memory (memAlloc, copyToDevice) and pass an NDArray or the pointer'],
    ['a SharedArrayBuffer', new SharedArrayBuffer(8), 'argument 1 is a SharedArrayBuffer: host memory cannot be passed to a kernel; copy it to device memory (memAlloc, copyToDevice) and pass an NDArray or the pointer'],
    ['a typed array inside a constant object', { data: new Uint8Array(2) }, 'argument 1.data is a Uint8Array: host memory cannot be passed to a kernel; copy it to device memory (memAlloc, copyToDevice) and pass an NDArray or the pointer'],
  ])('refuses %s and says what to pass instead', async (_, value, message) => {
    await rejects(job.buildMap('nine_params', 1), [counts, value], message, 1);
  });

  it('refuses a device pointer or NDArray from another Context', async () => {
    const foreign = other.memAlloc(16);
    const map = job.buildMap('pointer_info', 4);
    await rejects(map, [counts, foreign], "argument 1 is a device pointer from another Context: allocate it with this Map's Context, or copy the data across", 1);
    await rejects(job.buildMap('fill_rows', 4), [new NDArray(foreign, 'int32', [4]), 1], "argument 0 is an NDArray from another Context: allocate it with this Map's Context, or copy the data across", 0);
    other.memFree(foreign);
  });

  it('refuses a device pointer or NDArray whose memory was freed', async () => {
    const ptr = ctx.memAlloc(16);
    const array = new NDArray(ptr, 'float32', [4]);
    ctx.memFree(ptr);
    await rejects(job.buildMap('pointer_info', 4), [ptr, counts], 'argument 0 is a device pointer whose memory was freed with memFree', 0);
    await rejects(job.buildMap('fill_rows', 4), [array, 1], 'argument 0 is an NDArray whose memory was freed with memFree', 0);
  });

  it('refuses an NDArray whose leading dimension is not the taskCount of a task kernel', async () => {
    const ptr = ctx.memAlloc(5 * 8);
    await rejects(
      job.buildMap('fill_rows', 5),
      [new NDArray(ptr, 'float64', [4, 1]), 1],
      "argument 0 is an NDArray with leading dimension 4, but the Map's taskCount is 5: each task receives one slice along the leading dimension, so the two must be equal",
      0,
    );
    ctx.memFree(ptr);
  });

  it('refuses a bigint that does not fit in 64 bits, and the Map stays usable', async () => {
    const map = job.buildMap('echo_constants', 1);
    const settings = { scale: 1, inner: { id: 0n, on: true } };
    await rejects(map, [1, 1n << 64n, 0n, true, settings], 'argument 1: bigint 18446744073709551616n does not fit in 64 bits', 1);
    await rejects(map, [1, 0n, -(1n << 63n) - 1n, true, settings], 'argument 2: bigint -9223372036854775809n does not fit in 64 bits', 2);
    expect(await messagesOf(map, 1, 0n, 0n, true, settings)).toHaveLength(1);
  });

  it('refuses constants larger than the launch descriptor, and the Map stays usable', async () => {
    const map = job.buildMap('count_tasks', 4);
    const huge = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`field${i}`, i]));
    await rejects(map, [counts, huge], 'the arguments encode to more than 4096 bytes, the most one launch carries: pass large data in device memory (memAlloc and an NDArray) instead of as constants');
    expect(int32s(counts)).toEqual([0, 0, 0, 0]);
    await map.execute(counts);
    await map.synchronize();
    expect(int32s(counts)).toEqual([1, 1, 1, 1]);
    expect(map.getExecuteStatus()).toBe('Idle');
  });
});

describe('argument types', () => {
  it('accepts constants, pointers and NDArrays and rejects everything else at compile time', () => {
    expectTypeOf<number>().toExtend<KernelArg>();
    expectTypeOf<bigint>().toExtend<KernelArg>();
    expectTypeOf<boolean>().toExtend<KernelArg>();
    expectTypeOf<{ scale: number; inner: { id: bigint; on: boolean } }>().toExtend<KernelArg>();
    expectTypeOf<DevicePtr>().toExtend<KernelArg>();
    expectTypeOf<NDArray<'float64'>>().toExtend<KernelArg>();
    expectTypeOf<string>().not.toExtend<KernelArg>();
    expectTypeOf<number[]>().not.toExtend<KernelArg>();
    expectTypeOf<Float64Array>().not.toExtend<KernelArg>();
    expectTypeOf<{ name: string }>().not.toExtend<KernelArg>();
    expectTypeOf<null>().not.toExtend<KernelArg>();
    expectTypeOf<KernelMap['execute']>().returns.resolves.toEqualTypeOf<Result>();
  });
});

describe('specialised batch kernels', () => {
  it('compute with a self-contained bind, rebinding fresh for new arguments', async () => {
    const ptr = ctx.memAlloc(8 * 16);
    const map = job.buildMap('specialized_scale', 16).setBatchSize(4);
    await map.execute(ptr, 3);
    await map.synchronize();
    expect(Array.from(ctx.hostView(ptr, 'float64'))).toEqual(Array.from({ length: 16 }, (_, t) => 3 * t));
    await map.execute(ptr, 5);
    await map.synchronize();
    expect(ctx.hostView(ptr, 'float64')[15]).toBe(75);
    ctx.memFree(ptr);
  });

  it('fail with a message that says why when bind uses a name from its module', async () => {
    const ptr = ctx.memAlloc(8 * 4);
    const map = job.buildMap('specialized_uses_module_scope', 4);
    await map.execute(ptr);
    await expect(map.synchronize()).rejects.toThrow(/MODULE_SCALE is not defined: this batch kernel is declared with specialize: true/);
    ctx.memFree(ptr);
  });
});

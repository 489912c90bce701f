import { availableParallelism, totalmem } from 'node:os';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  ArgumentError,
  createContext,
  DevicePtr,
  Job,
  NoSubAvailableError,
  OptionError,
  OutOfMemoryError,
  StateError,
  type Context,
} from '../src/index.js';

const MiB = 1 << 20;
const fixtures = new URL('./fixtures/', import.meta.url);

let ctx: Context;
let other: Context;

beforeAll(async () => {
  [ctx, other] = await Promise.all([
    createContext({ topology: { subs: 2, clustersPerSub: 2, coresPerCluster: 1 }, memorySize: MiB }),
    createContext({ topology: { subs: 2 } }),
  ]);
});

afterAll(async () => {
  await Promise.all([ctx?.destroy(), other?.destroy()]);
});

describe('createContext', () => {
  it('gives the device one Sub, one Cluster and one MU core per available CPU by default', async () => {
    const plain = await createContext();
    try {
      expect(plain.topology).toEqual({ subs: 1, clustersPerSub: 1, coresPerCluster: availableParallelism() });
      expect(plain.getAttribute('coreCount')).toBe(availableParallelism());
      expect(plain.getAttribute('memorySize')).toBe(Math.floor(totalmem() / 2));
    } finally {
      await plain.destroy();
    }
  });

  it('builds the configured Subs × Clusters × cores', () => {
    expect(ctx.topology).toEqual({ subs: 2, clustersPerSub: 2, coresPerCluster: 1 });
  });

  it('gives one core per Cluster when only the Sub or Cluster count is configured', () => {
    expect(other.topology).toEqual({ subs: 2, clustersPerSub: 1, coresPerCluster: 1 });
  });

  it.each<[string, Parameters<typeof createContext>[0], string]>([
    ['an unknown backend', { backend: 'gpu' as 'cpu' }, "backend must be one of 'cpu', 'webgpu', 'auto', got 'gpu'"],
    ['zero Subs', { topology: { subs: 0 } }, 'topology.subs must be an integer in [1, 1024], got 0'],
    ['a fractional Cluster count', { topology: { clustersPerSub: 1.5 } }, 'topology.clustersPerSub must be an integer in [1, 1024], got 1.5'],
    ['a negative core count', { topology: { coresPerCluster: -2 } }, 'topology.coresPerCluster must be an integer in [1, 1024], got -2'],
    ['more cores than supported', { topology: { subs: 64, clustersPerSub: 4, coresPerCluster: 8 } }, 'topology has 2048 MU cores (subs × clustersPerSub × coresPerCluster); at most 1024 are supported'],
    ['a negative memorySize', { memorySize: -1 }, 'memorySize must be an integer in [0, 9007199254740991], got -1'],
    ['a heap limit below 16 MiB', { coreHeapLimitMB: 8 }, 'coreHeapLimitMB must be an integer in [16, 1048576], got 8'],
  ])('rejects %s with an OptionError naming the option', async (_, options, message) => {
    const created = createContext(options);
    await expect(created).rejects.toThrow(OptionError);
    await expect(created).rejects.toThrow(message);
  });
});

describe('Context.getAttribute', () => {
  it('reports the topology, the memory figures and the task limit', () => {
    expect({
      backend: ctx.getAttribute('backend'),
      device: ctx.getAttribute('device'),
      subCount: ctx.getAttribute('subCount'),
      clustersPerSub: ctx.getAttribute('clustersPerSub'),
      coresPerCluster: ctx.getAttribute('coresPerCluster'),
      coresPerSub: ctx.getAttribute('coresPerSub'),
      coreCount: ctx.getAttribute('coreCount'),
      memorySize: ctx.getAttribute('memorySize'),
      availableMemSize: ctx.getAttribute('availableMemSize'),
      availableSubCount: ctx.getAttribute('availableSubCount'),
      maxTaskCount: ctx.getAttribute('maxTaskCount'),
    }).toEqual({
      backend: 'cpu',
      device: '4 worker threads over shared memory',
      subCount: 2,
      clustersPerSub: 2,
      coresPerCluster: 1,
      coresPerSub: 2,
      coreCount: 4,
      memorySize: MiB,
      availableMemSize: MiB,
      availableSubCount: 2,
      maxTaskCount: 1048575,
    });
  });

  it('follows allocations and Jobs in its live figures', () => {
    const ptr = ctx.memAlloc(1000);
    const job = ctx.createJob(1);
    expect(ctx.getAttribute('availableMemSize')).toBe(MiB - 1000);
    expect(ctx.getAttribute('availableSubCount')).toBe(1);
    ctx.destroyJob(job);
    ctx.memFree(ptr);
    expect(ctx.getAttribute('availableMemSize')).toBe(MiB);
    expect(ctx.getAttribute('availableSubCount')).toBe(2);
  });

  it('rejects an unknown attribute and lists the valid names', () => {
    const ask = () => ctx.getAttribute('cores' as 'coreCount');
    expect(ask).toThrow(OptionError);
    expect(ask).toThrow(
      "attribute must be one of 'backend', 'device', 'subCount', 'clustersPerSub', 'coresPerCluster', 'coresPerSub', 'coreCount', 'memorySize', 'availableMemSize', 'availableSubCount', 'maxTaskCount', got 'cores'",
    );
  });
});

describe('device memory', () => {
  it('memAlloc takes bytes from availableMemSize and memFree gives them back', () => {
    const before = ctx.availableMemSize;
    const a = ctx.memAlloc(4096);
    const b = ctx.memAlloc(100);
    expect(ctx.availableMemSize).toBe(before - 4196);
    expect(a.byteLength).toBe(4096);
    expect(a.byteOffset).toBe(0);
    ctx.memFree(a);
    expect(ctx.availableMemSize).toBe(before - 100);
    expect(a.freed).toBe(true);
    expect(b.freed).toBe(false);
    ctx.memFree(b);
    expect(ctx.availableMemSize).toBe(before);
  });

  it('memAlloc zero-fills and memCalloc allocates count × size zeroed bytes', () => {
    const before = ctx.availableMemSize;
    const a = ctx.memAlloc(64);
    const c = ctx.memCalloc(5, 8);
    expect(c.byteLength).toBe(40);
    expect(ctx.availableMemSize).toBe(before - 104);
    expect([...ctx.hostView(a, 'uint8')]).toEqual(new Array(64).fill(0));
    expect([...ctx.hostView(c, 'float64')]).toEqual([0, 0, 0, 0, 0]);
    ctx.memFree(a);
    ctx.memFree(c);
  });

  it('copyToDevice and copyFromDevice move bytes in both directions, at pointer offsets too', async () => {
    const ptr = ctx.memAlloc(32);
    await ctx.copyToDevice(ptr, new Float64Array([1.5, -2, 3.25, 4]));
    const back = new Float64Array(4);
    await ctx.copyFromDevice(back, ptr);
    expect([...back]).toEqual([1.5, -2, 3.25, 4]);

    await ctx.copyToDevice(ptr.add(16), new Float64Array([9]).buffer);
    const tail = new Float64Array(2);
    await ctx.copyFromDevice(tail, ptr.add(16));
    expect([...tail]).toEqual([9, 4]);
    expect([...ctx.hostView(ptr, 'float64')]).toEqual([1.5, -2, 9, 4]);
    ctx.memFree(ptr);
  });

  it('hostView shares memory with the device and types its elements by dtype', () => {
    const ptr = ctx.memAlloc(16);
    const i32 = ctx.hostView(ptr, 'int32');
    const big = ctx.hostView(ptr.add(8), 'bigint64');
    expectTypeOf(i32).toEqualTypeOf<Int32Array<ArrayBufferLike>>();
    expectTypeOf(big).toEqualTypeOf<BigInt64Array<ArrayBufferLike>>();
    expectTypeOf(ctx.hostView(ptr, 'float32')[0]).toEqualTypeOf<number | undefined>();
    i32[0] = 7;
    big[0] = -5n;
    expect(i32.length).toBe(4);
    expect(big.length).toBe(1);
    expect(ctx.hostView(ptr, 'int32')[0]).toBe(7);
    expect(ctx.hostView(ptr, 'bigint64')[1]).toBe(-5n);
    ctx.memFree(ptr);
  });

  it('throws OutOfMemoryError beyond memorySize and stays usable', () => {
    const before = ctx.availableMemSize;
    const held = ctx.memAlloc(MiB - 1024);
    const tooMuch = () => ctx.memAlloc(2048);
    expect(tooMuch).toThrow(OutOfMemoryError);
    expect(tooMuch).toThrow('cannot allocate 2048 bytes: only 1024 bytes of device memory are available (raise memorySize in createContext, or memFree unused allocations)');
    const err = (() => { try { tooMuch(); } catch (e) { return e; } })() as OutOfMemoryError;
    expect(err.code).toBe('PXL_OUT_OF_MEMORY');
    expect([err.requested, err.available]).toEqual([2048, 1024]);
    expect(ctx.availableMemSize).toBe(1024);
    const last = ctx.memAlloc(1024);
    expect(ctx.availableMemSize).toBe(0);
    ctx.memFree(held);
    ctx.memFree(last);
    expect(ctx.availableMemSize).toBe(before);
  });

  it.each<[string, () => unknown, string]>([
    ['memAlloc of 0 bytes', () => ctx.memAlloc(0), 'memAlloc bytes must be an integer in [1, 9007199254740991], got 0'],
    ['memAlloc of a fractional size', () => ctx.memAlloc(2.5), 'memAlloc bytes must be an integer in [1, 9007199254740991], got 2.5'],
    ['memCalloc of 0 elements', () => ctx.memCalloc(0, 8), 'memCalloc count must be an integer in [1, 9007199254740991], got 0'],
    ['memCalloc of 0-byte elements', () => ctx.memCalloc(4, 0), 'memCalloc size must be an integer in [1, 9007199254740991], got 0'],
  ])('rejects %s with an OptionError', (_, call, message) => {
    expect(call).toThrow(OptionError);
    expect(call).toThrow(message);
  });

  it('memFree refuses a pointer into an allocation, a freed pointer and a foreign pointer', () => {
    const ptr = ctx.memAlloc(16);
    expect(() => ctx.memFree(ptr.add(8))).toThrow(new ArgumentError('memFree needs the pointer memAlloc returned, not one 8 bytes into it'));
    ctx.memFree(ptr);
    expect(() => ctx.memFree(ptr)).toThrow(new ArgumentError('memFree: the device pointer was freed with memFree'));
    const foreign = other.memAlloc(16);
    expect(() => ctx.memFree(foreign)).toThrow(new ArgumentError('memFree: the device pointer belongs to another Context'));
    other.memFree(foreign);
  });

  it('copies refuse data that does not fit, freed pointers and foreign pointers', async () => {
    const ptr = ctx.memAlloc(16);
    await expect(ctx.copyToDevice(ptr.add(8), new Uint8Array(16))).rejects.toThrow(
      new ArgumentError('copyToDevice: 16 bytes do not fit in the 8 bytes from the pointer to the end of its allocation'),
    );
    await expect(ctx.copyFromDevice(new Uint8Array(17), ptr)).rejects.toThrow(
      new ArgumentError('copyFromDevice: 17 bytes do not fit in the 16 bytes from the pointer to the end of its allocation'),
    );
    await expect(ctx.copyToDevice(ptr, 'bytes' as unknown as Uint8Array)).rejects.toThrow(
      new ArgumentError("copyToDevice: src must be host memory (a TypedArray, DataView, ArrayBuffer or SharedArrayBuffer), got 'bytes'"),
    );
    const foreign = other.memAlloc(16);
    await expect(ctx.copyFromDevice(new Uint8Array(4), foreign)).rejects.toThrow(new ArgumentError('copyFromDevice: the device pointer belongs to another Context'));
    other.memFree(foreign);
    ctx.memFree(ptr);
    await expect(ctx.copyToDevice(ptr, new Uint8Array(4))).rejects.toThrow(new ArgumentError('copyToDevice: the device pointer was freed with memFree'));
  });

  it('DevicePtr.add stays inside the allocation', () => {
    const ptr = ctx.memAlloc(16);
    expect(ptr.add(16).byteLength).toBe(0);
    expect(ptr.add(4).add(4).byteOffset).toBe(8);
    expect(() => ptr.add(17)).toThrow(new ArgumentError('cannot offset a device pointer by 17 bytes: it must be an integer in [0, 16]'));
    expect(() => ptr.add(8).add(-1)).toThrow(new ArgumentError('cannot offset a device pointer by -1 bytes: it must be an integer in [0, 8]'));
    expect(ptr).toBeInstanceOf(DevicePtr);
    ctx.memFree(ptr);
  });
});

describe('Jobs and Subs', () => {
  it('createJob() with no argument takes every remaining Sub', () => {
    const first = ctx.createJob(1);
    const rest = ctx.createJob();
    expect(first.subs).toEqual([0]);
    expect(rest.subs).toEqual([1]);
    expect(ctx.availableSubCount).toBe(0);
    ctx.destroyJob(first);
    ctx.destroyJob(rest);
    const all = ctx.createJob();
    expect(all).toBeInstanceOf(Job);
    expect(all.subs).toEqual([0, 1]);
    expect(all.subCount).toBe(2);
    expect(all.coreCount).toBe(4);
    ctx.destroyJob(all);
    expect(ctx.availableSubCount).toBe(2);
  });

  it('throws NoSubAvailableError when a Job asks for more Subs than are free', () => {
    const job = ctx.createJob(1);
    const ask = () => ctx.createJob(2);
    expect(ask).toThrow(NoSubAvailableError);
    expect(ask).toThrow('cannot take 2 Subs: 1 of 2 are free; destroy a Job or free Subs with job.subFree() first');
    const rest = ctx.createJob();
    expect(() => ctx.createJob()).toThrow(new NoSubAvailableError('createJob: no Sub is free (all 2 belong to Jobs); destroy a Job with ctx.destroyJob(job), or free Subs with job.subFree(), first'));
    expect(() => job.subAlloc()).toThrow(new NoSubAvailableError('cannot take 1 Sub: 0 of 2 are free; destroy a Job or free Subs with job.subFree() first'));
    ctx.destroyJob(rest);
    ctx.destroyJob(job);
  });

  it('rejects a Sub count outside the device with an OptionError', () => {
    expect(() => ctx.createJob(3)).toThrow(new OptionError('numSub must be an integer in [1, 2], got 3'));
    expect(() => ctx.createJob(0)).toThrow(new OptionError('numSub must be an integer in [1, 2], got 0'));
    expect(ctx.availableSubCount).toBe(2);
  });

  it('subAlloc takes Subs from the Context and subFree returns the most recently taken', () => {
    const job = ctx.createJob(1);
    job.subAlloc();
    expect(job.subs).toEqual([0, 1]);
    expect(job.coreCount).toBe(4);
    expect(ctx.availableSubCount).toBe(0);
    job.subFree();
    expect(job.subs).toEqual([0]);
    expect(ctx.availableSubCount).toBe(1);
    ctx.destroyJob(job);
  });

  it('keeps the order in which a Job acquired its Subs', () => {
    const a = ctx.createJob(1);
    const b = ctx.createJob(1);
    ctx.destroyJob(a);
    b.subAlloc();
    expect(b.subs).toEqual([1, 0]);
    ctx.destroyJob(b);
  });

  it('subFree keeps at least one Sub', () => {
    const job = ctx.createJob(1);
    expect(() => job.subFree()).toThrow(new OptionError('subFree: a Job keeps at least one Sub; it owns 1, so it can free at most 0'));
    expect(() => job.subFree(0)).toThrow(new OptionError('subFree count must be an integer in [1, 2], got 0'));
    expect(job.subs).toEqual([0]);
    ctx.destroyJob(job);
  });

  it('destroyJob returns the Subs, and the destroyed Job throws StateError on use', async () => {
    const job = ctx.createJob(2);
    const module = await ctx.createModule(new URL('kernels.ts', fixtures));
    job.load(module);
    const map = job.buildMap('count_tasks', 4);
    ctx.destroyJob(job);
    expect(ctx.availableSubCount).toBe(2);
    const destroyed = new StateError('this Job was destroyed; create a new one with ctx.createJob()');
    expect(() => job.buildMap('count_tasks', 4)).toThrow(destroyed);
    expect(() => job.subAlloc()).toThrow(destroyed);
    expect(() => job.subFree()).toThrow(destroyed);
    expect(() => job.load(module)).toThrow(destroyed);
    const counts = ctx.memAlloc(16);
    await expect(map.execute(counts)).rejects.toThrow(destroyed);
    expect([...ctx.hostView(counts, 'int32')]).toEqual([0, 0, 0, 0]);
    expect(() => ctx.destroyJob(job)).toThrow(new StateError('destroyJob: the Job is not a live Job of this Context'));
    ctx.memFree(counts);
  });
});

describe('a destroyed Context', () => {
  it('throws StateError from every operation, and destroy() twice is harmless', async () => {
    const gone = await createContext({ topology: { coresPerCluster: 1 } });
    const ptr = gone.memAlloc(8);
    const job = gone.createJob();
    const stream = gone.createStream();
    await gone.destroy();
    await gone.destroy();

    const destroyed = new StateError('this Context was destroyed; create a new one with createContext() (pdist, cdist and l2Kernel without a context open a new default one themselves)');
    expect(() => gone.memAlloc(8)).toThrow(destroyed);
    expect(() => gone.memCalloc(1, 8)).toThrow(destroyed);
    expect(() => gone.memFree(ptr)).toThrow(destroyed);
    expect(() => gone.hostView(ptr, 'uint8')).toThrow(destroyed);
    expect(() => gone.createJob()).toThrow(destroyed);
    expect(() => gone.destroyJob(job)).toThrow(destroyed);
    expect(() => gone.createStream()).toThrow(destroyed);
    expect(() => gone.destroyStream(stream)).toThrow(destroyed);
    expect(() => gone.getAttribute('coreCount')).toThrow(destroyed);
    expect(() => job.buildMap('count_tasks', 1)).toThrow(destroyed);
    await expect(gone.copyToDevice(ptr, new Uint8Array(8))).rejects.toThrow(destroyed);
    await expect(gone.copyFromDevice(new Uint8Array(8), ptr)).rejects.toThrow(destroyed);
    await expect(gone.createModule(new URL('kernels.ts', fixtures))).rejects.toThrow(destroyed);
  });
});

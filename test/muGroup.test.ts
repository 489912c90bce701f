import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { CommandBuffer, createContext, dispatch, Fence, KernelError, NDArray, OptionError, type Context, type Job, type KernelMap } from '../src/index.js';
import { barrier, defineGroupKernel, getGlobalId, getGlobalSize, getGroupId, getLocalId, getLocalSize, getNumGroups, mu } from '../src/mu/index.js';
import { kernelFailure, randomFloats } from './fixtures/testData.js';
import { expectAllClose } from './helpers/closeTo.js';

let ctx: Context;
let job: Job;

beforeAll(async () => {
  ctx = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } });
  job = ctx.createJob();
  job.load(await ctx.createModule(new URL('./fixtures/groupKernels.ts', import.meta.url)));
});

afterAll(async () => {
  await ctx?.destroy();
});


function float32Array(values: Float32Array, shape: number[]): NDArray<'float32'> {
  const ptr = ctx.memAlloc(values.length * 4);
  ctx.hostView(ptr, 'float32').set(values);
  return new NDArray(ptr, 'float32', shape);
}


describe('work-group kernels with barriers and local memory', () => {
  it('reduce each work-group of 64 items by tree reduction, matching a sequential sum per group', async () => {
    const n = 4096, l = 64, groups = n / l;
    const data = randomFloats(n, 1, -1, 1);
    const src = float32Array(data, [n]);
    const sums = float32Array(new Float32Array(groups).fill(Number.NaN), [groups]);
    const map = job.buildMap('group_sum', { global: [n], local: [l] }).setBatchSize(3);
    expect(map.taskCount).toBe(groups);
    expect(map.range).toEqual({ global: [n], local: [l] });
    await map.execute(src, sums);
    await map.synchronize();
    const got = ctx.hostView(sums.ptr, 'float32');
    // Reference: a float64 sequential sum of each group's float32 inputs. The tree sums in float32
    // (64 terms of magnitude < 1): tolerance 1e-5 absolute.
    const ref = Array.from({ length: groups }, (_, g) => data.slice(g * l, (g + 1) * l).reduce((a, v) => a + v, 0));
    expectAllClose(got, ref, { atol: 1e-5, what: 'group sums' });
    ctx.memFree(src.ptr);
    ctx.memFree(sums.ptr);
  });

  it('reduce 4096 values to one in two chained launches of a command buffer', async () => {
    const n = 4096, l = 64;
    const data = randomFloats(n, 7, -1, 1);
    const src = float32Array(data, [n]);
    const partial = float32Array(new Float32Array(l).fill(Number.NaN), [l]);
    const total = float32Array(new Float32Array(1).fill(Number.NaN), [1]);
    const out = new Float32Array(1);
    const cb = new CommandBuffer(ctx, job)
      .launch('group_sum', { global: [n], local: [l] }, src, partial) // 64 groups of 64 → 64 sums
      .launch('group_sum', { global: [l], local: [l] }, partial, total) // one group → the total
      .read(total.ptr, 0, out)
      .finalize();
    const fence = new Fence();
    dispatch(cb, { fence });
    await fence.wait();
    // Reference: a float64 sequential sum; two float32 tree levels over values in [-1, 1): 1e-3 absolute.
    const ref = data.reduce((a, v) => a + v, 0);
    expectAllClose(out, [ref], { atol: 1e-3, what: 'total' });
    for (const a of [src, partial, total]) ctx.memFree(a.ptr);
  });

  it('multiply 24×40 by 40×16 matrices in 8×8 tiles, matching a plain triple loop', async () => {
    const m = 24, k = 40, n = 16;
    const av = randomFloats(m * k, 2, -1, 1), bv = randomFloats(k * n, 3, -1, 1);
    const a = float32Array(av, [m, k]);
    const b = float32Array(bv, [k, n]);
    const c = float32Array(new Float32Array(m * n), [m, n]);
    const map = job.buildMap('matmul_tiled', { global: [n, m], local: [8, 8] }).setBatchSize(1);
    expect(map.taskCount).toBe(6);
    await map.execute(a, b, c);
    await map.synchronize();
    const got = ctx.hostView(c.ptr, 'float32');
    // Reference: float64 dot products in the same k order; the kernel accumulates in float64 from
    // float32 tiles and stores float32, so only the final rounding differs: tolerance 1e-6 relative.
    const ref = Array.from({ length: m }, (_, i) => Array.from({ length: n }, (_, j) => {
      let s = 0;
      for (let q = 0; q < k; q++) s += av[i * k + q]! * bv[q * n + j]!;
      return s;
    }));
    expectAllClose(Array.from({ length: m }, (_, i) => got.subarray(i * n, (i + 1) * n)), ref, { rtol: 1e-6, atol: 1e-6, what: 'c' });
    for (const x of [a, b, c]) ctx.memFree(x.ptr);
  });

  it('give every work-item its local, group and global ids and the range sizes in 3-D, dimension 0 fastest', async () => {
    const global = [4, 6, 2], local = [2, 3, 1];
    const items = 4 * 6 * 2;
    const out = ctx.memAlloc(items * 20 * 4);
    const map = job.buildMap('record_ids', { global, local }).setBatchSize(2);
    expect(map.taskCount).toBe(8);
    await map.execute(out);
    await map.synchronize();
    const got = ctx.hostView(out, 'int32');
    const numGroups = [2, 2, 2];
    for (let z = 0; z < 2; z++) {
      for (let y = 0; y < 6; y++) {
        for (let x = 0; x < 4; x++) {
          const gid = [x, y, z];
          const grp = gid.map((v, d) => Math.floor(v / local[d]!));
          const lid = gid.map((v, d) => v % local[d]!);
          const flatGroup = grp[0]! + 2 * (grp[1]! + 2 * grp[2]!);
          const at = (x + 4 * (y + 6 * z)) * 20;
          expect(Array.from(got.subarray(at, at + 20)), `item (${gid.join(',')})`).toEqual([...lid, ...grp, ...gid, ...local, ...global, ...numGroups, flatGroup, 8]);
        }
      }
    }
    ctx.memFree(out);
  });

  it('report id 0 and size 1 for the dimensions a 1-D range does not have', async () => {
    const out = ctx.memAlloc(6 * 20 * 4);
    const map = job.buildMap('record_ids', { global: [6], local: [3] });
    await map.execute(out);
    await map.synchronize();
    const got = ctx.hostView(out, 'int32');
    expect(Array.from(got.subarray(4 * 20, 5 * 20))).toEqual([1, 0, 0, 1, 0, 0, 4, 0, 0, 3, 1, 1, 6, 1, 1, 2, 1, 1, 1, 2]);
    ctx.memFree(out);
  });

  it('see every write made before a barrier by the other work-items, also through a yield* helper', async () => {
    const out = ctx.memAlloc(8 * 4);
    const map = job.buildMap('rotate_ids', { global: [8], local: [4] });
    await map.execute(out);
    await map.synchronize();
    expect([...ctx.hostView(out, 'int32')]).toEqual([1, 2, 3, 0, 5, 6, 7, 4]);
    ctx.memFree(out);
  });

  it('receive NDArrays whole, as batch kernels do', async () => {
    const ptr = ctx.memAlloc(8 * 8);
    ctx.hostView(ptr, 'float64').set([0, 0, 0, 0, 10, 10, 10, 10]);
    const map = job.buildMap('add_group_id', { global: [8], local: [2] });
    await map.execute(new NDArray(ptr, 'float64', [8]));
    await map.synchronize();
    expect([...ctx.hostView(ptr, 'float64')]).toEqual([0, 0, 1, 1, 12, 12, 13, 13]);
    ctx.memFree(ptr);
  });
});

describe('building Maps over ND-ranges', () => {
  it('gives task and batch kernels one task per work-item of the range', () => {
    const map = job.buildMap('barrier_in_task', { global: [4, 3], local: [2, 3] });
    expect(map.taskCount).toBe(12);
    expect(map.range).toEqual({ global: [4, 3], local: [2, 3] });
    expect(Object.isFrozen(map.range)).toBe(true);
    expect(job.buildMap('barrier_in_task', 5).range).toBeUndefined();
  });

  it('defaults the work-group size to 1 in every dimension', () => {
    const map = job.buildMap('record_ids', { global: [3, 2] });
    expect(map.range).toEqual({ global: [3, 2], local: [1, 1] });
    expect(map.taskCount).toBe(6);
  });

  it('count work-groups, not work-items, against MaxTaskCount', () => {
    const map = job.buildMap('group_sum', { global: [1 << 22], local: [256] });
    expect(map.taskCount).toBe(1 << 14);
    expect(() => job.buildMap('ids_in_task', { global: [1024, 1024] })).toThrow(
      new OptionError('buildMap: the range has 1048576 work-items; at most 1048575 (MaxTaskCount) are supported, one task per work-item'),
    );
  });

  it('rejects a work-group kernel built with a plain taskCount', () => {
    expect(() => job.buildMap('group_sum', 64)).toThrow(new OptionError("kernel 'group_sum' is a work-group kernel: build its Map with job.buildMap('group_sum', { global: [...], local: [...] })"));
  });

  it.each<[string, unknown, string]>([
    ['a local size that does not divide global', { global: [4096], local: [60] }, 'buildMap: local[0] must be an integer ≥ 1 dividing global[0] = 4096, got 60'],
    ['a zero local size', { global: [8, 8], local: [8, 0] }, 'buildMap: local[1] must be an integer ≥ 1 dividing global[1] = 8, got 0'],
    ['a local size with too few dimensions', { global: [8, 8], local: [8] }, 'buildMap: local has 1 dimensions but global has 2; give one work-group size per dimension'],
    ['four dimensions', { global: [2, 2, 2, 2] }, 'buildMap: global must be an array of 1 to 3 sizes, got 4 dimensions'],
    ['a missing global', {}, 'buildMap: global must be an array of 1 to 3 sizes, got undefined'],
    ['a fractional global size', { global: [2.5] }, 'buildMap: global[0] must be an integer ≥ 1, got 2.5'],
    ['too many work-groups', { global: [1024, 1024] }, 'buildMap: the range has 1048576 work-groups; at most 1048575 (MaxTaskCount) are supported, one task per work-group: use larger work-groups'],
  ])('rejects %s', (_, range, message) => {
    expect(() => job.buildMap('group_sum', range as never)).toThrow(new OptionError(message));
  });
});

describe('work-group kernel errors', () => {
  it('fail a kernel that calls mu.barrier() outside a group kernel', async () => {
    const err = await kernelFailure(job.buildMap('barrier_in_task', 2));
    expect(err.kernelMessage).toBe('mu.barrier() works only in a kernel defined with defineGroupKernel, as `yield mu.barrier()`');
  });

  it('fail a work-item that calls mu.barrier() without yielding it', async () => {
    const atReturn = await kernelFailure(job.buildMap('barrier_not_yielded', { global: [4], local: [2] }));
    expect(atReturn.kernelMessage).toBe('work-item 0 of work-group (0) called mu.barrier() without yielding its value: write `yield mu.barrier()`, so that the work-item waits there for the rest of its group');
    const atNext = await kernelFailure(job.buildMap('barrier_twice_unyielded', { global: [2, 2], local: [2, 2] }));
    expect(atNext.kernelMessage).toBe('work-item 0 of work-group (0, 0) called mu.barrier() without yielding its value: write `yield mu.barrier()`, so that the work-item waits there for the rest of its group');
  });

  it('fail a group whose work-items diverge, naming the group, the barrier and the counts', async () => {
    const err = await kernelFailure(job.buildMap('diverge', { global: [12], local: [4] }).setBatchSize(1));
    expect(err.taskIdx).toBe(1);
    expect(err.kernelMessage).toBe('work-group (1) diverged at barrier #2: of its 4 work-items, 2 wait at mu.barrier() and 2 returned; every work-item of a group must reach the same sequence of `yield mu.barrier()` and `yield mu.dmaWait(...)` (uniform control flow)');
  });

  it('fail a group whose work-items wait at different kinds of sync point', async () => {
    const err = await kernelFailure(job.buildMap('diverge_kinds', { global: [4], local: [4] }));
    expect(err.kernelMessage).toBe('work-group (0) diverged at barrier #1: of its 4 work-items, 2 wait at mu.barrier() and 2 wait at mu.dmaWait(); every work-item of a group must reach the same sequence of `yield mu.barrier()` and `yield mu.dmaWait(...)` (uniform control flow)');
  });

  it('fail a work-item that yields something other than a sync point', async () => {
    const err = await kernelFailure(job.buildMap('yield_number', { global: [2], local: [2] }));
    expect(err.kernelMessage).toBe('work-item 0 of work-group (0) yielded 5: a group kernel yields only the value of a fresh mu.barrier() or mu.dmaWait(...) call, as `yield mu.barrier()`');
  });

  it('fail ids asked for outside a group kernel', async () => {
    const err = await kernelFailure(job.buildMap('ids_in_task', 1));
    expect(err.kernelMessage).toBe('mu.getLocalId() works only in a kernel defined with defineGroupKernel');
  });

  it('leave the core usable for group kernels after a failure', async () => {
    await kernelFailure(job.buildMap('diverge', { global: [8], local: [4] }));
    const out = ctx.memAlloc(2 * 20 * 4);
    const map = job.buildMap('record_ids', { global: [2], local: [2] });
    await map.execute(out);
    await map.synchronize();
    expect(ctx.hostView(out, 'int32')[20]).toBe(1);
    ctx.memFree(out);
  });
});

describe('defineGroupKernel and the mu namespace', () => {
  it('rejects a run that is not a generator function', () => {
    expect(() => defineGroupKernel({ run: (() => {}) as never })).toThrow(new TypeError('defineGroupKernel: run must be a generator function, `function* (local, ...args) { ... }`, so that its work-items can wait at `yield mu.barrier()`'));
  });

  it.each<[string, unknown, string]>([
    ['an unknown dtype', { t: { dtype: 'float16', length: 4 } }, "defineGroupKernel: local array 't' needs a dtype ('float32', 'int32', ...), got float16"],
    ['a negative length', { t: { dtype: 'float32', length: -1 } }, "defineGroupKernel: local array 't' needs a length: an integer ≥ 0 or a function of the work-group size, got -1"],
  ])('rejects a local array with %s', (_, local, message) => {
    expect(() => defineGroupKernel({ local: local as never, run: function* () {} })).toThrow(new TypeError(message));
  });

  it('types each local array by its dtype', () => {
    defineGroupKernel({
      local: { a: { dtype: 'float32', length: 4 }, b: { dtype: 'int32', length: (l) => l[0]! } },
      run: function* (local, x: number) {
        expectTypeOf(local.a).toEqualTypeOf<Float32Array<ArrayBufferLike>>();
        expectTypeOf(local.b).toEqualTypeOf<Int32Array<ArrayBufferLike>>();
        expectTypeOf(x).toEqualTypeOf<number>();
        yield mu.barrier();
      },
    });
  });

  it('exports the group functions on the frozen mu namespace', () => {
    expect(mu.barrier).toBe(barrier);
    expect([mu.getLocalId, mu.getGroupId, mu.getGlobalId, mu.getLocalSize, mu.getGlobalSize, mu.getNumGroups]).toEqual([getLocalId, getGroupId, getGlobalId, getLocalSize, getGlobalSize, getNumGroups]);
    expect(Object.isFrozen(mu)).toBe(true);
  });

  it('throws from mu.barrier() on the main thread', () => {
    expect(() => mu.barrier()).toThrow('mu.barrier() works only in a kernel defined with defineGroupKernel, as `yield mu.barrier()`');
  });
});

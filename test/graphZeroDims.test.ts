import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  access, applyRangeMapper, box, checkLaunchShape, chunk, createContext, emptyRegion, formatDependency, formatRegion, range, RangeMapperError, regionOf, split, subrange, TaskGraphError,
  type Chunk, type Context, type GraphWarning, type KernelModule, type Queue,
} from '../src/index.js';

/** The one element of a 0-dimensional buffer, as a region. */
const whole = regionOf(box([], []));
const scalar = range([]);

describe('range mappers over a 0-dimensional buffer', () => {
  it('always give its one element, whatever the chunk', () => {
    expect(applyRangeMapper(access.oneToOne(), chunk([], [], []), scalar)).toEqual(whole);
    expect(applyRangeMapper(access.all(), chunk([4, 0], [4, 8], [8, 8]), scalar)).toEqual(whole);
    expect(applyRangeMapper(access.all(), chunk([1, 2, 3], [0, 0, 0], [8, 8, 8]), scalar)).toEqual(whole);
    expect(applyRangeMapper(access.evenSplit(), chunk([3], [2], [10]), scalar)).toEqual(whole);
    expect(applyRangeMapper(access.evenSplit({ granularity: 4 }), chunk([0], [0], [10]), scalar)).toEqual(whole);
    // Even a mapper that selects nothing: Celerity accesses a 0-D buffer whole.
    expect(applyRangeMapper(access.fixed(emptyRegion(0)), chunk([0], [5], [5]), scalar)).toEqual(whole);
    expect(applyRangeMapper((_c: Chunk<1>) => subrange([], []), chunk([0], [5], [5]), scalar)).toEqual(whole);
  });

  it('refuse mappers that cannot serve a 0-dimensional buffer, and results of another dimensionality', () => {
    expect(() => applyRangeMapper(access.oneToOne() as never, chunk([0], [4], [4]), scalar)).toThrow(
      new RangeMapperError('oneToOne()', 1, 0, 'range mapper oneToOne() needs a kernel and a buffer of one dimensionality, got a 1-dimensional kernel and a 0-dimensional buffer'),
    );
    expect(() => applyRangeMapper(access.neighborhood([1]) as never, chunk([0], [4], [4]), scalar)).toThrow(
      /^range mapper neighborhood\(\[1\]\) needs a 1-dimensional kernel and a 1-dimensional buffer \(one per extent entry\), got a 1-dimensional kernel and a 0-dimensional buffer$/,
    );
    expect(() => applyRangeMapper(access.slice(0) as never, chunk([], [], []), scalar)).toThrow(RangeMapperError);
    expect(() => applyRangeMapper(((c: Chunk<1>) => c) as never, chunk([0], [4], [4]), scalar)).toThrow(
      /^range mapper \(anonymous\) returned a 1-dimensional chunk, but the buffer is 0-dimensional \(the kernel is 1-dimensional\)$/,
    );
    expect(() => access.neighborhood([])).toThrow(/^neighborhood extent must be an array of 1 to 3 coordinates/);
  });

  it('map a 0-dimensional kernel onto buffers of any dimensionality through all() and fixed()', () => {
    const one = chunk([], [], []);
    expect(applyRangeMapper(access.all(), one, range([3, 4]))).toEqual(regionOf(box([0, 0], [3, 4])));
    expect(applyRangeMapper(access.fixed(box([2], [5])), one, range([4]))).toEqual(regionOf(box([2], [4])));
    expect(formatRegion(applyRangeMapper(access.oneToOne(), one, scalar))).toBe('{[(),())}');
  });
});

describe('splitting a 0-dimensional kernel', () => {
  it('gives one chunk of the one item, whatever the count', () => {
    expect(split(scalar, 1)).toEqual([chunk([], [], [])]);
    expect(split(scalar, 8)).toEqual([chunk([], [], [])]);
    expect(split(scalar, 8, { granularity: 4 })).toEqual([chunk([], [], [])]);
  });

  it('takes a 0-dimensional launch shape, with nothing to constrain', () => {
    expect(checkLaunchShape([])).toEqual({ global: [], offset: [], local: [], splitConstraint: [], granularity: [] });
    expect(checkLaunchShape({ global: [], offset: [], local: [], splitConstraint: [] }).granularity).toEqual([]);
  });
});

describe('a queue with 0-dimensional buffers and kernels', () => {
  let ctx: Context;
  let mod: KernelModule;
  beforeAll(async () => {
    ctx = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } });
    mod = await ctx.createModule(new URL('./fixtures/graphKernels.ts', import.meta.url));
  });
  afterAll(async () => {
    await ctx.destroy();
  });

  function queue(options: Parameters<Context['createQueue']>[0] = {}): Queue {
    const q = ctx.createQueue({ chunks: 2, ...options });
    q.load(mod);
    return q;
  }

  it('holds one element, written and read by 0-dimensional kernels and fenced whole', async () => {
    const q = queue();
    const s = q.buffer(Float64Array, [], { init: [7] });
    expect(s.dims).toBe(0);
    expect(s.size).toBe(1);
    // add(c, out, lo, hi, x) adds x to out[lo, hi): the kernel sees the element as out.data[0].
    const t2 = q.submit((cg) => cg.parallelFor([], 'add', cg.readWrite(s, access.oneToOne()), 0, 1, 3));
    expect(t2.chunks).toEqual([chunk([], [], [])]);
    expect(t2.accesses[0]!.region).toEqual(whole);
    expect(t2.dependencies.map(formatDependency)).toEqual(['true T1 B0 {[(),())}']);
    expect([...(await q.fence(s))]).toEqual([10]);
    expect([...(await q.fence(s, box([], [])))]).toEqual([10]);
    await q.destroy();
  });

  it('orders tasks on a scalar: a reader after the writer, a writer after the reader, from kernels of any dimensionality', async () => {
    const q = queue({ chunks: 1 });
    const s = q.buffer(Float64Array, []);
    q.submit((cg) => cg.parallelFor([4], 'fill', cg.write(s, access.all(), { noInit: true }), 0, 1, 2)); // T1
    let read: number | undefined;
    const t2 = q.submit((cg) => {
      const acc = cg.read(s, access.all());
      cg.hostTask((h) => {
        read = h.view(acc).data[0];
      });
    }); // T2
    const t3 = q.submit((cg) => cg.parallelFor([], 'fill', cg.write(s, access.oneToOne(), { noInit: true }), 0, 1, 5)); // T3
    expect(t2.dependencies.map(formatDependency)).toEqual(['true T1 B0 {[(),())}']);
    expect(t3.dependencies.map(formatDependency)).toEqual(['anti T2 B0 {[(),())}']);
    expect([...(await q.fence(s))]).toEqual([5]);
    expect(read).toBe(2);
    await q.destroy();
  });

  it('refuses a kernel whose chunks all write the scalar at once, as overlapping writes', async () => {
    const q = queue({ chunks: 2 });
    const s = q.buffer(Float64Array, []);
    expect(() => q.submit((cg) => cg.parallelFor([8], 'fill', cg.write(s, access.all(), { noInit: true }), 0, 1, 1))).toThrow(TaskGraphError);
    expect(() => q.submit((cg) => cg.parallelFor([8], 'fill', cg.write(s, access.all(), { noInit: true }), 0, 1, 1))).toThrow(
      /^task T1 'fill' writes the region \{\[\(\),\(\)\)\} of buffer B0 from two chunks at once/,
    );
    await q.destroy();
  });

  it('warns of a read of a scalar no task wrote, naming its one element', async () => {
    const warnings: GraphWarning[] = [];
    const q = queue({ onWarning: (w) => warnings.push(w) });
    const s = q.buffer(Float64Array, [], { name: 'total' });
    q.submit((cg) => cg.parallelFor([], 'add', cg.readWrite(s, access.oneToOne()), 0, 1, 1));
    expect(warnings.map((w) => [w.kind, formatRegion(w.region)])).toEqual([['uninitialized-read', '{[(),())}']]);
    expect(warnings[0]!.message).toMatch(/^task T1 'add' reads \{\[\(\),\(\)\)\} of buffer B0 'total', which no task has written/);
    await q.wait();
    await q.destroy();
  });

  it('checks kernel accesses to a scalar under debug bounds', async () => {
    const q = queue({ debugBounds: true });
    const s = q.buffer(Float64Array, [], { init: [1] });
    q.submit((cg) => cg.parallelFor([], 'add', cg.readWrite(s, access.oneToOne()), 0, 1, 1));
    expect([...(await q.fence(s))]).toEqual([2]);
    await q.destroy();
  });

  it('gives a host task a view of the scalar: one element, shape ()', async () => {
    const q = queue();
    const s = q.buffer(Int32Array, [], { init: [41] });
    let seen: unknown;
    q.submit((cg) => {
      const acc = cg.readWrite(s, access.all());
      cg.hostTask((h) => {
        const view = h.view(acc);
        seen = { shape: view.shape, length: view.data.length, region: formatRegion(view.region) };
        view.data[0]! += 1;
      });
    });
    expect([...(await q.fence(s))]).toEqual([42]);
    expect(seen).toEqual({ shape: [], length: 1, region: '{[(),())}' });
    await q.destroy();
  });
});

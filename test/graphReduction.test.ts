import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { access, ArgumentError, createContext, formatDependency, OptionError, Reduction, StateError, type Context, type GraphWarning, type Job, type KernelModule, type Queue } from '../src/index.js';
import { combine, reductionIdentity } from '../src/graph/reduction.js';

describe('reduction operations', () => {
  it('start from the identity of each operation and element type', () => {
    expect(reductionIdentity('sum', 'float64')).toBe(0);
    expect(reductionIdentity('product', 'int32')).toBe(1);
    expect(reductionIdentity('min', 'float32')).toBe(Infinity);
    expect(reductionIdentity('max', 'float64')).toBe(-Infinity);
    expect(reductionIdentity('min', 'int8')).toBe(127);
    expect(reductionIdentity('max', 'uint16')).toBe(0);
    expect(reductionIdentity('min', 'uint32')).toBe(2 ** 32 - 1);
    expect(reductionIdentity('sum', 'bigint64')).toBe(0n);
    expect(reductionIdentity('max', 'bigint64')).toBe(-(2n ** 63n));
    expect(reductionIdentity('min', 'biguint64')).toBe(2n ** 64n - 1n);
  });

  it('fold values into a start value', () => {
    expect(combine('sum', 1, [2, 3])).toBe(6);
    expect(combine('product', 2, [3, 4])).toBe(24);
    expect(combine('min', Infinity, [3, -1, 2])).toBe(-1);
    expect(combine('max', -Infinity, [])).toBe(-Infinity);
    expect(combine('sum', 0n, BigInt64Array.of(5n, 7n))).toBe(12n);
  });
});

describe('reductions into a one-element buffer', () => {
  let ctx: Context;
  let job: Job;
  let mod: KernelModule;
  beforeAll(async () => {
    ctx = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } });
    mod = await ctx.createModule(new URL('./fixtures/graphReductionKernels.ts', import.meta.url));
    job = ctx.createJob();
  });
  afterAll(async () => {
    await ctx.destroy();
  });

  function queue(options: Parameters<Context['createQueue']>[0] = {}): Queue {
    // A shared Job, so that a test failing before destroy() leaves no Job holding the Sub.
    const q = ctx.createQueue({ job, chunks: 3, ...options });
    q.load(mod);
    return q;
  }

  /** The fold kernel's operation codes (kernel arguments are numbers). */
  const OP = { sum: 0, product: 1, min: 2, max: 3 } as const;
  const values = Float64Array.from({ length: 10 }, (_, i) => i + 1); // 1..10

  it('combines every chunk’s partial and the old value into a 0-dimensional buffer', async () => {
    const q = queue();
    const xs = q.buffer(Float64Array, [10], { init: values });
    const total = q.buffer(Float64Array, [], { init: [100] });
    const t = q.submit((cg) => cg.parallelFor([10], 'fold', cg.read(xs, access.oneToOne()), cg.reduce(total, 'sum'), OP.sum));
    expect(t.chunks).toHaveLength(3);
    expect(t.accesses.map((a) => [a.mapper, a.access.mode])).toEqual([['oneToOne()', 'read'], ['reduction(sum)', 'read_write']]);
    expect(t.dependencies.map(formatDependency)).toEqual(['true T1 B0 {[(0),(10))}', 'true T2 B1 {[(),())}']);
    expect([...(await q.fence(total))]).toEqual([155]);
    await q.destroy();
  });

  it('starts from the identity with initializeToIdentity, depending on no earlier writer of the value', async () => {
    const q = queue();
    const xs = q.buffer(Float64Array, [10], { init: values });
    const best = q.buffer(Float64Array, [], { init: [1000] });
    const t = q.submit((cg) => cg.parallelFor([10], 'fold', cg.read(xs, access.oneToOne()), cg.reduce(best, 'max', { initializeToIdentity: true }), OP.max));
    expect(t.accesses[1]).toMatchObject({ mapper: 'reduction(max, initializeToIdentity)', access: { mode: 'write', noInit: true } });
    expect(t.dependencies.map(formatDependency)).toEqual(['true T1 B0 {[(0),(10))}', 'output T2 B1 {[(),())}']);
    expect([...(await q.fence(best))]).toEqual([10]);
    await q.destroy();
  });

  it('reduces with min and product, over integer and bigint elements, into a buffer of extent 1', async () => {
    const q = queue();
    const ints = q.buffer(Int32Array, [10], { init: Int32Array.from(values, (v) => 11 - v) });
    const least = q.buffer(Int32Array, [1]);
    q.submit((cg) => cg.parallelFor([10], 'fold', cg.read(ints, access.oneToOne()), cg.reduce(least, 'min', { initializeToIdentity: true }), OP.min));
    const bigs = q.buffer(BigInt64Array, [5], { init: BigInt64Array.of(1n, 2n, 3n, 4n, 5n) });
    const prod = q.buffer(BigInt64Array, [], { init: [2n] });
    q.submit((cg) => cg.parallelFor([5], 'fold', cg.read(bigs, access.oneToOne()), cg.reduce(prod, 'product'), OP.product));
    expect([...(await q.fence(least))]).toEqual([1]);
    expect([...(await q.fence(prod))]).toEqual([240n]);
    await q.destroy();
  });

  it('combines exactly one partial per chunk, and the identity alone for an empty kernel', async () => {
    const q = queue({ chunks: 4 });
    const s = q.buffer(Float64Array, []);
    q.submit((cg) => cg.parallelFor([8], 'mark_partial', cg.reduce(s, 'sum', { initializeToIdentity: true })));
    expect([...(await q.fence(s))]).toEqual([1 + 2 + 3 + 4]);
    const xs = q.buffer(Float64Array, [4], { init: [1, 2, 3, 4] });
    q.submit((cg) => cg.parallelFor([0], 'fold', cg.read(xs, access.oneToOne()), cg.reduce(s, 'sum'), OP.sum));
    expect([...(await q.fence(s))]).toEqual([10]);
    // A 0-dimensional kernel is one chunk with one partial.
    q.submit((cg) => cg.parallelFor([], 'mark_partial', cg.reduce(s, 'max')));
    expect([...(await q.fence(s))]).toEqual([10]);
    await q.destroy();
  });

  it('orders a reader after the reduction and a later reduction after that reader', async () => {
    const q = queue();
    const xs = q.buffer(Float64Array, [10], { init: values });
    const s = q.buffer(Float64Array, [], { init: [0] });
    q.submit((cg) => cg.parallelFor([10], 'fold', cg.read(xs, access.oneToOne()), cg.reduce(s, 'sum'), OP.sum)); // T3
    let seen: number | undefined;
    const reader = q.submit((cg) => {
      const acc = cg.read(s, access.all());
      cg.hostTask((h) => {
        seen = h.view(acc).data[0];
      });
    }); // T4
    const again = q.submit((cg) => cg.parallelFor([10], 'fold', cg.read(xs, access.oneToOne()), cg.reduce(s, 'sum'), OP.sum)); // T5
    expect(reader.dependencies.map(formatDependency)).toEqual(['true T3 B1 {[(),())}']);
    expect(again.dependencies.map(formatDependency)).toEqual(['true T1 B0 {[(0),(10))}', 'true T3 B1 {[(),())}', 'anti T4 B1 {[(),())}']);
    expect([...(await q.fence(s))]).toEqual([110]);
    expect(seen).toBe(55);
    await q.destroy();
  });

  it('warns when it folds in a value no task wrote', async () => {
    const warnings: GraphWarning[] = [];
    const q = queue({ onWarning: (w) => warnings.push(w) });
    const s = q.buffer(Float64Array, []);
    q.submit((cg) => cg.parallelFor([4], 'mark_partial', cg.reduce(s, 'sum')));
    q.submit((cg) => cg.parallelFor([4], 'mark_partial', cg.reduce(s, 'sum', { initializeToIdentity: true })));
    expect(warnings.map((w) => w.task)).toEqual([1]);
    await q.wait();
    await q.destroy();
  });

  it('refuses buffers of more than one element, second declarations, bad options and host tasks', async () => {
    const q = queue();
    const v = q.buffer(Float64Array, [2]);
    const s = q.buffer(Float64Array, [], { name: 'total' });
    expect(() => q.submit((cg) => cg.parallelFor([2], 'mark_partial', cg.reduce(v, 'sum')))).toThrow(
      new ArgumentError('a reduction needs a buffer of one element (a 0-dimensional buffer, q.buffer(type, [])), but buffer B0 has extent (2)'),
    );
    expect(() => q.submit((cg) => {
      cg.reduce(s, 'sum');
      cg.parallelFor([2], 'mark_partial', cg.reduce(s, 'max'));
    })).toThrow(new ArgumentError("reduce: buffer B1 'total' already has a reduction in this command group; a reduced buffer takes no other access in the same task"));
    expect(() => q.submit((cg) => {
      const r = cg.reduce(s, 'sum');
      cg.parallelFor([2], 'mark_partial', r, cg.read(s, access.all()));
    })).toThrow(new ArgumentError("read: buffer B1 'total' already has a reduction in this command group; a reduced buffer takes no other access in the same task"));
    expect(() => q.submit((cg) => {
      const a = cg.read(s, access.all());
      cg.parallelFor([2], 'mark_partial', cg.reduce(s, 'sum'), a);
    })).toThrow(new ArgumentError("reduce: buffer B1 'total' already has an accessor in this command group; a reduced buffer takes no other access in the same task"));
    expect(() => q.submit((cg) => cg.parallelFor([2], 'mark_partial', cg.reduce(s, 'mean' as never)))).toThrow(OptionError);
    expect(() => q.submit((cg) => cg.parallelFor([2], 'mark_partial', cg.reduce(s, 'sum', { initialize: true } as never)))).toThrow(
      /^reduce options has no option 'initialize'/,
    );
    expect(() => q.submit((cg) => {
      cg.reduce(s, 'sum');
      cg.hostTask(() => undefined);
    })).toThrow(new StateError("a host task takes no reductions (buffer B1 'total'): reduce in a kernel, or read and write the buffer with readWrite"));
    let other: Reduction | undefined;
    q.submit((cg) => {
      other = cg.reduce(s, 'sum', { initializeToIdentity: true });
      cg.parallelFor([2], 'mark_partial', other);
    });
    expect(() => q.submit((cg) => cg.parallelFor([2], 'mark_partial', other!))).toThrow(
      new ArgumentError("argument 0 of parallelFor is a reduction declared in another command group; declare it with this command group's reduce", 0),
    );
    // Refused submits added nothing: the one task is T1, and its result is the partials' sum.
    expect([...(await q.fence(s))]).toEqual([3]);
    await q.destroy();
  });
});

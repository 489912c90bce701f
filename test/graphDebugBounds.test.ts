import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { access, createContext, OptionError, TaskGraphError, type Context, type Job, type KernelModule, type Queue } from '../src/index.js';

let ctx: Context;
let job: Job;
let mod: KernelModule;

beforeAll(async () => {
  ctx = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } });
  mod = await ctx.createModule(new URL('./fixtures/graphKernels.ts', import.meta.url));
  job = ctx.createJob();
});
afterAll(async () => {
  await ctx.destroy();
});

function queue(debugBounds: boolean): Queue {
  const q = ctx.createQueue({ job, chunks: 2, debugBounds, uninitializedReads: 'throw' });
  q.load(mod);
  return q;
}

describe('debug bounds mode', () => {
  it('reports a read outside the declared neighborhood, naming the buffer, the index and the declared region', async () => {
    const q = queue(true);
    const src = q.buffer(Float64Array, [16], { init: new Float64Array(16).fill(1), name: 'src' });
    const dst = q.buffer(Float64Array, [16], { name: 'dst' });
    // Declares one point either side, reads two.
    q.submit((cg) => cg.parallelFor([16], 'blur', cg.read(src, access.neighborhood([1])), cg.write(dst, access.oneToOne(), { noInit: true }), 2));
    const error = await q.wait().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TaskGraphError);
    const message = (error as Error).message;
    // Chunk 0 is [0,8): it may read [0,9) and first steps outside at 9; chunk 1 is [8,16): [7,16), first outside at 6.
    expect(message).toMatch(/task T2 'blur' failed in chunk (0|1)/);
    expect(message).toMatch(/out-of-bounds read of buffer B0 'src' at index \((9|6)\) in chunk (0|1): outside the declared region \{\[\((0|7)\),\((9|16)\)\)\}/);
    if (message.includes('in chunk 0 (')) expect(message).toContain("at index (9) in chunk 0: outside the declared region {[(0),(9))}");
    else expect(message).toContain("at index (6) in chunk 1: outside the declared region {[(7),(16))}");
    await q.destroy();
  });

  it('reports a write outside the declared region, and a write through a read accessor', async () => {
    const q = queue(true);
    const out = q.buffer(Float64Array, [16], { name: 'out' });
    q.submit((cg) => cg.parallelFor([16], 'shifted_write', cg.write(out, access.oneToOne(), { noInit: true }), 3));
    await expect(q.wait()).rejects.toThrow(/out-of-bounds write of buffer B0 'out' at index \(8\) in chunk 0: outside the declared region \{\[\(0\),\(8\)\)\}/);
    const ro = q.buffer(Float64Array, [16], { init: new Float64Array(16), name: 'ro' });
    q.submit((cg) => cg.parallelFor([16], 'shifted_write', cg.read(ro, access.oneToOne()), 0));
    await expect(q.wait()).rejects.toThrow(/out-of-bounds write of buffer B1 'ro' at index \((0|8)\) in chunk (0|1): a write through a read-only accessor/);
    await q.destroy();
  });

  it('lets well-behaved kernels run with the same results, and does not check without the option', async () => {
    const checked = queue(true);
    const plain = queue(false);
    for (const q of [checked, plain]) {
      const src = q.buffer(Float64Array, [16], { init: Float64Array.from({ length: 16 }, (_, i) => i) });
      const dst = q.buffer(Float64Array, [16]);
      q.submit((cg) => cg.parallelFor([16], 'blur', cg.read(src, access.neighborhood([2])), cg.write(dst, access.oneToOne(), { noInit: true }), 2));
      const expected = Array.from({ length: 16 }, (_, i) => {
        let s = 0;
        for (let k = Math.max(0, i - 2); k <= Math.min(15, i + 2); k++) s += k;
        return s;
      });
      expect([...(await q.fence(dst))]).toEqual(expected);
    }
    // Without the option nothing checks: the too-narrow declaration goes unnoticed.
    const src = plain.buffer(Float64Array, [16], { init: new Float64Array(16).fill(1) });
    const dst = plain.buffer(Float64Array, [16]);
    plain.submit((cg) => cg.parallelFor([16], 'blur', cg.read(src, access.neighborhood([1])), cg.write(dst, access.oneToOne(), { noInit: true }), 2));
    await expect(plain.wait()).resolves.toBeUndefined();
    await checked.destroy();
    await plain.destroy();
  });

  it('refuses a debugBounds that is not a boolean', () => {
    expect(() => ctx.createQueue({ job, debugBounds: 1 as unknown as boolean })).toThrow(OptionError);
  });
});

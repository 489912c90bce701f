import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { access, CancelledError, CommandQueue, createContext, pdist, randomPcfs, StateError, type Context, type PcfSet } from '../src/index.js';
import { defaultContext, destroyDefaultContext } from '../src/pcf/defaultContext.js';

/**
 * One Context, many users: concurrent pairwise calls share a Context's Subs (the default Context's
 * and a caller's), wait for a Sub rather than fail when none is free, and settle when the Context
 * goes. Results are compared with the same calls made one after another, exactly: every pair is
 * computed by the same kernel whichever Job runs it.
 */

const DESTROYED = new StateError('this Context was destroyed; create a new one with createContext() (pdist, cdist and l2Kernel without a context open a new default one themselves)');
// Small blocks, so each call is many launches and concurrent calls interleave on the Jobs.
const blocks = { maxOutputElements: 200, minBlockSide: 8 };
const sets: PcfSet[] = Array.from({ length: 8 }, (_, k) => randomPcfs({ n: 40 + 3 * k, points: 12, seed: 100 + k }));

/** Each set's condensed matrix, computed one call at a time on `ctx` (the default Context when undefined). */
async function sequential(ctx: Context | undefined): Promise<number[][]> {
  const out: number[][] = [];
  for (const [k, set] of sets.entries()) out.push(Array.from((await pdist(set, { ...blocks, p: 1 + (k % 3), ...(ctx === undefined ? {} : { context: ctx }) })).condensed));
  return out;
}

/** Lets every pending callback run, several turns over; a call that cannot finish stays pending. */
async function settleTurns(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

/** Whether `p` has settled, without waiting for it. */
function tracker(p: Promise<unknown>): () => boolean {
  let settled = false;
  p.then(() => (settled = true), () => (settled = true));
  return () => settled;
}

let ctx: Context;
let reference: number[][];

beforeAll(async () => {
  ctx = await createContext({ topology: { subs: 2, clustersPerSub: 1, coresPerCluster: 1 } });
  reference = await sequential(ctx);
});

afterAll(async () => {
  await ctx?.destroy();
  await destroyDefaultContext();
});

describe('concurrent pairwise calls on one Context', () => {
  it('runs 8 pdist calls at once without a context and gives what the same calls give one after another', async () => {
    const results = await Promise.all(sets.map((set, k) => pdist(set, { ...blocks, p: 1 + (k % 3) })));
    expect(results.map((d) => Array.from(d.condensed))).toEqual(reference);
    expect(await sequential(undefined)).toEqual(reference);
  });

  it("runs 8 pdist calls at once on a caller's Context, then gives every Sub back to the caller", async () => {
    const results = await Promise.all(sets.map((set, k) => pdist(set, { context: ctx, ...blocks, p: 1 + (k % 3) })));
    expect(results.map((d) => Array.from(d.condensed))).toEqual(reference);
    expect(ctx.availableSubCount).toBe(2);
    // The Jobs kept for the next call give way: a Job of every Sub can be made at once.
    const job = ctx.createJob();
    expect(job.subCount).toBe(2);
    ctx.destroyJob(job);
  });

  it('waits for a Sub that a Job holds, and runs once the Job is destroyed', async () => {
    const job = ctx.createJob();
    const call = pdist(sets[0]!, { context: ctx, ...blocks });
    const settled = tracker(call);
    await settleTurns();
    expect(settled()).toBe(false);
    ctx.destroyJob(job);
    expect(Array.from((await call).condensed)).toEqual(reference[0]);
  });

  it('runs on the Jobs it lists beside their Context, which has no Sub free, instead of waiting for itself', async () => {
    const job = ctx.createJob();
    try {
      // Before, such a call waited for a Sub its own Job held, and never settled (the test timed out).
      for (const devices of [[job, ctx], [ctx, job]]) expect(Array.from((await pdist(sets[0]!, { devices, ...blocks })).condensed)).toEqual(reference[0]);
      // Also while another call waits for the Context's Subs: it runs once the Job is destroyed.
      const waiting = pdist(sets[1]!, { context: ctx, ...blocks, p: 2 });
      await settleTurns();
      expect(Array.from((await pdist(sets[0]!, { devices: [job, ctx], ...blocks })).condensed)).toEqual(reference[0]);
      ctx.destroyJob(job);
      expect(Array.from((await waiting).condensed)).toEqual(reference[1]);
    } finally {
      if (job.subCount > 0) ctx.destroyJob(job);
    }
  }, 20_000);

  it('says, when a Job cannot get a Sub, how many belong to pairwise calls running now', async () => {
    const refusals: unknown[] = [];
    const tryCreate = (numSub?: number): void => {
      try {
        ctx.destroyJob(ctx.createJob(numSub));
      } catch (err) {
        refusals.push(err);
      }
    };
    // While a block is reported the call holds its Jobs: every Sub of the Context.
    await pdist(sets[2]!, { context: ctx, ...blocks, onProgress: () => void (refusals.length === 0 && (tryCreate(1), tryCreate())) });
    const held = '; 2 of them belong to pdist, cdist or l2Kernel calls running on this Context, which give them back when they end';
    expect(refusals.map((e) => [(e as Error).name, (e as Error).message])).toEqual([
      ['NoSubAvailableError', `cannot take 1 Sub: 0 of 2 are free; destroy a Job or free Subs with job.subFree() first${held}`],
      ['NoSubAvailableError', `createJob: no Sub is free (all 2 belong to Jobs); destroy a Job with ctx.destroyJob(job), or free Subs with job.subFree(), first${held}`],
    ]);
    // Once the call has ended its Subs are lent, and a Job takes them.
    tryCreate();
    expect(refusals).toHaveLength(2);
  });

  it('stops waiting for a Sub with CancelledError when its signal aborts, and holds nothing', async () => {
    const job = ctx.createJob();
    const abort = new AbortController();
    const call = pdist(sets[1]!, { context: ctx, ...blocks, p: 2, signal: abort.signal });
    await settleTurns();
    abort.abort();
    await expect(call).rejects.toThrow(new CancelledError('the pairwise computation was cancelled while it waited for a free Sub'));
    expect(job.subCount).toBe(2);
    ctx.destroyJob(job);
    expect(Array.from((await pdist(sets[1]!, { context: ctx, ...blocks, p: 2 })).condensed)).toEqual(reference[1]);
  });

  it('rejects with the Context\'s error when the Context is destroyed while a call waits for a Sub', async () => {
    const other = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 1 } });
    other.createJob();
    const call = pdist(sets[0]!, { context: other, ...blocks });
    await settleTurns();
    await other.destroy();
    await expect(call).rejects.toThrow(DESTROYED);
  });

  it("rejects with the Context's error when the Context is destroyed while a call computes", async () => {
    const other = await createContext({ topology: { subs: 2, clustersPerSub: 1, coresPerCluster: 1 } });
    let destroying: Promise<void> | undefined;
    const call = pdist(sets[7]!, { context: other, ...blocks, onProgress: () => void (destroying ??= other.destroy()) });
    await expect(call).rejects.toThrow(DESTROYED);
    await destroying;
  });
});

describe('pairwise calls beside other work on the Context', () => {
  it('runs a pdist while a task-graph queue runs on a Job of its own, and one that waits for a queue holding every Sub', async () => {
    const other = await createContext({ topology: { subs: 2, clustersPerSub: 1, coresPerCluster: 1 } });
    try {
      const mod = await other.createModule(new URL('./fixtures/graphKernels.ts', import.meta.url));
      // The queue's Job takes one Sub; pdist runs on the other, at the same time.
      const q = other.createQueue({ job: other.createJob(1), chunks: 2 });
      q.load(mod);
      const a = q.buffer('float64', [64]);
      q.submit((cg) => cg.parallelFor([64], 'iota', cg.write(a, access.oneToOne(), { noInit: true }), 3));
      const [d, filled] = await Promise.all([pdist(sets[2]!, { context: other, ...blocks, p: 3 }), q.fence(a)]);
      expect(Array.from(d.condensed)).toEqual(reference[2]);
      expect(Array.from(filled)).toEqual(Array.from({ length: 64 }, (_, i) => 3 + i));
      await q.destroy();

      // A queue with every Sub: pdist waits its turn and runs once the queue is gone.
      const all = other.createQueue({ chunks: 2 });
      all.load(mod);
      const b = all.buffer('float64', [8]);
      all.submit((cg) => cg.parallelFor([8], 'iota', cg.write(b, access.oneToOne(), { noInit: true }), 0));
      const call = pdist(sets[3]!, { context: other, ...blocks, p: 1 });
      const settled = tracker(call);
      expect(Array.from(await all.fence(b))).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      await settleTurns();
      expect(settled()).toBe(false);
      await all.destroy();
      expect(Array.from((await call).condensed)).toEqual(reference[3]);
    } finally {
      await other.destroy();
    }
  });

  it('runs two command queues at once, on Jobs of their own and on one shared Job, with the results of each alone', async () => {
    const other = await createContext({ topology: { subs: 2, clustersPerSub: 1, coresPerCluster: 1 } });
    try {
      const mod = await other.createModule(new URL('./fixtures/muxKernels.ts', import.meta.url));
      const run = async (q: CommandQueue, start: number): Promise<number[]> => {
        const data = other.memAlloc(16);
        const out = new Int32Array(4);
        q.enqueueWrite(data, 0, Int32Array.of(start, start + 1, start + 2, start + 3)).enqueueLaunch('mux_double', { global: [4] }, data).enqueueLaunch('mux_double', { global: [4] }, data).enqueueRead(data, 0, out);
        await q.finish();
        other.memFree(data);
        return Array.from(out);
      };
      const [j1, j2] = [other.createJob(1), other.createJob(1)];
      for (const job of [j1, j2]) job.load(mod);
      const expected = [[4, 8, 12, 16], [40, 44, 48, 52]];
      expect(await Promise.all([run(new CommandQueue(other, j1), 1), run(new CommandQueue(other, j2), 10)])).toEqual(expected);
      expect(await Promise.all([run(new CommandQueue(other, j1), 1), run(new CommandQueue(other, j1), 10)])).toEqual(expected);
    } finally {
      await other.destroy();
    }
  });
});

describe('the default Context', () => {
  it('is created once, kept between calls, and made afresh after destroyDefaultContext, which fails the calls running on it', async () => {
    const first = await defaultContext();
    await pdist(sets[0]!, blocks);
    expect(await defaultContext()).toBe(first);
    let destroying: Promise<void> | undefined;
    const call = pdist(sets[7]!, { ...blocks, onProgress: () => void (destroying ??= destroyDefaultContext()) });
    await expect(call).rejects.toThrow(DESTROYED);
    await destroying;
    expect(Array.from((await pdist(sets[0]!, blocks)).condensed)).toEqual(reference[0]);
    expect(await defaultContext()).not.toBe(first);
  });

  it('is destroyed by the time a second destroyDefaultContext, called while the first runs, resolves', async () => {
    const ctx = await defaultContext();
    const first = destroyDefaultContext();
    await destroyDefaultContext();
    expect(() => ctx.getAttribute('subCount')).toThrow(DESTROYED);
    await first;
  });

  it('does not keep the process alive: a script that calls pdist without a context exits by itself', async () => {
    const root = fileURLToPath(new URL('..', import.meta.url));
    const child = spawn(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'test/fixtures/defaultContextChild.ts'], { cwd: root, timeout: 60_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('exit', (c, s) => resolve([c, s])));
    expect({ code, signal, stdout: stdout.trim() }, stderr).toEqual({ code: 0, signal: null, stdout: '25' });
  }, 90_000);
});

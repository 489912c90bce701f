import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../src/backends/cpu/cpuBackend.js';
import { Context as ContextClass } from '../src/pxl/context.js';
import { createContext, Result, StateError, type Context } from '../src/index.js';

/**
 * Streams and teardown: a Job's default stream lives as long as its Job, and `ctx.destroy()`
 * settles everything outstanding with one StateError, refuses every later call the same way, and
 * leaves nothing that keeps the process alive.
 */

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const destroyed = 'StateError: this Context was destroyed; create a new one with createContext() (pdist, cdist and l2Kernel without a context open a new default one themselves)';

let ctx: Context;

beforeAll(async () => {
  ctx = await createContext({ topology: { coresPerCluster: 1 } });
});

afterAll(async () => {
  await ctx?.destroy();
});

describe("a Job's default stream", () => {
  it('cannot be destroyed, and the Job keeps running on it', async () => {
    const job = ctx.createJob();
    try {
      job.load(await ctx.createModule(new URL('./fixtures/kernels.ts', import.meta.url)));
      const destroy = () => ctx.destroyStream(job.defaultStream);
      expect(destroy).toThrow(StateError);
      expect(destroy).toThrow("destroyStream: this is a Job's default stream, which lives as long as its Job; destroy the Job with ctx.destroyJob(job) instead");
      expect(job.defaultStream.destroyed).toBe(false);
      const counts = ctx.memAlloc(4 * 2);
      const map = job.buildMap('count_tasks', 2);
      expect(await map.execute(counts)).toBe(Result.Success);
      await map.synchronize();
      expect(map.getExecuteStatus()).toBe('Idle');
      expect([...ctx.hostView(counts, 'int32')]).toEqual([1, 1]);
      ctx.memFree(counts);
    } finally {
      ctx.destroyJob(job);
    }
  });
});

describe('Context.destroy', () => {
  it('called again while the first call runs, resolves only once the cores have ended', async () => {
    const backend = await CpuBackend.create({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 }, memorySize: 1 << 20 });
    const own = new ContextClass(backend);
    const workers = [0, 1].map((core) => backend.coreInternals(core).worker);
    const first = own.destroy();
    await own.destroy();
    // A worker thread that has exited reports threadId -1.
    expect(workers.map((w) => w.threadId)).toEqual([-1, -1]);
    await first;
  });

  it('settles every kind of outstanding work with one StateError, refuses later calls with it, and lets the process exit by itself', async () => {
    // A separate process (fixtures/teardownChild.ts): it must exit on its own once the Context is
    // destroyed, which it cannot do while a worker, a timer or a handle is left behind. The
    // timeout only turns a hang into a failure.
    const { stdout } = await run(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'test/fixtures/teardownChild.ts'], { cwd: root, timeout: 60_000 });
    expect(JSON.parse(stdout)).toEqual({
      synchronize: destroyed,
      fence: destroyed,
      finish: destroyed,
      graphFence: destroyed,
      graphWait: destroyed,
      module: destroyed,
      semaphore: 'failed',
      laterExecute: destroyed,
      laterDispatch: destroyed,
      laterEnqueue: destroyed,
      laterSubmit: destroyed,
    });
  });
});

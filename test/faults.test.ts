import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreDiedError, createContext, KernelError, type Context, type Job } from '../src/index.js';

/**
 * Failures on the device: a kernel that throws, a core whose thread exits, a core that runs out of
 * heap. Each fails only the Map that ran it, and the device keeps working; none may hang (a hang
 * fails the test by its timeout).
 */

const kernels = new URL('./fixtures/kernels.ts', import.meta.url);

let ctx: Context;
let job: Job;

beforeAll(async () => {
  ctx = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } });
  job = ctx.createJob();
  job.load(await ctx.createModule(kernels));
});

afterAll(async () => {
  await ctx?.destroy();
});

/** Runs count_tasks over `taskCount` tasks on `target` and returns the run counts. */
async function countTasks(target: Context, on: Job, taskCount: number): Promise<number[]> {
  const counts = target.memAlloc(taskCount * 4);
  try {
    const map = on.buildMap('count_tasks', taskCount).setBatchSize(1);
    await map.execute(counts);
    await map.synchronize();
    return [...target.hostView(counts, 'int32')];
  } finally {
    target.memFree(counts);
  }
}

/** threadId of the worker thread behind each of the Job's cores, by core. */
async function coreThreads(): Promise<number[]> {
  const counts = ctx.memAlloc(8);
  const threads = ctx.memAlloc(8);
  const map = job.buildMap('mark_thread', 2).setBatchSize(1);
  await map.execute(counts, threads);
  await map.synchronize();
  const out = [...ctx.hostView(threads, 'int32')];
  ctx.memFree(counts);
  ctx.memFree(threads);
  return out;
}

describe('a kernel that throws', () => {
  it('fails its own Map and nothing else: other Maps on the same Job keep running', async () => {
    const failing = job.buildMap('throw_at', 8).setBatchSize(1);
    await failing.execute(3);
    await expect(failing.synchronize()).rejects.toThrow(KernelError);
    expect(failing.getExecuteStatus()).toBe('Fail');
    expect(failing.error?.message).toBe("kernel 'throw_at' threw at task 3: boom at 3");

    expect(await countTasks(ctx, job, 16)).toEqual(new Array(16).fill(1));
    const sameKernel = job.buildMap('throw_at', 8);
    await sameKernel.execute(-1);
    await sameKernel.synchronize();
    expect(sameKernel.getExecuteStatus()).toBe('Idle');
  });

  it('stops the failing batch at the throwing task and counts that batch issued but not done', async () => {
    const counts = ctx.memAlloc(4 * 8);
    const log = ctx.memAlloc(4 * 2);
    // One batch of eight tasks: task 0 logs the launch and throws, so tasks 1-7 never run.
    const map = job.buildMap('log_launch', 8).setBatchSize(8);
    await map.execute(log, counts, 0, 0);
    await expect(map.synchronize()).rejects.toThrow("kernel 'log_launch' threw at task 0: launch 0 fails on purpose");
    expect([...ctx.hostView(counts, 'int32')]).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    expect(map.getProgress()).toEqual({ target: 1, issued: 1, done: 0 });
    ctx.memFree(counts);
    ctx.memFree(log);
  });
});

describe('a core whose thread exits', () => {
  it('fails the running Map with CoreDiedError, is replaced, and the next execute runs on every core', async () => {
    const before = await coreThreads();
    const map = job.buildMap('exit_core', 1);
    await map.execute();
    const failure = await map.synchronize().then(() => undefined, (e: unknown) => e);
    expect(failure).toBeInstanceOf(CoreDiedError);
    const err = failure as CoreDiedError;
    expect(err.message).toBe(`MU core 0 died while running kernel 'exit_core' (Map ${map.id}, task 0): its worker thread exited with code 3; the core was replaced and the next execute can run`);
    expect(err.code).toBe('PXL_CORE_DIED');
    expect([err.core, err.kernel]).toEqual([0, 'exit_core']);
    expect(map.getExecuteStatus()).toBe('Fail');
    expect(map.getProgress()).toEqual({ target: 1, issued: 1, done: 0 });

    expect(await countTasks(ctx, job, 32)).toEqual(new Array(32).fill(1));
    const after = await coreThreads();
    expect(after[0]).not.toBe(before[0]);
    expect(after[1]).toBe(before[1]);
  });
});

describe('a core that runs out of memory', () => {
  it('fails the running Map with CoreDiedError that says so, and the next execute works', async () => {
    const small = await createContext({ topology: { coresPerCluster: 1 }, coreHeapLimitMB: 32 });
    try {
      const smallJob = small.createJob();
      smallJob.load(await small.createModule(kernels));
      const map = smallJob.buildMap('exhaust_heap', 1);
      await map.execute();
      const failing = map.synchronize();
      await expect(failing).rejects.toThrow(CoreDiedError);
      await expect(failing).rejects.toThrow(
        `MU core 0 died while running kernel 'exhaust_heap' (Map ${map.id}, task 0): its worker thread ran out of memory; the core was replaced and the next execute can run`,
      );
      expect(map.getExecuteStatus()).toBe('Fail');
      expect(await countTasks(small, smallJob, 8)).toEqual(new Array(8).fill(1));
    } finally {
      await small.destroy();
    }
  });
});

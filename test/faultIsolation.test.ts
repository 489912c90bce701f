import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreDiedError, createContext, KernelError, Result, UnsupportedError, type Context, type Job } from '../src/index.js';
import { gateBytes, openAllGates, waitForStarted } from './fixtures/gates.js';

/**
 * When an MU core dies, only the launch that had a batch in progress on it fails, with an error
 * naming the Map, the kernel, the tasks and the cause; launches queued behind it on that core run
 * on the replacement. The device has two cores; interleavings are forced with gates.
 */

let ctx: Context;
let job: Job;

beforeAll(async () => {
  ctx = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } });
  job = ctx.createJob();
  job.load(await ctx.createModule(new URL('./fixtures/kernels.ts', import.meta.url)));
  job.load(await ctx.createModule(new URL('./fixtures/faultKernels.ts', import.meta.url)));
});

afterAll(async () => {
  await ctx?.destroy();
});

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(() => undefined, (e: unknown) => e);
}

describe('a core that dies', () => {
  it('fails only the launch it was running: a launch of another Map queued behind it on that core runs on the replacement', async () => {
    const gatesPtr = ctx.memAlloc(gateBytes(1));
    const counts = ctx.memAlloc(4 * 2);
    try {
      const gates = ctx.hostView(gatesPtr, 'int32');
      const dying = job.buildMap('exit_after_gate', 1).setStream(ctx.createStream());
      const bystander = job.buildMap('count_tasks', 2).setBatchSize(1).setStream(ctx.createStream());
      await dying.execute(gatesPtr, 7);
      await waitForStarted(gates, 1);
      // Task 0 of the bystander is queued on core 0's ring behind the held launch; task 1 runs on core 1.
      expect(await bystander.execute(counts)).toBe(Result.Success);
      expect(bystander.getExecuteStatus()).toBe('Waiting');
      openAllGates(gates);
      const failure = await failureOf(dying.synchronize());
      expect(failure).toBeInstanceOf(CoreDiedError);
      expect((failure as Error).message).toBe(
        `MU core 0 died while running kernel 'exit_after_gate' (Map ${dying.id}, task 0): its worker thread exited with code 7; the core was replaced and the next execute can run`,
      );
      await bystander.synchronize();
      expect(bystander.getExecuteStatus()).toBe('Idle');
      expect([...ctx.hostView(counts, 'int32')]).toEqual([1, 1]);
    } finally {
      ctx.memFree(gatesPtr);
      ctx.memFree(counts);
    }
  });

  it('names the Map, the kernel, the tasks of the batch in progress and the exit code', async () => {
    const counts = ctx.memAlloc(4 * 8);
    try {
      // Batches of four tasks: core 0 runs tasks 0-3, core 1 tasks 4-7 and dies at task 5.
      const map = job.buildMap('exit_at', 8).setBatchSize(4);
      await map.execute(counts, 5, 9);
      const failure = await failureOf(map.synchronize());
      expect(failure).toBeInstanceOf(CoreDiedError);
      const err = failure as CoreDiedError;
      expect(err.message).toBe(`MU core 1 died while running kernel 'exit_at' (Map ${map.id}, tasks 4-7): its worker thread exited with code 9; the core was replaced and the next execute can run`);
      expect([err.core, err.kernel, err.mapId, err.tasks, err.replaced]).toEqual([1, 'exit_at', map.id, [4, 7], true]);
      expect(map.getExecuteStatus()).toBe('Fail');
      // The core was replaced: a launch over both cores runs every task.
      const after = job.buildMap('count_tasks', 8).setBatchSize(1);
      const fresh = ctx.memAlloc(4 * 8);
      await after.execute(fresh);
      await after.synchronize();
      expect([...ctx.hostView(fresh, 'int32')]).toEqual(new Array(8).fill(1));
      ctx.memFree(fresh);
    } finally {
      ctx.memFree(counts);
    }
  });

  it('fails the Map with KernelError, and kills no core, when a kernel throws a value that is not an Error', async () => {
    const map = job.buildMap('throw_value', 2).setBatchSize(1);
    await map.execute(5);
    const failure = await failureOf(map.synchronize());
    expect(failure).toBeInstanceOf(KernelError);
    expect((failure as Error).message).toBe("kernel 'throw_value' threw at task 0: 5");
  });
});

describe('a module loaded while a core dies', () => {
  it('is loaded with all its kernels: the replacement core imports it and answers for it', async () => {
    const own = await createContext({ topology: { coresPerCluster: 1 } });
    try {
      const ownJob = own.createJob();
      ownJob.load(await own.createModule(new URL('./fixtures/kernels.ts', import.meta.url)));
      const killer = ownJob.buildMap('exit_core', 1);
      await killer.execute();
      const loading = own.createModule(new URL('./fixtures/jsKernels.mjs', import.meta.url));
      await expect(killer.synchronize()).rejects.toThrow(CoreDiedError);
      const module = await loading;
      expect(module.kernelNames).toEqual(['js_batch_count', 'js_mark_rows']);
      ownJob.load(module);
      const counts = own.memAlloc(4 * 3);
      const map = ownJob.buildMap('js_batch_count', 3);
      await map.execute(counts);
      await map.synchronize();
      expect([...own.hostView(counts, 'int32')]).toEqual([1, 1, 1]);
    } finally {
      await own.destroy();
    }
  });
});

describe('a kernel that returns a promise', () => {
  const notAwaited = 'the kernel returned a Promise, and MU cores do not await kernels: make the kernel synchronous (do asynchronous work on the host, before execute() or after synchronize())';

  it('is refused when the Map is built, when it is declared async', () => {
    const build = () => job.buildMap('async_rejects', 4);
    expect(build).toThrow(UnsupportedError);
    expect(build).toThrow(
      "kernel 'async_rejects' is an async function: MU cores run kernels synchronously and cannot await them, so its work and failures would escape the launch; make it a plain (synchronous) function and do asynchronous work on the host",
    );
  });

  it('fails its launch with KernelError when a plain function returns a promise that rejects, and its core lives on', async () => {
    const map = job.buildMap('returns_rejecting_promise', 1);
    await map.execute();
    const failure = await failureOf(map.synchronize());
    expect(failure).toBeInstanceOf(KernelError);
    expect((failure as Error).message).toBe(`kernel 'returns_rejecting_promise' threw at task 0: ${notAwaited}`);
    expect(map.getExecuteStatus()).toBe('Fail');
    const counts = ctx.memAlloc(4 * 2);
    const after = job.buildMap('count_tasks', 2).setBatchSize(1);
    await after.execute(counts);
    await after.synchronize();
    expect([...ctx.hostView(counts, 'int32')]).toEqual([1, 1]);
    ctx.memFree(counts);
  });

  it('never reports success, even when the promise would resolve', async () => {
    const counts = ctx.memAlloc(4);
    const map = job.buildMap('returns_promise', 1);
    await map.execute(counts);
    await expect(map.synchronize()).rejects.toThrow(`kernel 'returns_promise' threw at task 0: ${notAwaited}`);
    ctx.memFree(counts);
  });
});

describe('a core whose replacement keeps dying', () => {
  it('is given up after a bounded number of tries, and every launch that needs it fails with the cause', async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'pxl-flag-'));
    const flag = join(dir, 'die');
    const own = await createContext({ topology: { coresPerCluster: 1 } });
    try {
      const ownJob = own.createJob();
      ownJob.load(await own.createModule(new URL('./fixtures/kernels.ts', import.meta.url)));
      ownJob.load(await own.createModule(new URL(`./fixtures/dieWhenFlagged.mjs?flag=${encodeURIComponent(flag)}`, import.meta.url)));
      // From now on every thread that imports the module exits while it starts.
      writeFileSync(flag, '');
      const killer = ownJob.buildMap('exit_core', 1);
      await killer.execute();
      await expect(killer.synchronize()).rejects.toThrow(CoreDiedError);
      const counts = own.memAlloc(4);
      const map = ownJob.buildMap('count_tasks', 1);
      expect(await map.execute(counts)).toBe(Result.Success);
      const failure = await failureOf(map.synchronize());
      expect(failure).toBeInstanceOf(CoreDiedError);
      expect((failure as Error).message).toBe(
        'MU core 0 died: its replacement died while starting 3 times in a row (last: its worker thread exited with code 5); the core was given up; create a new Context',
      );
      expect((failure as CoreDiedError).replaced).toBe(false);
      expect([...own.hostView(counts, 'int32')]).toEqual([0]);
      // Later launches that need the core are refused with the same error, at once.
      const again = ownJob.buildMap('count_tasks', 1);
      await again.execute(counts);
      await expect(again.synchronize()).rejects.toBe(failure);
    } finally {
      await own.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

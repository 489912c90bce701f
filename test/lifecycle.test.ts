import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createContext, KernelError, Result, StateError, type Context, type DevicePtr, type Job, type PxlError } from '../src/index.js';
import { CpuBackend } from '../src/backends/cpu/cpuBackend.js';
import { gateBytes, openAllGates, openGates, waitForStarted } from './fixtures/gates.js';

/**
 * The execute lifecycle of a Map, observed with getExecuteStatus() and getProgress() while a
 * `gated` kernel holds its tasks at gates the test opens (see fixtures/gates.ts). The device has
 * two cores; with batchSize 1 and 8 tasks in CompactMode, core 0 runs tasks 0-3 and core 1 tasks
 * 4-7, one task per batch.
 */

let ctx: Context;
let job: Job;
const allocated: DevicePtr[] = [];
const openOnExit: Int32Array[] = [];

beforeAll(async () => {
  ctx = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } });
  job = ctx.createJob();
  job.load(await ctx.createModule(new URL('./fixtures/kernels.ts', import.meta.url)));
});

afterEach(() => {
  // A failed assertion must not leave a core blocked at a gate for the next test.
  for (const gates of openOnExit.splice(0)) openAllGates(gates);
  for (const ptr of allocated.splice(0)) ctx.memFree(ptr);
});

afterAll(async () => {
  await ctx?.destroy();
});

/** A gate buffer and a run counter for `taskCount` gated tasks. */
function gatedBuffers(taskCount: number): { gatesPtr: DevicePtr; ranPtr: DevicePtr; gates: Int32Array; ran: () => number[] } {
  const gatesPtr = ctx.memAlloc(gateBytes(taskCount));
  const ranPtr = ctx.memAlloc(taskCount * 4);
  allocated.push(gatesPtr, ranPtr);
  const gates = ctx.hostView(gatesPtr, 'int32');
  openOnExit.push(gates);
  return { gatesPtr, ranPtr, gates, ran: () => [...ctx.hostView(ranPtr, 'int32')] };
}

function alloc(bytes: number): DevicePtr {
  const ptr = ctx.memAlloc(bytes);
  allocated.push(ptr);
  return ptr;
}

describe('getExecuteStatus', () => {
  it('is Idle with empty progress before the first execute', () => {
    const map = job.buildMap('count_tasks', 4);
    expect(map.getExecuteStatus()).toBe('Idle');
    expect(map.getProgress()).toEqual({ target: 0, issued: 0, done: 0 });
  });

  it('leaves Idle as soon as execute() is called, is Waiting while the kernel runs, and is Idle after synchronize()', async () => {
    const { gatesPtr, ranPtr, gates, ran } = gatedBuffers(2);
    const map = job.buildMap('gated', 2).setBatchSize(1);
    const accepted = map.execute(gatesPtr, ranPtr);
    expect(['HostInit', 'DeviceInit', 'Request']).toContain(map.getExecuteStatus());
    expect(await accepted).toBe(Result.Success);
    await waitForStarted(gates, 2);
    expect(map.getExecuteStatus()).toBe('Waiting');
    openAllGates(gates);
    await map.synchronize();
    expect(map.getExecuteStatus()).toBe('Idle');
    expect(ran()).toEqual([1, 1]);
  });

  it('is HostInit while the Map waits for its stream to finish an earlier launch', async () => {
    const { gatesPtr, ranPtr, gates } = gatedBuffers(1);
    const counts = alloc(4 * 4);
    const first = job.buildMap('gated', 1);
    const second = job.buildMap('count_tasks', 4);
    await first.execute(gatesPtr, ranPtr);
    await waitForStarted(gates, 1);
    expect(await second.execute(counts)).toBe(Result.Success);
    expect(second.getExecuteStatus()).toBe('HostInit');
    expect(second.getProgress()).toEqual({ target: 0, issued: 0, done: 0 });
    expect([...ctx.hostView(counts, 'int32')]).toEqual([0, 0, 0, 0]);
    openAllGates(gates);
    await second.synchronize();
    expect(first.getExecuteStatus()).toBe('Idle');
    expect(second.getExecuteStatus()).toBe('Idle');
    expect([...ctx.hostView(counts, 'int32')]).toEqual([1, 1, 1, 1]);
  });
});

describe('getProgress', () => {
  it('counts target, issued and done batches of the running launch', async () => {
    const { gatesPtr, ranPtr, gates } = gatedBuffers(8);
    const map = job.buildMap('gated', 8).setBatchSize(1);
    await map.execute(gatesPtr, ranPtr);
    await waitForStarted(gates, 2);
    // Tasks 0 and 4 are at their gates: one batch started on each core, none finished.
    expect(map.getProgress()).toEqual({ target: 8, issued: 2, done: 0 });
    openGates(gates, [0]);
    await waitForStarted(gates, 3);
    // Core 0 finished task 0 and holds task 1 at its gate.
    expect(map.getProgress()).toEqual({ target: 8, issued: 3, done: 1 });
    openAllGates(gates);
    await map.synchronize();
    expect(map.getProgress()).toEqual({ target: 8, issued: 8, done: 8 });
  });

  it('keeps the figures of a finished launch while other launches reuse the device', async () => {
    const counts = alloc(4 * 8);
    const map = job.buildMap('count_tasks', 8).setBatchSize(2);
    await map.execute(counts);
    await map.synchronize();
    expect(map.getProgress()).toEqual({ target: 4, issued: 4, done: 4 });
    // More launches than the dispatcher has launch slots and ring entries per core.
    const other = job.buildMap('count_tasks', 2).setBatchSize(1);
    for (let k = 0; k < 70; k++) await other.execute(counts);
    await other.synchronize();
    expect(map.getProgress()).toEqual({ target: 4, issued: 4, done: 4 });
  });
});

describe('cancel', () => {
  it('skips batches not yet issued, drains the ones in flight, and leaves the Map Cancelled', async () => {
    const { gatesPtr, ranPtr, gates, ran } = gatedBuffers(8);
    let completed = 0;
    const map = job.buildMap('gated', 8).setBatchSize(1).setCompletionCallback(() => completed++);
    await map.execute(gatesPtr, ranPtr);
    await waitForStarted(gates, 2);
    const cancelled = map.cancel();
    openAllGates(gates);
    await cancelled;
    expect(map.getExecuteStatus()).toBe('Cancelled');
    expect(ran()).toEqual([1, 0, 0, 0, 1, 0, 0, 0]);
    expect(map.getProgress()).toEqual({ target: 8, issued: 2, done: 2 });
    await map.synchronize();
    expect(completed).toBe(0);
  });

  it('leaves the Map reusable: the next execute runs every task and ends Idle', async () => {
    const { gatesPtr, ranPtr, gates, ran } = gatedBuffers(8);
    let completed = 0;
    const map = job.buildMap('gated', 8).setBatchSize(1).setCompletionCallback(() => completed++);
    await map.execute(gatesPtr, ranPtr);
    await waitForStarted(gates, 2);
    const cancelled = map.cancel();
    openAllGates(gates);
    await cancelled;
    expect(map.getExecuteStatus()).toBe('Cancelled');
    expect(await map.execute(gatesPtr, ranPtr)).toBe(Result.Success);
    await map.synchronize();
    expect(map.getExecuteStatus()).toBe('Idle');
    expect(ran()).toEqual([2, 1, 1, 1, 2, 1, 1, 1]);
    expect(map.getProgress()).toEqual({ target: 8, issued: 8, done: 8 });
    expect(completed).toBe(1);
  });

  it('also skips the executes queued behind the running one', async () => {
    const { gatesPtr, ranPtr, gates, ran } = gatedBuffers(2);
    const map = job.buildMap('gated', 2).setBatchSize(1);
    await map.execute(gatesPtr, ranPtr);
    await map.execute(gatesPtr, ranPtr);
    await map.execute(gatesPtr, ranPtr);
    await waitForStarted(gates, 2);
    const cancelled = map.cancel();
    openAllGates(gates);
    await cancelled;
    expect(map.getExecuteStatus()).toBe('Cancelled');
    expect(ran()).toEqual([1, 1]);
  });

  it('on an idle Map leaves the launches of other Maps alone', async () => {
    const counts = alloc(4);
    const idle = job.buildMap('count_tasks', 1);
    await idle.execute(counts);
    await idle.synchronize();
    // The next launch reuses the launch slot the idle Map's finished launch had.
    const { gatesPtr, ranPtr, gates, ran } = gatedBuffers(4);
    const busy = job.buildMap('gated', 4).setBatchSize(1);
    await busy.execute(gatesPtr, ranPtr);
    await waitForStarted(gates, 2);
    await idle.cancel();
    expect(idle.getExecuteStatus()).toBe('Idle');
    openAllGates(gates);
    await busy.synchronize();
    expect(busy.getExecuteStatus()).toBe('Idle');
    expect(ran()).toEqual([1, 1, 1, 1]);
  });
});

describe('callbacks', () => {
  it('calls the completion callback once per successful execute, in the HostFinalize state', async () => {
    const counts = alloc(4 * 10);
    const states: string[] = [];
    const map = job.buildMap('count_tasks', 10);
    map.setCompletionCallback(() => states.push(map.getExecuteStatus()));
    for (let k = 0; k < 3; k++) await map.execute(counts);
    await map.synchronize();
    expect(states).toEqual(['HostFinalize', 'HostFinalize', 'HostFinalize']);
  });

  it('stays Idle and emits a process warning when the completion callback throws', async () => {
    const counts = alloc(4 * 4);
    // Captured, not printed: the test log stays free of warnings nobody asserted on.
    const emitted = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const map = job.buildMap('count_tasks', 4).setCompletionCallback(() => {
        throw new Error('callback bug');
      });
      await map.execute(counts);
      await map.synchronize();
      expect(map.getExecuteStatus()).toBe('Idle');
      expect(emitted.mock.calls).toEqual([["completion callback of Map 'count_tasks' threw: Error: callback bug"]]);
    } finally {
      emitted.mockRestore();
    }
  });

  it('calls the error callback, not the completion callback, when a kernel throws', async () => {
    const errors: PxlError[] = [];
    let completed = 0;
    const map = job.buildMap('throw_at', 10).setBatchSize(1);
    map.setErrorCallback((e) => errors.push(e)).setCompletionCallback(() => completed++);
    await map.execute(5);
    await expect(map.synchronize()).rejects.toThrow(KernelError);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBe(map.error);
    expect(completed).toBe(0);
  });

  it('stops calling a callback once it is unset', async () => {
    const counts = alloc(4);
    let completed = 0;
    const map = job.buildMap('count_tasks', 1).setCompletionCallback(() => completed++);
    await map.execute(counts);
    await map.synchronize();
    map.setCompletionCallback(undefined);
    await map.execute(counts);
    await map.synchronize();
    expect(completed).toBe(1);
  });
});

describe('the Fail state', () => {
  it('is entered when a kernel throws, and the error names the kernel, the task and the kernel\'s own message and stack', async () => {
    const map = job.buildMap('throw_at', 10).setBatchSize(1);
    await map.execute(5);
    const failure = await map.synchronize().then(() => undefined, (e: unknown) => e);
    expect(map.getExecuteStatus()).toBe('Fail');
    expect(failure).toBeInstanceOf(KernelError);
    const err = failure as KernelError;
    expect(err).toBe(map.error);
    expect(err.message).toBe("kernel 'throw_at' threw at task 5: boom at 5");
    expect(err.code).toBe('PXL_KERNEL_FAILED');
    expect(err.kernel).toBe('throw_at');
    expect(err.taskIdx).toBe(5);
    expect(err.kernelMessage).toBe('boom at 5');
    expect(err.kernelStack).toMatch(/^Error: boom at 5\n\s+at throw_at .*kernels\.ts/);
    expect(err.stack).toContain("KernelError: kernel 'throw_at' threw at task 5: boom at 5\n  -- kernel stack --\nError: boom at 5");
  });

  it('is terminal: execute() rejects with StateError and synchronize() keeps reporting the failure', async () => {
    const map = job.buildMap('throw_at', 4);
    await map.execute(0);
    await expect(map.synchronize()).rejects.toThrow(KernelError);
    await expect(map.execute(99)).rejects.toThrow(
      new StateError("Map 'throw_at' failed (kernel 'throw_at' threw at task 0: boom at 0); a failed Map cannot run again: build a new one with job.buildMap"),
    );
    // The refusal carries the failure itself, with its kernel stack, not only its message.
    await expect(map.execute(99)).rejects.toHaveProperty('cause', map.error);
    await map.cancel();
    expect(map.getExecuteStatus()).toBe('Fail');
    await expect(map.synchronize()).rejects.toBe(map.error);
  });

  it('keeps an unexpected launch error as the cause of the StateError that fails the Map', async () => {
    const fault = new RangeError('the backend could not take the launch');
    const spy = vi.spyOn(CpuBackend.prototype, 'launch').mockImplementationOnce(() => {
      throw fault;
    });
    try {
      const map = job.buildMap('throw_at', 4);
      await map.execute(99);
      const err = (await map.synchronize().then(() => undefined, (e: unknown) => e)) as StateError;
      expect(err).toEqual(new StateError("launch of 'throw_at' failed: RangeError: the backend could not take the launch"));
      expect(err.cause).toBe(fault);
    } finally {
      spy.mockRestore();
    }
  });

  it('skips the executes queued behind the failing one', async () => {
    const log = alloc(4 * 4);
    const counts = alloc(4 * 4);
    const map = job.buildMap('log_launch', 4).setBatchSize(1);
    // Issued together, before the first launch can fail.
    const issued = [0, 1, 2].map((launch) => map.execute(log, counts, launch, 1));
    expect(await Promise.all(issued)).toEqual([Result.Success, Result.Success, Result.Success]);
    const failing = map.synchronize();
    await expect(failing).rejects.toThrow(KernelError);
    await expect(failing).rejects.toThrow("kernel 'log_launch' threw at task 0: launch 1 fails on purpose");
    expect([...ctx.hostView(log, 'int32')].slice(0, 3)).toEqual([2, 0, 1]);
    expect(map.getExecuteStatus()).toBe('Fail');
  });
});

describe('launch slots', () => {
  it('keeps a launch that waits for a free launch slot in Request, and cancel() reaches it', async () => {
    const counts = alloc(4);
    const waiting = job.buildMap('count_tasks', 1).setStream(ctx.createStream());
    await waiting.execute(counts);
    await waiting.synchronize();
    expect(waiting.getProgress()).toEqual({ target: 1, issued: 1, done: 1 });
    // 64 launches (the dispatcher's slot count) on 64 streams: the first holds the device at a
    // gate, so no slot frees until the test opens it.
    const { gatesPtr, ranPtr, gates, ran } = gatedBuffers(1);
    const holders = Array.from({ length: 64 }, () => job.buildMap('gated', 1).setStream(ctx.createStream()));
    for (const map of holders) await map.execute(gatesPtr, ranPtr);
    await waitForStarted(gates, 1);
    expect(await waiting.execute(counts)).toBe(Result.Success);
    expect(waiting.getExecuteStatus()).toBe('Request');
    // The progress is the new launch's, not the finished one's.
    expect(waiting.getProgress()).toEqual({ target: 1, issued: 0, done: 0 });
    const cancelled = waiting.cancel();
    openAllGates(gates);
    await cancelled;
    await Promise.all(holders.map((m) => m.synchronize()));
    expect(waiting.getExecuteStatus()).toBe('Cancelled');
    expect([...ctx.hostView(counts, 'int32')]).toEqual([1]);
    expect(ran()).toEqual([64]);
    expect(await waiting.execute(counts)).toBe(Result.Success);
    await waiting.synchronize();
    expect([...ctx.hostView(counts, 'int32')]).toEqual([2]);
  });
});

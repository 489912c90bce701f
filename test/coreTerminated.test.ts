import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend } from '../src/backends/cpu/cpuBackend.js';
import * as L from '../src/backends/cpu/layout.js';
import { Context } from '../src/pxl/context.js';
import { CoreDiedError, type Job, type KernelMap } from '../src/index.js';
import { gateBytes, openAllGates, openGates, waitForStarted } from './fixtures/gates.js';

/**
 * A core whose worker thread is terminated from outside (as a supervisor or a debugger might) dies
 * like any other core: only the launch it was running fails, the core is replaced, and launches
 * queued behind it run. The test reaches the worker through the CPU backend's test-only internals;
 * interleavings are forced with gates (fixtures/gates.ts), never timing.
 */

const CORES = 2;
let backend: CpuBackend;
let ctx: Context;
let job: Job;

beforeAll(async () => {
  backend = await CpuBackend.create({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: CORES }, memorySize: 1 << 24 });
  ctx = new Context(backend);
  job = ctx.createJob();
  job.load(await ctx.createModule(new URL('./fixtures/kernels.ts', import.meta.url)));
});

afterAll(async () => {
  await ctx?.destroy();
});

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(() => undefined, (e: unknown) => e);
}

/** Runs `count_tasks` over both cores and returns what each task counted. */
async function countOnEveryCore(): Promise<number[]> {
  const counts = ctx.memAlloc(4 * CORES);
  try {
    const map = job.buildMap('count_tasks', CORES).setBatchSize(1);
    await map.execute(counts);
    await map.synchronize();
    return [...ctx.hostView(counts, 'int32')];
  } finally {
    ctx.memFree(counts);
  }
}

describe('a core whose worker thread is terminated from outside', () => {
  it('fails only the launch it was running, naming the Map, kernel, task and exit code; a Map queued behind it runs on the replacement', async () => {
    const gatesPtr = ctx.memAlloc(gateBytes(CORES));
    const ran = ctx.memAlloc(4 * CORES);
    const counts = ctx.memAlloc(4 * CORES);
    try {
      const gates = ctx.hostView(gatesPtr, 'int32');
      // Batches of one task: task 0 runs on core 0, task 1 on core 1.
      const victim = job.buildMap('gated', CORES).setBatchSize(1).setStream(ctx.createStream());
      const bystander = job.buildMap('count_tasks', CORES).setBatchSize(1).setStream(ctx.createStream());
      await victim.execute(gatesPtr, ran);
      await waitForStarted(gates, CORES);
      // Queued on both rings, behind the victim's held tasks.
      await bystander.execute(counts);
      const { worker } = backend.coreInternals(1);
      expect(await worker.terminate()).toBe(1);
      openAllGates(gates);
      const failure = await failureOf(victim.synchronize());
      expect(failure).toBeInstanceOf(CoreDiedError);
      expect((failure as Error).message).toBe(
        `MU core 1 died while running kernel 'gated' (Map ${victim.id}, task 1): its worker thread exited with code 1; the core was replaced and the next execute can run`,
      );
      const err = failure as CoreDiedError;
      expect([err.core, err.kernel, err.mapId, err.tasks, err.replaced]).toEqual([1, 'gated', victim.id, [1, 1], true]);
      expect(victim.getExecuteStatus()).toBe('Fail');
      // Task 0 ran on the living core; task 1 was stopped at its gate.
      expect([...ctx.hostView(ran, 'int32')]).toEqual([1, 0]);
      await bystander.synchronize();
      expect(bystander.getExecuteStatus()).toBe('Idle');
      expect([...ctx.hostView(counts, 'int32')]).toEqual([1, 1]);
      expect(backend.coreInternals(1).worker).not.toBe(worker);
      expect(await countOnEveryCore()).toEqual([1, 1]);
    } finally {
      ctx.memFree(gatesPtr);
      ctx.memFree(ran);
      ctx.memFree(counts);
    }
  });
});

/**
 * A core finishes an entry in steps (worker.ts, layout.ts): it stores TAIL, clears its bit in the
 * launch's core mask, clears its mask word's bit in REMAINING (waking the host when that empties
 * it), then clears CURRENT. A termination can land between any two. Each case below holds core 1
 * in a kernel, writes the words as the core would have left them at that point, and terminates it:
 * the host must count the core off exactly once, so the launch completes (its core had finished
 * its part, as far as the words say) and neither hangs nor fails, and the device runs on.
 */
describe('a core terminated while it finishes an entry', () => {
  type Step = 'tail stored' | 'mask bit cleared' | 'REMAINING emptied, host not woken';
  const steps: Step[] = ['tail stored', 'mask bit cleared', 'REMAINING emptied, host not woken'];

  it.each(steps)('completes the launch, counted off once, when the core died after: %s', async (step) => {
    const gatesPtr = ctx.memAlloc(gateBytes(CORES));
    const holdPtr = ctx.memAlloc(gateBytes(1));
    const ran = ctx.memAlloc(4 * CORES);
    const holdRan = ctx.memAlloc(4);
    let hold: KernelMap | undefined;
    try {
      const gates = ctx.hostView(gatesPtr, 'int32');
      const holdGates = ctx.hostView(holdPtr, 'int32');
      const launch = job.buildMap('gated', CORES).setBatchSize(1).setStream(ctx.createStream());
      await launch.execute(gatesPtr, ran);
      await waitForStarted(gates, CORES);
      // Core 0 finishes its part; once it has started the next entry on its ring (a one-task launch
      // of another Map, held at its own gate), it has counted itself off the first launch.
      openGates(gates, [0]);
      hold = job.buildMap('gated', 1).setStream(ctx.createStream());
      await hold.execute(holdPtr, holdRan);
      await waitForStarted(holdGates, 1);

      const { worker, ctl } = backend.coreInternals(1);
      const cb = L.coreBase(1);
      const pos = Atomics.load(ctl, cb + L.C_CURRENT);
      expect(Atomics.load(ctl, cb + L.C_TAIL)).toBe(pos);
      const slot = ctl[L.entryIndex(CORES, 1, pos) + L.E_SLOT]!;
      const mask = L.maskBase(CORES, slot);
      const remaining = L.slotBase(CORES, slot) + L.S_REMAINING;
      // Only core 1 is left: its bit in mask word 0, and word 0's bit in REMAINING.
      expect([Atomics.load(ctl, mask), Atomics.load(ctl, remaining)]).toEqual([0b10, 0b1]);
      Atomics.store(ctl, cb + L.C_TAIL, pos + 1);
      if (step !== 'tail stored') Atomics.store(ctl, mask, 0);
      if (step === 'REMAINING emptied, host not woken') Atomics.store(ctl, remaining, 0);
      await worker.terminate();

      await launch.synchronize();
      expect(launch.getExecuteStatus()).toBe('Idle');
      openAllGates(gates);
      openAllGates(holdGates);
      await hold.synchronize();
      expect(hold.getExecuteStatus()).toBe('Idle');
      expect([...ctx.hostView(holdRan, 'int32')]).toEqual([1]);
      expect(await countOnEveryCore()).toEqual([1, 1]);
    } finally {
      ctx.memFree(gatesPtr);
      ctx.memFree(holdPtr);
      ctx.memFree(ran);
      ctx.memFree(holdRan);
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { batchTasks } from '../src/pxl/launchPlan.js';
import { createContext, planLaunch, type Context, type Job, type KernelModule, type LaunchShape, type LocalityMode, type Topology } from '../src/index.js';

/**
 * Which MU core runs which task, checked through the real runtime. Kernels record the
 * `threadId` of the worker thread that ran each task; a first launch with one batch per core maps
 * every core to its thread, after which each launch must put every task on the thread of the core
 * planLaunch assigned it.
 */

const kernels = new URL('./fixtures/kernels.ts', import.meta.url);

interface Device {
  readonly ctx: Context;
  readonly module: KernelModule;
  /** threadId of each MU core, by global core index. */
  readonly threadOf: readonly number[];
}

const topologies: Topology[] = [
  { subs: 2, clustersPerSub: 2, coresPerCluster: 2 },
  { subs: 1, clustersPerSub: 1, coresPerCluster: 1 },
  { subs: 1, clustersPerSub: 2, coresPerCluster: 1 },
  { subs: 2, clustersPerSub: 1, coresPerCluster: 2 },
];
const devices: Device[] = [];

beforeAll(async () => {
  for (const topology of topologies) {
    const ctx = await createContext({ topology });
    const module = await ctx.createModule(kernels);
    devices.push({ ctx, module, threadOf: await mapCoresToThreads(ctx, module) });
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(devices.map((d) => d.ctx.destroy()));
});

interface Recorded {
  /** Runs of each task. */
  readonly counts: number[];
  /** threadId that ran each task. */
  readonly threads: number[];
}

/** Runs mark_thread over `taskCount` tasks on `job` and returns what it recorded. */
async function runMarked(ctx: Context, job: Job, taskCount: number, batchSize: number, locality: LocalityMode): Promise<Recorded> {
  const bytes = Math.max(taskCount, 1) * 4;
  const counts = ctx.memAlloc(bytes);
  const threads = ctx.memAlloc(bytes);
  try {
    const map = job.buildMap('mark_thread', taskCount).setBatchSize(batchSize).setLocalityMode(locality);
    await map.execute(counts, threads);
    await map.synchronize();
    return { counts: [...ctx.hostView(counts, 'int32')].slice(0, taskCount), threads: [...ctx.hostView(threads, 'int32')].slice(0, taskCount) };
  } finally {
    ctx.memFree(counts);
    ctx.memFree(threads);
  }
}

async function mapCoresToThreads(ctx: Context, module: KernelModule): Promise<number[]> {
  const job = ctx.createJob();
  job.load(module);
  const cores = job.coreCount;
  const subs = job.subs;
  const { threads } = await runMarked(ctx, job, cores, 1, 'compact');
  ctx.destroyJob(job);
  const plan = planLaunch({ taskCount: cores, batchSize: 1, locality: 'compact', topology: ctx.topology, subs });
  const threadOf: number[] = [];
  for (const c of plan.cores) threadOf[c.core] = threads[c.firstBatch]!;
  expect(new Set(threadOf).size).toBe(cores);
  return threadOf;
}

/** The thread each task must run on according to planLaunch. */
function plannedThreads(device: Device, shape: LaunchShape): number[] {
  const out = new Array<number>(shape.taskCount).fill(-1);
  for (const c of planLaunch(shape).cores) {
    for (let k = 0; k < c.batchCount; k++) {
      const [start, end] = batchTasks(c.firstBatch + k * c.batchStride, shape.batchSize, shape.taskCount);
      for (let t = start; t < end; t++) out[t] = device.threadOf[c.core]!;
    }
  }
  return out;
}

/** A Job owning exactly `subs`, acquired in that order. Every Sub of the Context must be free. */
function jobWithSubs(device: Device, subs: readonly number[]): Job {
  const { ctx } = device;
  const holders = Array.from({ length: ctx.topology.subs }, () => ctx.createJob(1));
  let job: Job | undefined;
  for (const sub of subs) {
    ctx.destroyJob(holders[sub]!);
    if (job === undefined) job = ctx.createJob(1);
    else job.subAlloc(1);
  }
  holders.forEach((h, sub) => {
    if (!subs.includes(sub)) ctx.destroyJob(h);
  });
  job!.load(device.module);
  expect(job!.subs).toEqual(subs);
  return job!;
}

describe('distribution over the MU cores', () => {
  it.each([1, 3, 16, 100, 1000, 5000].flatMap((b) => [[b, 'compact'], [b, 'spread']] as [number, LocalityMode][]))(
    'runs each of 2000 tasks exactly once, on its planned core, with batchSize %i in %s mode',
    async (batchSize, locality) => {
      const device = devices[0]!;
      const job = jobWithSubs(device, [0, 1]);
      const { counts, threads } = await runMarked(device.ctx, job, 2000, batchSize, locality);
      device.ctx.destroyJob(job);
      expect(counts).toEqual(new Array(2000).fill(1));
      expect(threads).toEqual(plannedThreads(device, { taskCount: 2000, batchSize, locality, topology: device.ctx.topology, subs: [0, 1] }));
    },
  );

  it('runs the tasks of one batch on one core and activates as many cores as the plan', async () => {
    const device = devices[0]!;
    const job = jobWithSubs(device, [0, 1]);
    // 100 tasks in batches of 16: 7 batches, so 7 of the Job's 8 cores take part.
    const { threads } = await runMarked(device.ctx, job, 100, 16, 'compact');
    device.ctx.destroyJob(job);
    for (let b = 0; b < 7; b++) {
      const [start, end] = batchTasks(b, 16, 100);
      expect(new Set(threads.slice(start, end)).size).toBe(1);
    }
    expect(new Set(threads).size).toBe(7);
    expect(planLaunch({ taskCount: 100, batchSize: 16, locality: 'compact', topology: device.ctx.topology, subs: [0, 1] }).cores).toHaveLength(7);
  });

  it.each<[LocalityMode, Record<string, number[]>]>([
    ['compact', { 'SUB0 / CL0': [0, 1], 'SUB0 / CL1': [2, 3], 'SUB1 / CL0': [4, 5], 'SUB1 / CL1': [6, 7] }],
    ['spread', { 'SUB0 / CL0': [0, 4], 'SUB0 / CL1': [2, 6], 'SUB1 / CL0': [1, 5], 'SUB1 / CL1': [3, 7] }],
  ])('places tasks on Clusters as the PXL %s table does, on a 2 × 2 × 2 device', async (locality, table) => {
    const device = devices[0]!;
    const job = jobWithSubs(device, [0, 1]);
    const { threads } = await runMarked(device.ctx, job, 8, 1, locality);
    device.ctx.destroyJob(job);
    const clusterOfThread = new Map(device.threadOf.map((thread, core) => [thread, Math.floor(core / 2)]));
    const byCluster: Record<string, number[]> = { 'SUB0 / CL0': [], 'SUB0 / CL1': [], 'SUB1 / CL0': [], 'SUB1 / CL1': [] };
    threads.forEach((thread, task) => {
      const cluster = clusterOfThread.get(thread)!;
      byCluster[`SUB${Math.floor(cluster / 2)} / CL${cluster % 2}`]!.push(task);
    });
    expect(byCluster).toEqual(table);
  });

  it.each<[string, number[]]>([
    ['Sub 1 only', [1]],
    ['Subs 1 then 0', [1, 0]],
  ])('keeps a Job owning %s on its own cores, in its Sub order', async (_, subs) => {
    const device = devices[0]!;
    const job = jobWithSubs(device, subs);
    const { counts, threads } = await runMarked(device.ctx, job, 40, 3, 'compact');
    device.ctx.destroyJob(job);
    expect(counts).toEqual(new Array(40).fill(1));
    expect(threads).toEqual(plannedThreads(device, { taskCount: 40, batchSize: 3, locality: 'compact', topology: device.ctx.topology, subs }));
    const own = new Set(subs.flatMap((s) => device.threadOf.slice(4 * s, 4 * s + 4)));
    expect(threads.every((t) => own.has(t))).toBe(true);
  });

  it('runs every task exactly once, on its planned core, for any topology, Subs, taskCount, batchSize and locality', async () => {
    const arb = fc.integer({ min: 0, max: devices.length - 1 }).chain((d) =>
      fc.record({
        device: fc.constant(d),
        subs: fc.shuffledSubarray([...Array(devices[d]!.ctx.topology.subs).keys()], { minLength: 1 }),
        taskCount: fc.integer({ min: 1, max: 3000 }),
        batchSize: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 4000 })),
        locality: fc.constantFrom<LocalityMode>('compact', 'spread'),
      }),
    );
    await fc.assert(
      fc.asyncProperty(arb, async ({ device: d, subs, taskCount, batchSize, locality }) => {
        const device = devices[d]!;
        const job = jobWithSubs(device, subs);
        try {
          const { counts, threads } = await runMarked(device.ctx, job, taskCount, batchSize, locality);
          const shape = { taskCount, batchSize, locality, topology: device.ctx.topology, subs };
          expect(counts).toEqual(new Array(taskCount).fill(1));
          expect(threads).toEqual(plannedThreads(device, shape));
          expect(new Set(threads).size).toBe(planLaunch(shape).cores.length);
        } finally {
          device.ctx.destroyJob(job);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('pipelining', () => {
  it('runs several executes of one Map in order, all of them, before one synchronize() resolves', async () => {
    const device = devices[0]!;
    const { ctx } = device;
    const job = jobWithSubs(device, [0, 1]);
    const log = ctx.memAlloc(4 * 11);
    const counts = ctx.memAlloc(4 * 64);
    const map = job.buildMap('log_launch', 64).setBatchSize(2);
    for (let launch = 0; launch < 10; launch++) await map.execute(log, counts, launch, -1);
    await map.synchronize();
    expect([...ctx.hostView(log, 'int32')]).toEqual([10, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect([...ctx.hostView(counts, 'int32')]).toEqual(new Array(64).fill(10));
    expect(map.getExecuteStatus()).toBe('Idle');
    ctx.destroyJob(job);
    ctx.memFree(log);
    ctx.memFree(counts);
  });

  it('runs executes of different Maps on one Job in the order they were issued', async () => {
    const device = devices[0]!;
    const { ctx } = device;
    const job = jobWithSubs(device, [0, 1]);
    const log = ctx.memAlloc(4 * 7);
    const counts = ctx.memAlloc(4 * 32);
    const maps = [job.buildMap('log_launch', 32), job.buildMap('log_launch', 32).setBatchSize(1).setLocalityMode('spread')];
    const issued = [0, 1, 2, 3, 4, 5].map((launch) => maps[launch % 2]!.execute(log, counts, launch, -1));
    await Promise.all(issued);
    await Promise.all(maps.map((m) => m.synchronize()));
    expect([...ctx.hostView(log, 'int32')]).toEqual([6, 0, 1, 2, 3, 4, 5]);
    expect([...ctx.hostView(counts, 'int32')]).toEqual(new Array(32).fill(6));
    ctx.destroyJob(job);
    ctx.memFree(log);
    ctx.memFree(counts);
  });

  it('binds the memory of each execute when a Map cycles through more argument sets than cores keep bindings for', async () => {
    const device = devices[0]!;
    const { ctx } = device;
    const job = jobWithSubs(device, [0, 1]);
    const map = job.buildMap('count_tasks', 16).setBatchSize(4);
    // 40 distinct pointers, each used three times, in an order that revisits recent and old ones.
    const ptrs = Array.from({ length: 40 }, () => ctx.memAlloc(16 * 4));
    const order = [...ptrs.keys(), ...ptrs.keys(), ...[...ptrs.keys()].reverse()].map((i) => (i * 7) % 40);
    for (const i of order) await map.execute(ptrs[i]!);
    await map.synchronize();
    for (const p of ptrs) expect([...ctx.hostView(p, 'int32')]).toEqual(new Array(16).fill(3));
    ctx.destroyJob(job);
    for (const p of ptrs) ctx.memFree(p);
  });
});

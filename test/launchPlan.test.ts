import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { OptionError } from '../src/core/errors.js';
import type { Topology } from '../src/core/topology.js';
import {
  DefaultBatchSize,
  LocalityMode,
  MaxTaskCount,
  batchTasks,
  planLaunch,
  type LaunchPlan,
  type LaunchShape,
} from '../src/pxl/launchPlan.js';

/** Tasks each core runs, in the order it runs them. */
function tasksByCore(plan: LaunchPlan, batchSize: number, taskCount: number): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const c of plan.cores) {
    const tasks: number[] = [];
    for (let k = 0; k < c.batchCount; k++) {
      const [start, end] = batchTasks(c.firstBatch + k * c.batchStride, batchSize, taskCount);
      for (let t = start; t < end; t++) tasks.push(t);
    }
    out.set(c.core, tasks);
  }
  return out;
}

/** Sorted task set of every Cluster of the Job, keyed "SUBs / CLc". */
function tasksByCluster(shape: LaunchShape): Record<string, number[]> {
  const { topology: t } = shape;
  const out: Record<string, number[]> = {};
  for (const sub of shape.subs) for (let cl = 0; cl < t.clustersPerSub; cl++) out[`SUB${sub} / CL${cl}`] = [];
  const plan = planLaunch(shape);
  for (const [core, tasks] of tasksByCore(plan, shape.batchSize, shape.taskCount)) {
    const cluster = Math.floor(core / t.coresPerCluster);
    const key = `SUB${Math.floor(cluster / t.clustersPerSub)} / CL${cluster % t.clustersPerSub}`;
    out[key]!.push(...tasks);
  }
  for (const key of Object.keys(out)) out[key]!.sort((a, b) => a - b);
  return out;
}

const device: Topology = { subs: 4, clustersPerSub: 4, coresPerCluster: 32 };

describe('planLaunch', () => {
  it('exposes the PXL constants and spellings', () => {
    expect(MaxTaskCount).toBe(1048575);
    expect(DefaultBatchSize).toBe(16);
    expect(LocalityMode.CompactMode).toBe('compact');
    expect(LocalityMode.SpreadMode).toBe('spread');
  });

  it.each([
    [1024, 16, 64, 64],
    [1024, 1, 1024, 512],
    [100, 1, 100, 100],
    [8192, 8, 1024, 512],
  ])('sizes taskCount %i with batchSize %i as the seed table says (%i batches, %i active cores)', (taskCount, batchSize, batches, active) => {
    for (const locality of ['compact', 'spread'] as const) {
      const plan = planLaunch({ taskCount, batchSize, locality, topology: device, subs: [0, 1, 2, 3] });
      expect(plan.batchCount).toBe(batches);
      expect(plan.cores.length).toBe(active);
      const invocations = [...tasksByCore(plan, batchSize, taskCount).values()].reduce((n, ts) => n + ts.length, 0);
      expect(invocations).toBe(taskCount);
    }
  });

  describe.each([1, 4])('reproduces the seed locality tables with %i cores per Cluster', (coresPerCluster) => {
    const shape = (subs: number[], locality: LocalityMode): LaunchShape => ({
      taskCount: 16, batchSize: 1, locality, topology: { subs: 2, clustersPerSub: 4, coresPerCluster }, subs,
    });

    it('gives numSub = 1 Spread and Compact their table rows', () => {
      expect(tasksByCluster(shape([0], 'spread'))).toEqual({
        'SUB0 / CL0': [0, 4, 8, 12], 'SUB0 / CL1': [1, 5, 9, 13], 'SUB0 / CL2': [2, 6, 10, 14], 'SUB0 / CL3': [3, 7, 11, 15],
      });
      expect(tasksByCluster(shape([0], 'compact'))).toEqual({
        'SUB0 / CL0': [0, 1, 2, 3], 'SUB0 / CL1': [4, 5, 6, 7], 'SUB0 / CL2': [8, 9, 10, 11], 'SUB0 / CL3': [12, 13, 14, 15],
      });
    });

    it('gives numSub = 2 Spread and Compact their table rows', () => {
      expect(tasksByCluster(shape([0, 1], 'spread'))).toEqual({
        'SUB0 / CL0': [0, 8], 'SUB0 / CL1': [2, 10], 'SUB0 / CL2': [4, 12], 'SUB0 / CL3': [6, 14],
        'SUB1 / CL0': [1, 9], 'SUB1 / CL1': [3, 11], 'SUB1 / CL2': [5, 13], 'SUB1 / CL3': [7, 15],
      });
      expect(tasksByCluster(shape([0, 1], 'compact'))).toEqual({
        'SUB0 / CL0': [0, 1], 'SUB0 / CL1': [2, 3], 'SUB0 / CL2': [4, 5], 'SUB0 / CL3': [6, 7],
        'SUB1 / CL0': [8, 9], 'SUB1 / CL1': [10, 11], 'SUB1 / CL2': [12, 13], 'SUB1 / CL3': [14, 15],
      });
    });
  });

  it('orders Clusters by the Job order of its Subs, yet lists cores by core index', () => {
    const topology = { subs: 3, clustersPerSub: 1, coresPerCluster: 1 };
    const plan = planLaunch({ taskCount: 2, batchSize: 1, locality: 'compact', topology, subs: [2, 0] });
    expect(plan.cores).toEqual([
      { core: 0, firstBatch: 1, batchStride: 1, batchCount: 1 },
      { core: 2, firstBatch: 0, batchStride: 1, batchCount: 1 },
    ]);
  });

  it('returns an empty plan for taskCount 0', () => {
    expect(planLaunch({ taskCount: 0, batchSize: 16, locality: 'spread', topology: device, subs: [1] })).toEqual({ batchCount: 0, cores: [] });
  });

  it('runs every task exactly once on the Job\'s cores, with min(batchCount, job cores) active', () => {
    const arb = fc
      .record({
        subs: fc.integer({ min: 1, max: 4 }),
        clustersPerSub: fc.integer({ min: 1, max: 4 }),
        coresPerCluster: fc.integer({ min: 1, max: 8 }),
      })
      .chain((topology) => fc.record({
        topology: fc.constant(topology),
        subs: fc.shuffledSubarray([...Array(topology.subs).keys()], { minLength: 1 }),
        taskCount: fc.oneof({ arbitrary: fc.integer({ min: 0, max: 5000 }), weight: 9 }, { arbitrary: fc.integer({ min: 0, max: MaxTaskCount }), weight: 1 }),
        batchSize: fc.integer({ min: 1, max: 300 }),
        locality: fc.constantFrom<LocalityMode>('compact', 'spread'),
      }));
    fc.assert(fc.property(arb, (shape) => {
      const { topology: t, taskCount, batchSize } = shape;
      const plan = planLaunch(shape);
      const jobCores = shape.subs.length * t.clustersPerSub * t.coresPerCluster;
      expect(plan.batchCount).toBe(Math.ceil(taskCount / batchSize));
      expect(plan.cores.length).toBe(Math.min(plan.batchCount, jobCores));
      const runs = new Uint8Array(taskCount);
      let previous = -1;
      for (const [core, tasks] of tasksByCore(plan, batchSize, taskCount)) {
        expect(core).toBeGreaterThan(previous);
        previous = core;
        expect(shape.subs).toContain(Math.floor(core / (t.clustersPerSub * t.coresPerCluster)));
        expect(tasks.length).toBeGreaterThan(0);
        for (const task of tasks) runs[task]!++;
      }
      expect(runs.every((n) => n === 1)).toBe(true);
    }), { numRuns: 300 });
  });
});

describe('batchTasks', () => {
  it('gives each batch batchSize tasks and the last batch the remainder', () => {
    expect(batchTasks(0, 16, 100)).toEqual([0, 16]);
    expect(batchTasks(5, 16, 100)).toEqual([80, 96]);
    expect(batchTasks(6, 16, 100)).toEqual([96, 100]);
  });
});

describe('planLaunch validation', () => {
  const ok: LaunchShape = { taskCount: 16, batchSize: 1, locality: 'compact', topology: device, subs: [0] };
  const reject = (patch: Record<string, unknown>) => () => planLaunch({ ...ok, ...patch } as LaunchShape);

  it.each<[string, Record<string, unknown>, string]>([
    ['taskCount above MaxTaskCount', { taskCount: 1048576 }, 'taskCount must be an integer in [0, 1048575], got 1048576'],
    ['a negative taskCount', { taskCount: -1 }, 'taskCount must be an integer in [0, 1048575], got -1'],
    ['a fractional taskCount', { taskCount: 1.5 }, 'taskCount must be an integer in [0, 1048575], got 1.5'],
    ['batchSize 0', { batchSize: 0 }, 'batchSize must be an integer in [1, 1048575], got 0'],
    ['batchSize above MaxTaskCount', { batchSize: 1048576 }, 'batchSize must be an integer in [1, 1048575], got 1048576'],
    ['an unknown locality', { locality: 'dense' }, "locality must be one of 'compact', 'spread', got 'dense'"],
    ['an empty subs list', { subs: [] }, 'subs must list at least one Sub id, got an array of length 0'],
    ['subs that is not an array', { subs: 3 }, 'subs must list at least one Sub id, got 3'],
    ['a Sub id the device lacks', { subs: [0, 4] }, 'subs[1] must be an integer in [0, 3], got 4'],
    ['a non-integer Sub id', { subs: [0.5] }, 'subs[0] must be an integer in [0, 3], got 0.5'],
    ['a repeated Sub id', { subs: [2, 0, 2] }, 'subs must be distinct, got Sub 2 more than once'],
  ])('rejects %s with a message naming the option', (_, patch, message) => {
    expect(reject(patch)).toThrow(OptionError);
    expect(reject(patch)).toThrow(message);
  });
});

import { describe, expect, it } from 'vitest';
import { box } from '../src/core/box.js';
import { OptionError, type PxlError } from '../src/core/errors.js';
import { range } from '../src/core/range.js';
import { regionOf } from '../src/core/region.js';
import type { NDArray } from '../src/pxl/ndarray.js';
import { accessOf, type Access } from '../src/graph/accessMode.js';
import { GraphBuffer, type BufferId } from '../src/graph/buffer.js';
import { Executor } from '../src/graph/executor.js';
import { fixed, oneToOne } from '../src/graph/mappers.js';
import type { AnyRangeMapper } from '../src/graph/rangeMapper.js';
import { split } from '../src/graph/split.js';
import { formatDependency, type TaskRecord } from '../src/graph/task.js';
import { TaskGraph } from '../src/graph/taskGraph.js';

const owner = {};
let nextBuffer = 0;
function buffer(shape: number[]): GraphBuffer {
  return new GraphBuffer(owner, nextBuffer++ as BufferId, undefined, range(shape), { dtype: 'float32' } as unknown as NDArray<'float32'>);
}

const read = accessOf('read');
const discard = accessOf('write', { noInit: true });
const readWrite = accessOf('read_write');
const part = (lo: number, hi: number): AnyRangeMapper => fixed(box([lo], [hi]));
const deps = (t: TaskRecord): string[] => t.dependencies.map(formatDependency);

function kernel(g: TaskGraph, name: string, accesses: [GraphBuffer, AnyRangeMapper, Access][], kernelRange: number[] = [1], chunks = 1): TaskRecord {
  return g.add({
    kind: 'kernel',
    name,
    range: range(kernelRange),
    chunks: split(range(kernelRange), chunks),
    accesses: accesses.map(([b, mapper, access]) => ({ buffer: b, access, mapper })),
  });
}

/**
 * `tasks` tasks: each reads a window of `a` (never written after the init, so its readers-since lists
 * only grow) and read-writes one element of `b` after the previous task on it.
 */
function longRun(g: TaskGraph, tasks: number, onTask: (t: TaskRecord) => void = () => undefined): number {
  const a = buffer([64]);
  const b = buffer([64]);
  kernel(g, 'init', [[a, oneToOne(), discard], [b, oneToOne(), discard]], [64], 4);
  let maxSize = 0;
  for (let i = 0; i < tasks; i++) {
    const lo = i % 60;
    onTask(kernel(g, 'step', [[a, part(lo, lo + 4), read], [b, part(i % 64, (i % 64) + 1), readWrite]]));
    const h = g.horizonIfDue();
    if (h !== undefined) onTask(h);
    maxSize = Math.max(maxSize, g.trackingSize);
  }
  return maxSize;
}

describe('horizons', () => {
  it('keep the tracking maps bounded over a long run', () => {
    const bounded = longRun(new TaskGraph({ uninitializedReads: 'throw' }), 3_000);
    // The readers of `a` of at most two horizon periods (an execution front of up to 64 tasks each).
    expect(bounded).toBeLessThanOrEqual(1_200);
    const unbounded = longRun(new TaskGraph({ uninitializedReads: 'throw', horizonStep: 2 ** 30, horizonMaxParallelism: 2 ** 30 }), 1_000);
    expect(unbounded).toBeGreaterThan(1_500);
  });

  it('make a horizon once the critical path grew by horizonStep, depending only on the execution front', () => {
    const g = new TaskGraph({ horizonStep: 2, uninitializedReads: 'throw' });
    const b = buffer([16]);
    kernel(g, 'left', [[b, part(0, 8), discard]]); // T1
    kernel(g, 'right', [[b, part(8, 16), discard]]); // T2: still a critical path of 1
    expect(g.horizonIfDue()).toBeUndefined();
    expect(g.executionFront).toEqual([1, 2]);
    kernel(g, 'both', [[b, part(6, 10), read]]); // T3: path 2, and it covers T1 and T2
    expect(g.executionFront).toEqual([3]);
    const h = g.horizonIfDue()!; // T4
    expect(h.kind).toBe('horizon');
    expect(h.id).toBe(4);
    expect(deps(h)).toEqual(['order T3']);
    expect(h.standsFor.map(formatDependency)).toEqual([`true T1 B${b.id} {[(0),(8))}`, `true T2 B${b.id} {[(8),(16))}`]);
    expect(g.executionFront).toEqual([4]);
    expect(g.horizonIfDue()).toBeUndefined();
    expect(g.lastHorizon).toBe(4);
  });

  it('make a horizon once the execution front grows past horizonMaxParallelism', () => {
    const g = new TaskGraph({ horizonStep: 100, horizonMaxParallelism: 3, uninitializedReads: 'throw' });
    const b = buffer([16]);
    for (let i = 0; i < 3; i++) {
      kernel(g, 'w', [[b, part(i, i + 1), discard]]);
      expect(g.horizonIfDue()).toBeUndefined();
    }
    kernel(g, 'w', [[b, part(3, 4), discard]]); // T4: four independent tasks in the front
    expect(deps(g.horizonIfDue()!)).toEqual(['order T1', 'order T2', 'order T3', 'order T4']);
  });

  it('apply the previous horizon when making the next, so later tasks wait only for what they touch', () => {
    const g = new TaskGraph({ horizonStep: 2, uninitializedReads: 'throw' });
    const b = buffer([16]);
    kernel(g, 'left', [[b, part(0, 8), discard]]); // T1
    kernel(g, 'right', [[b, part(8, 16), discard]]); // T2
    kernel(g, 'both', [[b, part(6, 10), read]]); // T3
    expect(g.horizonIfDue()!.id).toBe(4); // not applied yet: T1 and T2 stay the last writers
    const t5 = kernel(g, 'read', [[b, part(0, 4), read]]);
    expect(deps(t5)).toEqual([`true T1 B${b.id} {[(0),(4))}`]);
    // A write after reads depends on the readers only, not also on the writer they read.
    const t6 = kernel(g, 'over', [[b, part(4, 12), discard]]);
    expect(deps(t6)).toEqual([`anti T3 B${b.id} {[(6),(10))}`]);
    const t7 = kernel(g, 'all', [[b, part(0, 16), read]]);
    expect(deps(t7)).toEqual([`true T1 B${b.id} {[(0),(4))}`, `true T2 B${b.id} {[(12),(16))}`, `true T6 B${b.id} {[(4),(12))}`]);
    const h8 = g.horizonIfDue()!; // T8: applies T4 to T1, T2 and T3
    expect(deps(h8)).toEqual(['order T4', 'order T5', 'order T7']);
    const t9 = kernel(g, 'old', [[b, part(0, 2), read]]);
    expect(deps(t9)).toEqual([`true T4 B${b.id} {[(0),(2))}`]);
    const t10 = kernel(g, 'w', [[b, part(0, 16), discard]]);
    expect(deps(t10)).toEqual([`anti T5 B${b.id} {[(0),(4))}`, `anti T7 B${b.id} {[(0),(16))}`, `anti T9 B${b.id} {[(0),(2))}`]);
  });

  it('let a write after an applied horizon that stands for the readers wait for the horizon once', () => {
    const g = new TaskGraph({ horizonStep: 100, horizonMaxParallelism: 1, uninitializedReads: 'throw' });
    const b = buffer([4]);
    kernel(g, 'w', [[b, part(0, 4), discard]]); // T1
    kernel(g, 'r', [[b, part(0, 4), read]]); // T2
    kernel(g, 'r', [[b, part(0, 4), read]]); // T3: the front is T2, T3
    expect(g.horizonIfDue()!.id).toBe(4);
    kernel(g, 'x', [[buffer([1]), part(0, 1), discard]]); // T5: the front is T4, T5
    expect(g.horizonIfDue()!.id).toBe(6); // applies T4: last writer and only reader of b
    expect(deps(kernel(g, 'w', [[b, part(0, 4), discard]]))).toEqual([`output T4 B${b.id} {[(0),(4))}`]);
  });

  it('refuse a bad horizonStep or horizonMaxParallelism, and unknown options', () => {
    expect(() => new TaskGraph({ horizonStep: 0 })).toThrow(/horizonStep must be an integer/);
    expect(() => new TaskGraph({ horizonMaxParallelism: 0 })).toThrow(new OptionError('horizonMaxParallelism must be an integer in [1, 1073741824], got 0'));
    expect(() => new TaskGraph({ horizonSteps: 2 } as never)).toThrow(
      new OptionError("TaskGraph options has no option 'horizonSteps'; did you mean 'horizonStep'? Valid options: 'spaceFor', 'uninitializedReads', 'onWarning', 'horizonStep', 'horizonMaxParallelism'"),
    );
  });
});

/** Graph and executor together, with runs the test settles by hand. */
function harness(horizonStep: number, horizonMaxParallelism = 64) {
  const g = new TaskGraph({ horizonStep, horizonMaxParallelism, uninitializedReads: 'ignore' });
  const ex = new Executor(16);
  const finish = new Map<number, { resolve: () => void; reject: (e: unknown) => void }>();
  const settled = new Map<number, PxlError | undefined>();
  const start = (t: TaskRecord): void =>
    ex.add(
      t,
      () =>
        t.kind === 'horizon'
          ? Promise.resolve()
          : new Promise<void>((resolve, reject) => finish.set(t.id, { resolve, reject })),
      (error) => settled.set(t.id, error),
    );
  const submit = (name: string, accesses: [GraphBuffer, AnyRangeMapper, Access][]): TaskRecord => {
    const t = kernel(g, name, accesses);
    start(t);
    const h = g.horizonIfDue();
    if (h !== undefined) start(h);
    return t;
  };
  return { g, ex, finish, settled, submit };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('horizons in the executor', () => {
  for (const when of ['before', 'after'] as const) {
    it(`fail exactly the readers of what a failed task wrote, through a horizon (failure ${when} the horizon is added)`, async () => {
      const h = harness(100, 1);
      const b = buffer([16]);
      const t1 = h.submit('bad', [[b, part(0, 8), discard]]);
      if (when === 'before') {
        h.finish.get(t1.id)!.reject(new Error('boom'));
        await tick();
      }
      const t2 = h.submit('good', [[b, part(8, 16), discard]]); // T2, then horizon T3
      const t4 = h.submit('other', [[buffer([1]), part(0, 1), discard]]); // T4, then horizon T5, which applies T3
      expect(h.g.lastHorizon).toBe(5);
      const doomed = h.submit('readsBad', [[b, part(4, 10), read]]); // T6
      expect(deps(doomed)).toEqual([`true T3 B${b.id} {[(4),(10))}`]);
      const fine = h.submit('readsGood', [[b, part(8, 12), read]]);
      if (when === 'after') h.finish.get(t1.id)!.reject(new Error('boom'));
      h.finish.get(t2.id)!.resolve();
      h.finish.get(t4.id)!.resolve();
      for (let i = 0; i < 4; i++) await tick();
      expect(h.settled.get(3)).toBeUndefined(); // the horizon itself does not fail
      expect(h.settled.has(3)).toBe(true);
      expect(h.settled.get(doomed.id)?.message).toMatch(/task T6 'readsBad' did not run because a task it depends on failed: task T1 'bad' failed: boom/);
      // It inherited the failure through the part of its read that T1 wrote, not the whole read.
      expect(h.settled.get(doomed.id)).toMatchObject({ task: "T6 'readsBad'", buffer: `B${b.id}`, region: regionOf(box([4], [8])) });
      expect(h.finish.has(doomed.id)).toBe(false);
      expect(h.finish.has(fine.id)).toBe(true);
      h.finish.get(fine.id)!.resolve();
      await expect(h.ex.wait()).rejects.toThrow(/T1 'bad' failed: boom/);
    });
  }

  it('forget failure records older than the latest horizon', async () => {
    const h = harness(8, 8);
    const b = buffer([1000]);
    for (let i = 0; i < 1000; i++) {
      const t = h.submit('bad', [[b, part(i, i + 1), discard]]);
      h.finish.get(t.id)!.reject(new Error('boom'));
      await tick();
      // The failed tasks of two horizon periods (the older horizon is applied only by the next), and two horizons.
      expect(h.ex.failureRecords).toBeLessThanOrEqual(20);
    }
    await expect(h.ex.wait()).rejects.toThrow(/boom/);
  });
});

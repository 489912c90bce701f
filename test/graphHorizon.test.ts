import { describe, expect, it } from 'vitest';
import { box } from '../src/core/box.js';
import type { PxlError } from '../src/core/errors.js';
import { range } from '../src/core/range.js';
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
  it('keep the tracking maps bounded over a 10,000-task run', () => {
    const bounded = longRun(new TaskGraph({ uninitializedReads: 'throw' }), 10_000);
    // Between horizons 32 tasks add at most a few entries each; without horizons the readers of `a` pile up.
    expect(bounded).toBeLessThanOrEqual(400);
    const unbounded = longRun(new TaskGraph({ uninitializedReads: 'throw', horizonStep: 2 ** 30 }), 1_000);
    expect(unbounded).toBeGreaterThan(1_000);
  });

  it('make a horizon every horizonStep tasks that depends on every tracked task', () => {
    const g = new TaskGraph({ horizonStep: 2, uninitializedReads: 'throw' });
    const b = buffer([16]);
    kernel(g, 'left', [[b, part(0, 8), discard]]); // T1
    expect(g.horizonIfDue()).toBeUndefined();
    kernel(g, 'right', [[b, part(8, 16), discard]]); // T2
    const h = g.horizonIfDue()!; // T3
    expect(h.kind).toBe('horizon');
    expect(h.id).toBe(3);
    expect(deps(h)).toEqual([`true T1 B${b.id} {[(0),(8))}`, `true T2 B${b.id} {[(8),(16))}`]);
    expect(g.horizonIfDue()).toBeUndefined();
    expect(g.lastHorizon).toBe(3);
  });

  it('keep dependencies correct across a horizon: later tasks depend on the horizon where they touch older history', () => {
    const g = new TaskGraph({ horizonStep: 2, uninitializedReads: 'throw' });
    const b = buffer([16]);
    kernel(g, 'left', [[b, part(0, 8), discard]]); // T1
    kernel(g, 'right', [[b, part(8, 16), discard]]); // T2
    g.horizonIfDue(); // T3
    const t4 = kernel(g, 'read', [[b, part(6, 10), read]]);
    expect(deps(t4)).toEqual([`true T3 B${b.id} {[(6),(10))}`]);
    const t5 = kernel(g, 'over', [[b, part(0, 4), discard]]);
    expect(deps(t5)).toEqual([`output T3 B${b.id} {[(0),(4))}`]);
    const t6 = kernel(g, 'over2', [[b, part(4, 12), discard]]); // T6: after reader T4 and writer T3
    expect(deps(t6)).toEqual([`output T3 B${b.id} {[(4),(12))}`, `anti T4 B${b.id} {[(6),(10))}`]);
    const h = g.horizonIfDue()!; // T7 stands for T3 (12..16), T5 (0..4), T6 (4..12)
    expect(deps(h)).toEqual([`true T3 B${b.id} {[(12),(16))}`, `true T5 B${b.id} {[(0),(4))}`, `true T6 B${b.id} {[(4),(12))}`]);
    const t8 = kernel(g, 'read', [[b, part(0, 16), read]]);
    expect(deps(t8)).toEqual([`true T7 B${b.id} {[(0),(16))}`]);
    // A writer after a horizon that stands for readers waits for it (anti).
    g.horizonIfDue();
    kernel(g, 'x', [[b, part(0, 1), read]]);
    const h2 = g.horizonIfDue()!; // T10: T7 wrote, T8 and T9 read
    expect(deps(h2)).toEqual([`true T7 B${b.id} {[(0),(16))}`, `anti T8 B${b.id} {[(0),(16))}`, `anti T9 B${b.id} {[(0),(1))}`]);
    const t11 = kernel(g, 'w', [[b, part(0, 16), discard]]);
    expect(deps(t11)).toEqual([`anti T10 B${b.id} {[(0),(16))}`, `output T10 B${b.id} {[(0),(16))}`]);
  });

  it('refuse a bad horizonStep', () => {
    expect(() => new TaskGraph({ horizonStep: 0 })).toThrow(/horizonStep must be an integer/);
  });
});

/** Graph and executor together, with runs the test settles by hand. */
function harness(horizonStep: number) {
  const g = new TaskGraph({ horizonStep, uninitializedReads: 'ignore' });
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
      const h = harness(2);
      const b = buffer([16]);
      const t1 = h.submit('bad', [[b, part(0, 8), discard]]);
      if (when === 'before') {
        h.finish.get(t1.id)!.reject(new Error('boom'));
        await tick();
      }
      const t2 = h.submit('good', [[b, part(8, 16), discard]]); // T2, then horizon T3
      expect(h.g.lastHorizon).toBe(3);
      const fine = h.submit('readsGood', [[b, part(8, 12), read]]);
      const doomed = h.submit('readsBad', [[b, part(4, 10), read]]);
      if (when === 'after') h.finish.get(t1.id)!.reject(new Error('boom'));
      h.finish.get(t2.id)!.resolve();
      await tick();
      await tick();
      expect(h.settled.get(3)).toBeUndefined(); // the horizon itself does not fail
      expect(h.settled.has(3)).toBe(true);
      expect(h.settled.get(doomed.id)?.message).toMatch(/task T5 'readsBad' did not run because a task it depends on failed: task T1 'bad' failed: boom/);
      expect(h.finish.has(doomed.id)).toBe(false);
      expect(h.finish.has(fine.id)).toBe(true);
      h.finish.get(fine.id)!.resolve();
      await expect(h.ex.wait()).rejects.toThrow(/T1 'bad' failed: boom/);
    });
  }

  it('forget failure records older than the latest horizon', async () => {
    const h = harness(8);
    const b = buffer([1000]);
    for (let i = 0; i < 1000; i++) {
      const t = h.submit('bad', [[b, part(i, i + 1), discard]]);
      h.finish.get(t.id)!.reject(new Error('boom'));
      await tick();
      expect(h.ex.failureRecords).toBeLessThanOrEqual(10);
    }
    await expect(h.ex.wait()).rejects.toThrow(/boom/);
  });
});

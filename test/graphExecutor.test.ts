import { describe, expect, it } from 'vitest';
import { emptyRegion } from '../src/core/region.js';
import { TaskGraphError, type PxlError } from '../src/core/errors.js';
import type { BufferId } from '../src/graph/buffer.js';
import { HOST_MEMORY } from '../src/graph/coherence.js';
import { Executor } from '../src/graph/executor.js';
import type { TaskId, TaskRecord } from '../src/graph/task.js';

/** A task record that depends on `on`; the executor reads only ids, names and dependencies. */
function task(id: number, on: number[] = [], kind: 'true' | 'anti' | 'output' = 'true'): TaskRecord {
  return {
    id: id as TaskId,
    kind: 'kernel',
    name: `k${id}`,
    range: undefined,
    launch: undefined,
    chunks: [],
    accesses: [],
    standsFor: [],
    dependencies: on.map((t) => ({ task: t as TaskId, kind, buffer: 0 as BufferId, region: emptyRegion(1) })),
    space: HOST_MEMORY.id,
    copies: [],
  };
}

/** Runs that the test finishes by hand, recording the order in which they started. */
function harness(maxInFlight = 8) {
  const ex = new Executor(maxInFlight);
  const started: number[] = [];
  const finish = new Map<number, { resolve: () => void; reject: (e: unknown) => void }>();
  const settled = new Map<number, PxlError | undefined>();
  const add = (id: number, on: number[] = [], kind: 'true' | 'anti' | 'output' = 'true'): void =>
    ex.add(
      task(id, on, kind),
      () =>
        new Promise<void>((resolve, reject) => {
          started.push(id);
          finish.set(id, { resolve, reject });
        }),
      (error) => settled.set(id, error),
    );
  return { ex, started, finish, settled, add };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('Executor', () => {
  it('starts independent tasks together and a dependent one only after its dependencies', async () => {
    const h = harness();
    h.add(1);
    h.add(2);
    h.add(3, [1, 2]);
    expect(h.started).toEqual([1, 2]);
    expect(h.ex.running).toBe(2);
    h.finish.get(1)!.resolve();
    await tick();
    expect(h.started).toEqual([1, 2]);
    h.finish.get(2)!.resolve();
    await tick();
    expect(h.started).toEqual([1, 2, 3]);
    h.finish.get(3)!.resolve();
    await h.ex.wait();
    expect(h.ex.pending).toBe(0);
    expect([...h.settled]).toEqual([[1, undefined], [2, undefined], [3, undefined]]);
  });

  it('does not wait for dependencies that already finished', async () => {
    const h = harness();
    h.add(1);
    h.finish.get(1)!.resolve();
    await tick();
    h.add(2, [1]);
    expect(h.started).toEqual([1, 2]);
  });

  it('keeps at most maxInFlight tasks running and starts the rest in submission order', async () => {
    const h = harness(2);
    for (const id of [1, 2, 3, 4]) h.add(id);
    expect(h.started).toEqual([1, 2]);
    h.finish.get(2)!.resolve();
    await tick();
    expect(h.started).toEqual([1, 2, 3]);
    expect(h.ex.running).toBe(2);
  });

  it('fails the dependents of a failed task transitively without running them, and reports the failure once', async () => {
    const h = harness();
    h.add(1);
    h.add(2, [1]);
    h.add(3, [2]);
    h.add(4);
    h.finish.get(1)!.reject(new Error('boom'));
    h.finish.get(4)!.resolve();
    await tick();
    expect(h.started).toEqual([1, 4]);
    const first = h.settled.get(1)!;
    expect(first).toEqual(new TaskGraphError("task T1 'k1' failed: boom", { task: "T1 'k1'" }));
    expect(h.settled.get(2)!.message).toBe("task T2 'k2' did not run because a task it depends on failed: task T1 'k1' failed: boom");
    expect(h.settled.get(3)!.message).toBe("task T3 'k3' did not run because a task it depends on failed: task T1 'k1' failed: boom");
    expect(h.settled.get(3)!.cause).toBe(first);
    await expect(h.ex.wait()).rejects.toThrow("task T1 'k1' failed: boom");
    await expect(h.ex.wait()).resolves.toBeUndefined();
    // A task submitted later that depends on the failed one fails at once.
    h.add(5, [3]);
    expect(h.settled.get(5)!.message).toBe("task T5 'k5' did not run because a task it depends on failed: task T1 'k1' failed: boom");
    expect(h.started).toEqual([1, 4]);
  });

  it('runs tasks that only had to wait for a failed task (anti and output dependencies)', async () => {
    const h = harness();
    h.add(1);
    h.add(2, [1], 'output');
    h.add(3, [1], 'anti');
    h.finish.get(1)!.reject(new Error('boom'));
    await tick();
    expect(h.started).toEqual([1, 2, 3]);
    h.add(4, [1], 'output');
    expect(h.started).toEqual([1, 2, 3, 4]);
    for (const id of [2, 3, 4]) h.finish.get(id)!.resolve();
    await expect(h.ex.wait()).rejects.toThrow("task T1 'k1' failed: boom");
    expect([...h.settled].filter(([, e]) => e === undefined).map(([id]) => id)).toEqual([2, 3, 4]);
  });

  it('counts further failures in the message of the first', async () => {
    const h = harness();
    h.add(1);
    h.add(2);
    h.finish.get(1)!.reject(new Error('a'));
    h.finish.get(2)!.reject(new Error('b'));
    await expect(h.ex.wait()).rejects.toThrow("task T1 'k1' failed: a (and 1 more task failure)");
  });

  it('treats a run that throws synchronously as a failure', async () => {
    const ex = new Executor(4);
    ex.add(task(1), () => {
      throw new Error('sync');
    });
    await expect(ex.wait()).rejects.toThrow("task T1 'k1' failed: sync");
  });
});

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createContext, Result, type Context, type DevicePtr, type Job } from '../src/index.js';
import { gateBytes, openAllGates, waitForStarted } from './fixtures/gates.js';

/**
 * `map.cancel()` reaches every launch of its Map that has not finished, wherever it is (waiting for
 * room in a stream, queued on a stream behind another Map, waiting for a launch slot, running), and
 * never waits for another Map's launches. The device has two cores; a `gated` kernel holds its
 * tasks at gates the test opens (fixtures/gates.ts), so every interleaving here is forced by a
 * handshake. A cancel() that waited for a gate would hang, and the test would fail by its timeout.
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
  for (const gates of openOnExit.splice(0)) openAllGates(gates);
  for (const ptr of allocated.splice(0)) ctx.memFree(ptr);
});

afterAll(async () => {
  await ctx?.destroy();
});

function alloc(bytes: number): DevicePtr {
  const ptr = ctx.memAlloc(bytes);
  allocated.push(ptr);
  return ptr;
}

/** A gate buffer and a run counter for `taskCount` gated tasks. */
function gated(taskCount: number): { gatesPtr: DevicePtr; ranPtr: DevicePtr; gates: Int32Array; ran: () => number[] } {
  const gatesPtr = alloc(gateBytes(taskCount));
  const ranPtr = alloc(taskCount * 4);
  const gates = ctx.hostView(gatesPtr, 'int32');
  openOnExit.push(gates);
  return { gatesPtr, ranPtr, gates, ran: () => [...ctx.hostView(ranPtr, 'int32')] };
}

describe('map.cancel()', () => {
  it('cancels an older running launch of the Map too, not only its newest one', async () => {
    // Four tasks, one per batch: core 0 runs tasks 0-1, core 1 tasks 2-3.
    const first = gated(4);
    const second = gated(4);
    const map = job.buildMap('gated', 4).setBatchSize(1).setStream(ctx.createStream());
    await map.execute(first.gatesPtr, first.ranPtr);
    await waitForStarted(first.gates, 2);
    // The Map's newer launch goes to another stream, so both are in flight at once.
    map.setStream(ctx.createStream());
    await map.execute(second.gatesPtr, second.ranPtr);
    const cancelled = map.cancel();
    openAllGates(first.gates);
    openAllGates(second.gates);
    await cancelled;
    expect(first.ran()).toEqual([1, 0, 1, 0]);
    expect(second.ran()).toEqual([0, 0, 0, 0]);
    expect(map.getExecuteStatus()).toBe('Cancelled');
  });

  it('resolves without waiting for another Map that runs ahead of it on the same stream', async () => {
    const ahead = gated(1);
    const counts = alloc(4 * 2);
    const stream = ctx.createStream();
    const other = job.buildMap('gated', 1).setStream(stream);
    const map = job.buildMap('count_tasks', 2).setStream(stream);
    await other.execute(ahead.gatesPtr, ahead.ranPtr);
    await waitForStarted(ahead.gates, 1);
    expect(await map.execute(counts)).toBe(Result.Success);
    // The other Map is still held at its gate while this resolves.
    await map.cancel();
    expect(map.getExecuteStatus()).toBe('Cancelled');
    expect(ahead.ran()).toEqual([0]);
    openAllGates(ahead.gates);
    await other.synchronize();
    await map.synchronize();
    expect(other.getExecuteStatus()).toBe('Idle');
    expect([...ctx.hostView(counts, 'int32')]).toEqual([0, 0]);
    // Still reusable.
    await map.execute(counts);
    await map.synchronize();
    expect(map.getExecuteStatus()).toBe('Idle');
    expect([...ctx.hostView(counts, 'int32')]).toEqual([1, 1]);
  });

  it('withdraws an execute that waits for room in a full stream: it resolves Result.Failure, and cancel() does not wait for the room', async () => {
    const ahead = gated(1);
    const counts = alloc(4);
    const stream = ctx.createStream(1);
    const other = job.buildMap('gated', 1).setStream(stream);
    const map = job.buildMap('count_tasks', 1).setStream(stream);
    await other.execute(ahead.gatesPtr, ahead.ranPtr);
    await waitForStarted(ahead.gates, 1);
    const waiting = map.execute(counts);
    await map.cancel();
    expect(await waiting).toBe(Result.Failure);
    expect(map.getExecuteStatus()).toBe('Cancelled');
    // The withdrawn execute took no room: the next one is accepted once the stream frees.
    const next = map.execute(counts);
    openAllGates(ahead.gates);
    expect(await next).toBe(Result.Success);
    await map.synchronize();
    expect([...ctx.hostView(counts, 'int32')]).toEqual([1]);
  });

  it('withdraws a launch that waits for a free launch slot without waiting for the launches holding the slots', async () => {
    const counts = alloc(4);
    const { gatesPtr, ranPtr, gates, ran } = gated(1);
    // 64 launches (the dispatcher's slot count) on 64 streams: the first holds a core at a gate, so
    // no slot frees until the test opens it.
    const holders = Array.from({ length: 64 }, () => job.buildMap('gated', 1).setStream(ctx.createStream()));
    for (const map of holders) await map.execute(gatesPtr, ranPtr);
    await waitForStarted(gates, 1);
    const waiting = job.buildMap('count_tasks', 1).setStream(ctx.createStream());
    expect(await waiting.execute(counts)).toBe(Result.Success);
    expect(waiting.getExecuteStatus()).toBe('Request');
    await waiting.cancel();
    expect(waiting.getExecuteStatus()).toBe('Cancelled');
    openAllGates(gates);
    await Promise.all(holders.map((m) => m.synchronize()));
    expect(ran()).toEqual([64]);
    expect([...ctx.hostView(counts, 'int32')]).toEqual([0]);
    await waiting.execute(counts);
    await waiting.synchronize();
    expect([...ctx.hostView(counts, 'int32')]).toEqual([1]);
  });

  it('leaves executes issued after the call alone', async () => {
    const { gatesPtr, ranPtr, gates, ran } = gated(2);
    const counts = alloc(4 * 2);
    const map = job.buildMap('gated', 2).setBatchSize(1);
    await map.execute(gatesPtr, ranPtr);
    await waitForStarted(gates, 2);
    const cancelled = map.cancel();
    const later = job.buildMap('count_tasks', 2);
    await later.execute(counts);
    openAllGates(gates);
    await cancelled;
    await later.synchronize();
    expect(ran()).toEqual([1, 1]);
    expect(later.getExecuteStatus()).toBe('Idle');
    expect([...ctx.hostView(counts, 'int32')]).toEqual([1, 1]);
  });
});

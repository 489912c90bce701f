import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createContext, DefaultStreamLimit, OptionError, Result, StateError, Stream, type Context, type DevicePtr, type Job } from '../src/index.js';
import { gateBytes, openAllGates, waitForStarted } from './fixtures/gates.js';

/**
 * Streams order the executes issued on them. The device has two Subs of one core each; jobA owns
 * Sub 0 and jobB Sub 1, so a kernel held at a gate on jobA's core leaves jobB's core free.
 */

let ctx: Context;
let other: Context;
let jobA: Job;
let jobB: Job;
const allocated: DevicePtr[] = [];
const openOnExit: Int32Array[] = [];

beforeAll(async () => {
  [ctx, other] = await Promise.all([
    createContext({ topology: { subs: 2, clustersPerSub: 1, coresPerCluster: 1 } }),
    createContext({ topology: { coresPerCluster: 1 } }),
  ]);
  const module = await ctx.createModule(new URL('./fixtures/kernels.ts', import.meta.url));
  jobA = ctx.createJob(1);
  jobB = ctx.createJob(1);
  jobA.load(module);
  jobB.load(module);
});

afterEach(() => {
  for (const gates of openOnExit.splice(0)) openAllGates(gates);
  for (const ptr of allocated.splice(0)) ctx.memFree(ptr);
});

afterAll(async () => {
  await Promise.all([ctx?.destroy(), other?.destroy()]);
});

function alloc(bytes: number): DevicePtr {
  const ptr = ctx.memAlloc(bytes);
  allocated.push(ptr);
  return ptr;
}

/** A gated Map of one task on `job` (see fixtures/gates.ts), with its gate and run counter. */
function gatedMap(job: Job) {
  const gatesPtr = alloc(gateBytes(1));
  const ranPtr = alloc(4);
  const gates = ctx.hostView(gatesPtr, 'int32');
  openOnExit.push(gates);
  const map = job.buildMap('gated', 1);
  return { map, gates, args: [gatesPtr, ranPtr] as const, ran: () => ctx.hostView(ranPtr, 'int32')[0] };
}

/** A count_tasks Map of four tasks on `job`, with its counts. */
function countingMap(job: Job) {
  const counts = alloc(16);
  return { map: job.buildMap('count_tasks', 4), counts, seen: () => [...ctx.hostView(counts, 'int32')] };
}

/** `settled` turns true once `p` settles; read it after letting the event loop turn. */
function track(p: Promise<unknown>): { settled: boolean } {
  const state = { settled: false };
  void p.finally(() => {
    state.settled = true;
  });
  return state;
}

describe('streams', () => {
  it('runs a Map on its Job\'s default stream until setStream binds another, and setStream() returns to it', () => {
    const { map } = countingMap(jobA);
    expect(map.stream).toBe(jobA.defaultStream);
    expect(jobA.defaultStream).not.toBe(jobB.defaultStream);
    const stream = ctx.createStream();
    expect(stream).toBeInstanceOf(Stream);
    expect(map.setStream(stream)).toBe(map);
    expect(map.stream).toBe(stream);
    map.setStream();
    expect(map.stream).toBe(jobA.defaultStream);
  });

  it(`holds ${DefaultStreamLimit} operations by default and takes a limit`, () => {
    expect(ctx.createStream().limit).toBe(64);
    expect(ctx.createStream(1).limit).toBe(1);
    expect(() => ctx.createStream(0)).toThrow(new OptionError('stream limit must be an integer in [1, 1048576], got 0'));
  });

  it('resolves execute() to Result.Success once the stream accepts the launch', async () => {
    const { map, counts, seen } = countingMap(jobA);
    expect(await map.execute(counts)).toBe(Result.Success);
    await map.synchronize();
    expect(seen()).toEqual([1, 1, 1, 1]);
  });

  it('runs Maps that share a stream one after another, even on different Jobs', async () => {
    const blocked = gatedMap(jobA);
    const next = countingMap(jobB);
    const stream = ctx.createStream();
    blocked.map.setStream(stream);
    next.map.setStream(stream);
    await blocked.map.execute(...blocked.args);
    await waitForStarted(blocked.gates, 1);
    expect(await next.map.execute(next.counts)).toBe(Result.Success);
    expect(next.map.getExecuteStatus()).toBe('HostInit');
    expect(next.seen()).toEqual([0, 0, 0, 0]);
    openAllGates(blocked.gates);
    await next.map.synchronize();
    expect(next.seen()).toEqual([1, 1, 1, 1]);
    expect(blocked.map.getExecuteStatus()).toBe('Idle');
  });

  it('runs Maps on different streams at the same time', async () => {
    const blocked = gatedMap(jobA);
    const free = countingMap(jobB);
    blocked.map.setStream(ctx.createStream());
    free.map.setStream(ctx.createStream());
    await blocked.map.execute(...blocked.args);
    await waitForStarted(blocked.gates, 1);
    await free.map.execute(free.counts);
    await free.map.synchronize();
    expect(free.seen()).toEqual([1, 1, 1, 1]);
    expect(blocked.map.getExecuteStatus()).toBe('Waiting');
    openAllGates(blocked.gates);
    await blocked.map.synchronize();
    expect(blocked.ran()).toBe(1);
  });

  it('makes execute() wait for room when the stream holds its limit', async () => {
    const blocked = gatedMap(jobA);
    const stream = ctx.createStream(1);
    blocked.map.setStream(stream);
    expect(await blocked.map.execute(...blocked.args)).toBe(Result.Success);
    const second = blocked.map.execute(...blocked.args);
    const state = track(second);
    expect(stream.inFlight).toBe(1);
    await waitForStarted(blocked.gates, 1);
    // One full turn of the event loop: an accepted execute would have settled by now.
    await new Promise((resolve) => setImmediate(resolve));
    expect(stream.inFlight).toBe(1);
    expect(state.settled).toBe(false);
    openAllGates(blocked.gates);
    expect(await second).toBe(Result.Success);
    await blocked.map.synchronize();
    expect(blocked.ran()).toBe(2);
  });
});

describe('Context.destroyStream', () => {
  it('resolves an execute still waiting for room to Result.Failure; the launch already accepted completes', async () => {
    const blocked = gatedMap(jobA);
    const stream = ctx.createStream(1);
    blocked.map.setStream(stream);
    expect(await blocked.map.execute(...blocked.args)).toBe(Result.Success);
    await waitForStarted(blocked.gates, 1);
    const waiting = blocked.map.execute(...blocked.args);
    ctx.destroyStream(stream);
    expect(await waiting).toBe(Result.Failure);
    expect(stream.destroyed).toBe(true);
    openAllGates(blocked.gates);
    await blocked.map.synchronize();
    expect(blocked.map.getExecuteStatus()).toBe('Idle');
    expect(blocked.ran()).toBe(1);
  });

  it('returns a Map refused by a destroyed stream to Idle', async () => {
    const blocked = gatedMap(jobA);
    const refused = countingMap(jobB);
    const stream = ctx.createStream(1);
    blocked.map.setStream(stream);
    refused.map.setStream(stream);
    await blocked.map.execute(...blocked.args);
    await waitForStarted(blocked.gates, 1);
    const waiting = refused.map.execute(refused.counts);
    expect(refused.map.getExecuteStatus()).toBe('HostInit');
    ctx.destroyStream(stream);
    expect(await waiting).toBe(Result.Failure);
    expect(refused.map.getExecuteStatus()).toBe('Idle');
    await refused.map.synchronize();
    openAllGates(blocked.gates);
    await blocked.map.synchronize();
    expect(refused.seen()).toEqual([0, 0, 0, 0]);
  });

  it('makes later executes on the stream resolve Result.Failure until the Map binds another stream', async () => {
    const { map, counts, seen } = countingMap(jobA);
    const stream = ctx.createStream();
    ctx.destroyStream(stream);
    map.setStream(stream);
    expect(await map.execute(counts)).toBe(Result.Failure);
    await map.synchronize();
    expect(map.getExecuteStatus()).toBe('Idle');
    expect(seen()).toEqual([0, 0, 0, 0]);
    map.setStream();
    expect(await map.execute(counts)).toBe(Result.Success);
    await map.synchronize();
    expect(seen()).toEqual([1, 1, 1, 1]);
  });

  it('refuses streams of another Context', () => {
    const foreign = other.createStream();
    const { map } = countingMap(jobA);
    expect(() => map.setStream(foreign)).toThrow(new StateError('setStream: the stream belongs to another Context'));
    expect(() => ctx.destroyStream(foreign)).toThrow(new StateError('destroyStream: the stream belongs to another Context'));
    expect(foreign.destroyed).toBe(false);
  });
});

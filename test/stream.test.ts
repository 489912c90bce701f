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

/** A log_launch Map's log for `launches` entries (see fixtures/kernels.ts) and its counts. */
function launchLog(launches: number, tasks: number) {
  const log = alloc(4 * (1 + launches));
  const counts = alloc(4 * tasks);
  return {
    log,
    counts,
    /** Launch numbers in the order task 0 of each launch ran. */
    entries: () => {
      const view = ctx.hostView(log, 'int32');
      return [...view.subarray(1, 1 + view[0]!)];
    },
    seen: () => [...ctx.hostView(counts, 'int32')],
  };
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

describe('enqueue order', () => {
  // More launches than a stream holds, so the later ones also wait for room before they enqueue.
  const launches = DefaultStreamLimit + 36;

  it('runs many executes of different Maps on a Job\'s default stream in the order they were issued', async () => {
    const { log, counts, entries, seen } = launchLog(launches, 3);
    const maps = [1, 2, 3, 1, 2].map((tasks) => jobA.buildMap('log_launch', tasks));
    const results: Promise<Result>[] = [];
    for (let k = 0; k < launches; k++) results.push(maps[k % maps.length]!.execute(log, counts, k, -1));
    expect(new Set(await Promise.all(results))).toEqual(new Set([Result.Success]));
    await Promise.all(maps.map((m) => m.synchronize()));
    expect(entries()).toEqual(range(launches));
    expect(seen()[0]).toBe(launches);
    expect(jobA.defaultStream.inFlight).toBe(0);
  });

  it('runs many executes of Maps on different Jobs sharing one stream in the order they were issued', async () => {
    const { log, counts, entries } = launchLog(launches, 2);
    const stream = ctx.createStream();
    const maps = [jobA, jobB, jobB, jobA].map((job, i) => job.buildMap('log_launch', 1 + (i % 2)).setStream(stream));
    const results: Promise<Result>[] = [];
    for (let k = 0; k < launches; k++) results.push(maps[k % maps.length]!.execute(log, counts, k, -1));
    expect(new Set(await Promise.all(results))).toEqual(new Set([Result.Success]));
    await Promise.all(maps.map((m) => m.synchronize()));
    expect(entries()).toEqual(range(launches));
  });

  it('keeps executes that wait for room in call order, even against an execute issued as a slot frees', async () => {
    // The stream holds one launch, held at its gate; A then C wait for room. B is issued from the
    // callback that runs as soon as the held launch finishes, just before its slot is handed on:
    // it must still queue behind A and C.
    const blocked = gatedMap(jobA);
    const stream = ctx.createStream(1);
    blocked.map.setStream(stream);
    const { log, counts, entries } = launchLog(3, 1);
    const [a, b, c] = [0, 1, 2].map(() => jobB.buildMap('log_launch', 1).setStream(stream));
    await blocked.map.execute(...blocked.args);
    await waitForStarted(blocked.gates, 1);
    const waitingA = a!.execute(log, counts, 1, -1);
    const waitingC = c!.execute(log, counts, 2, -1);
    const lateB = blocked.map.synchronize().then(() => b!.execute(log, counts, 3, -1));
    openAllGates(blocked.gates);
    expect(await Promise.all([waitingA, waitingC, lateB])).toEqual([Result.Success, Result.Success, Result.Success]);
    await Promise.all([a, b, c].map((m) => m!.synchronize()));
    expect(entries()).toEqual([1, 2, 3]);
  });
});

describe('in-flight limit', () => {
  it('keeps the (limit + 1)-th execute pending until the oldest launch finishes and frees its slot', async () => {
    const limit = 3;
    const stream = ctx.createStream(limit);
    const first = gatedMap(jobA);
    const second = gatedMap(jobA);
    const counted = countingMap(jobA);
    for (const m of [first.map, second.map, counted.map]) m.setStream(stream);

    expect(await first.map.execute(...first.args)).toBe(Result.Success);
    await waitForStarted(first.gates, 1);
    expect(await second.map.execute(...second.args)).toBe(Result.Success);
    expect(await counted.map.execute(counted.counts)).toBe(Result.Success);
    expect(stream.inFlight).toBe(limit);

    let accepted = false;
    const extra = counted.map.execute(counted.counts).then((r) => {
      accepted = true;
      return r;
    });
    // A whole launch on the other Job runs meanwhile (many turns of the event loop, wake-ups from
    // the cores): the first launch still holds its core at the gate, so no slot can free.
    const bystander = countingMap(jobB);
    await bystander.map.execute(bystander.counts);
    await bystander.map.synchronize();
    expect(bystander.seen()).toEqual([1, 1, 1, 1]);
    expect(accepted).toBe(false);
    expect(stream.inFlight).toBe(limit);

    openAllGates(first.gates);
    expect(await extra).toBe(Result.Success);
    expect(accepted).toBe(true);
    // One slot freed, not the whole queue: the second launch now holds the core at its gate.
    await waitForStarted(second.gates, 1);
    expect(stream.inFlight).toBe(limit);
    expect(counted.seen()).toEqual([0, 0, 0, 0]);
    openAllGates(second.gates);
    await Promise.all([first.map.synchronize(), second.map.synchronize(), counted.map.synchronize()]);
    expect(counted.seen()).toEqual([2, 2, 2, 2]);
    expect([first.ran(), second.ran()]).toEqual([1, 1]);
    expect(stream.inFlight).toBe(0);
  });

  it('pipelines: executes resolve while earlier launches still run, and one synchronize waits for all', async () => {
    const launches = 10;
    const blocked = gatedMap(jobA);
    const { log, counts, entries, seen } = launchLog(launches, 4);
    const map = jobA.buildMap('log_launch', 4);
    await blocked.map.execute(...blocked.args);
    await waitForStarted(blocked.gates, 1);
    const results: Promise<Result>[] = [];
    for (let k = 0; k < launches; k++) results.push(map.execute(log, counts, k, -1));
    // Every execute was accepted while the launch ahead of them holds the Job's only core.
    expect(new Set(await Promise.all(results))).toEqual(new Set([Result.Success]));
    expect(jobA.defaultStream.inFlight).toBe(1 + launches);
    expect(entries()).toEqual([]);
    expect(map.getExecuteStatus()).toBe('HostInit');
    openAllGates(blocked.gates);
    await map.synchronize();
    expect(entries()).toEqual(range(launches));
    expect(seen()).toEqual([launches, launches, launches, launches]);
    expect(map.getExecuteStatus()).toBe('Idle');
    expect(blocked.map.getExecuteStatus()).toBe('Idle');
  });
});

describe('destroying the Job or the Context', () => {
  it('destroyJob lets the running launch finish, fails the launches queued behind it and refuses executes waiting for room', async () => {
    const own = await createContext({ topology: { coresPerCluster: 1 } });
    try {
      const module = await own.createModule(new URL('./fixtures/kernels.ts', import.meta.url));
      const job = own.createJob();
      job.load(module);
      const gatesPtr = own.memAlloc(gateBytes(1));
      const gates = own.hostView(gatesPtr, 'int32');
      const ran = own.memAlloc(4);
      const counts = own.memAlloc(4);
      const held = job.buildMap('gated', 1);
      const queued = job.buildMap('count_tasks', 1);
      expect(await held.execute(gatesPtr, ran)).toBe(Result.Success);
      await waitForStarted(gates, 1);
      for (let i = 1; i < DefaultStreamLimit; i++) expect(await queued.execute(counts)).toBe(Result.Success);
      const waiting = queued.execute(counts);
      own.destroyJob(job);
      expect(await waiting).toBe(Result.Failure);
      openAllGates(gates);
      await held.synchronize();
      expect(held.getExecuteStatus()).toBe('Idle');
      expect(own.hostView(ran, 'int32')[0]).toBe(1);
      await expect(queued.synchronize()).rejects.toThrow(new StateError('this Job was destroyed; create a new one with ctx.createJob()'));
      expect(queued.getExecuteStatus()).toBe('Fail');
      expect(own.hostView(counts, 'int32')[0]).toBe(0);
      expect(job.defaultStream.inFlight).toBe(0);
    } finally {
      await own.destroy();
    }
  });

  it('Context.destroy resolves executes waiting for room to Result.Failure and fails the launch in flight, with no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      const doomed = await createContext({ topology: { coresPerCluster: 1 } });
      const module = await doomed.createModule(new URL('./fixtures/kernels.ts', import.meta.url));
      const job = doomed.createJob();
      job.load(module);
      const gatesPtr = doomed.memAlloc(gateBytes(1));
      const gates = doomed.hostView(gatesPtr, 'int32');
      const ran = doomed.memAlloc(4);
      const held = job.buildMap('gated', 1);
      // Fill the Job's default stream: the first launch holds the core, the rest queue behind it.
      for (let i = 0; i < DefaultStreamLimit; i++) expect(await held.execute(gatesPtr, ran)).toBe(Result.Success);
      await waitForStarted(gates, 1);
      const onDefault = held.execute(gatesPtr, ran);
      // And a custom stream of one, whose only launch waits behind the held one on the same core.
      const custom = doomed.createStream(1);
      const counts = doomed.memAlloc(4);
      const other = job.buildMap('count_tasks', 1).setStream(custom);
      expect(await other.execute(counts)).toBe(Result.Success);
      const onCustom = other.execute(counts);
      const waiting = [track(onDefault), track(onCustom)];
      await new Promise((resolve) => setImmediate(resolve));
      expect(waiting.map((w) => w.settled)).toEqual([false, false]);

      const destroyed = doomed.destroy();
      // The waiting executes are refused as the Context goes down, before its cores have stopped.
      expect(await onDefault).toBe(Result.Failure);
      expect(await onCustom).toBe(Result.Failure);
      await destroyed;
      await expect(held.synchronize()).rejects.toThrow(new StateError('this Context was destroyed; create a new one with createContext() (pdist, cdist and l2Kernel without a context open a new default one themselves)'));
      await expect(other.synchronize()).rejects.toThrow(StateError);
      expect(held.getExecuteStatus()).toBe('Fail');
      // Rejections nobody handled surface after a turn of the event loop.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

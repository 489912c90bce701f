import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext, StateError, type ChromeTrace, type Context, type DevicePtr, type Job, type KernelModule, type TraceEvent } from '../src/index.js';
import { GATE, gateBytes, openAllGates, openGates, waitForStarted } from './fixtures/gates.js';

/**
 * Checks a trace against the Chrome Trace Event format as Perfetto and chrome://tracing read it:
 * required fields and types per phase, non-negative durations, and every async begin ('b')
 * matched by an end ('e') of the same category, id and name, in order.
 */
function validateTraceEventFormat(trace: ChromeTrace): void {
  expect(Array.isArray(trace.traceEvents)).toBe(true);
  const open = new Map<string, string[]>();
  for (const e of trace.traceEvents) {
    expect(typeof e.name).toBe('string');
    expect(['X', 'b', 'e', 'M', 'i']).toContain(e.ph);
    expect(Number.isInteger(e.pid)).toBe(true);
    expect(Number.isInteger(e.tid)).toBe(true);
    if (e.ph === 'M') {
      expect(['process_name', 'thread_name', 'thread_sort_index']).toContain(e.name);
      continue;
    }
    expect(Number.isFinite(e.ts)).toBe(true);
    if (e.ph === 'X') expect(e.dur!).toBeGreaterThanOrEqual(0);
    if (e.ph === 'b' || e.ph === 'e') {
      expect(typeof e.cat).toBe('string');
      expect(e.id).toBeDefined();
      const key = `${e.cat}/${e.id}`;
      const stack = open.get(key) ?? [];
      if (e.ph === 'b') stack.push(e.name);
      else expect(stack.pop()).toBe(e.name);
      open.set(key, stack);
    }
  }
  for (const [key, stack] of open) expect(stack, `unclosed async slices of ${key}`).toEqual([]);
  JSON.parse(JSON.stringify(trace));
}

const batches = (trace: ChromeTrace, kernel: string): TraceEvent[] => trace.traceEvents.filter((e) => e.ph === 'X' && e.name === kernel);
const end = (e: TraceEvent): number => e.ts! + e.dur!;

let ctx: Context;
let mod: KernelModule;
let job: Job;
const allocated: DevicePtr[] = [];
function gatesFor(tasks: number): { ptr: DevicePtr; gates: Int32Array } {
  const ptr = ctx.memAlloc(gateBytes(tasks));
  allocated.push(ptr);
  return { ptr, gates: ctx.hostView(ptr, 'int32') };
}
function alloc(bytes: number): DevicePtr {
  const ptr = ctx.memAlloc(bytes);
  allocated.push(ptr);
  return ptr;
}

beforeAll(async () => {
  ctx = await createContext({ topology: { subs: 2, clustersPerSub: 1, coresPerCluster: 1 } });
  mod = await ctx.createModule(new URL('./fixtures/kernels.ts', import.meta.url));
  job = ctx.createJob();
  job.load(mod);
});
afterAll(async () => {
  await ctx.destroy();
});

describe('execution traces', () => {
  it('records each batch on its core and each execute\'s lifecycle, in the Trace Event format', async () => {
    ctx.startTrace();
    expect(ctx.tracing).toBe(true);
    const counts = alloc(4 * 8);
    const map = job.buildMap('count_tasks', 8).setBatchSize(2);
    await map.execute(counts);
    await map.synchronize();
    const trace = ctx.stopTrace();
    expect(ctx.tracing).toBe(false);
    validateTraceEventFormat(trace);
    const ran = batches(trace, 'count_tasks');
    expect(ran.map((e) => e.args!.batch).sort()).toEqual([0, 1, 2, 3]);
    expect(ran.map((e) => e.args!.tasks).sort()).toEqual(['[0, 2)', '[2, 4)', '[4, 6)', '[6, 8)']);
    expect(new Set(ran.map((e) => e.tid))).toEqual(new Set([0, 1]));
    const states = trace.traceEvents.filter((e) => e.ph === 'b' && e.cat === 'execute').map((e) => e.name);
    expect(states).toEqual(['count_tasks', 'HostInit', 'DeviceInit', 'Request', 'Waiting', 'DeviceFinalize', 'HostFinalize']);
    const names = trace.traceEvents.filter((e) => e.ph === 'M' && e.name === 'thread_name').map((e) => e.args!.name);
    expect(names).toContain('MU core 0');
    expect(names.some((n) => String(n).startsWith('default stream of Job'))).toBe(true);
  });

  it('records nothing while tracing is off and refuses to stop a trace that is not running', async () => {
    const counts = alloc(4 * 4);
    const map = job.buildMap('count_tasks', 4);
    await map.execute(counts);
    await map.synchronize();
    expect(() => ctx.stopTrace()).toThrow(new StateError('stopTrace: no trace is being recorded; call startTrace() first'));
    ctx.startTrace();
    expect(() => ctx.startTrace()).toThrow(StateError);
    const trace = ctx.stopTrace();
    expect(batches(trace, 'count_tasks')).toEqual([]);
  });

  it('shows two streams of one Job overlapping on its cores, and one stream not', async () => {
    // A holds core 0 at its gate; B has a batch on each core. On its own stream, B's batch on core 1
    // runs while A still holds core 0. On A's stream, B is not dispatched before A ends.
    for (const separate of [true, false]) {
      const a = gatesFor(1);
      const b = gatesFor(2);
      const ranA = alloc(4);
      const ranB = alloc(8);
      openGates(b.gates, [0, 1]);
      const mapA = job.buildMap('gated', 1);
      const mapB = job.buildMap('gated', 2).setBatchSize(1);
      const stream = ctx.createStream();
      if (separate) mapB.setStream(stream);
      ctx.startTrace();
      await mapA.execute(a.ptr, ranA);
      await waitForStarted(a.gates, 1);
      await mapB.execute(b.ptr, ranB);
      if (separate) await waitForStarted(b.gates, 1);
      openAllGates(a.gates);
      await mapA.synchronize();
      await mapB.synchronize();
      const trace = ctx.stopTrace();
      ctx.destroyStream(stream);
      validateTraceEventFormat(trace);
      const [batchA] = trace.traceEvents.filter((e) => e.ph === 'X' && e.args!.execute === trace.traceEvents.find((x) => x.ph === 'b' && x.name === 'gated')!.args!.execute);
      const others = trace.traceEvents.filter((e) => e.ph === 'X' && e !== batchA);
      expect(batchA!.tid).toBe(0);
      expect(others).toHaveLength(2);
      const overlapping = others.filter((e) => e.ts! < end(batchA!));
      if (separate) {
        expect(overlapping.map((e) => e.tid)).toEqual([1]);
      } else {
        expect(overlapping).toEqual([]);
      }
    }
  });

  it('runs many Jobs on disjoint Subs at the same time', async () => {
    ctx.destroyJob(job);
    const first = ctx.createJob(1);
    const second = ctx.createJob(1);
    try {
      expect([...first.subs, ...second.subs].sort()).toEqual([0, 1]);
      first.load(mod);
      second.load(mod);
      const g = gatesFor(1);
      const h = gatesFor(1);
      const ran = [alloc(4), alloc(4)] as const;
      const maps = [first.buildMap('gated', 1), second.buildMap('gated', 1)] as const;
      ctx.startTrace();
      await maps[0].execute(g.ptr, ran[0]);
      await maps[1].execute(h.ptr, ran[1]);
      // Both kernels reach their gates while both gates are still shut: neither launch waited for
      // the other, so each Job dispatched on its own Sub.
      await Promise.all([waitForStarted(g.gates, 1), waitForStarted(h.gates, 1)]);
      expect([Atomics.load(g.gates, GATE), Atomics.load(h.gates, GATE)]).toEqual([0, 0]);
      openAllGates(g.gates);
      openAllGates(h.gates);
      await Promise.all(maps.map((m) => m.synchronize()));
      const trace = ctx.stopTrace();
      expect(ran.map((p) => ctx.hostView(p, 'int32')[0])).toEqual([1, 1]);
      // In the trace: one batch of each launch, on different cores, overlapping in time.
      const [x, y] = batches(trace, 'gated');
      expect(x!.tid).not.toBe(y!.tid);
      expect(x!.ts! < y!.ts! + y!.dur! && y!.ts! < x!.ts! + x!.dur!).toBe(true);
    } finally {
      ctx.destroyJob(first);
      ctx.destroyJob(second);
      job = ctx.createJob();
      job.load(mod);
    }
  });

  it('writes the trace to the file PXL_TRACE names when the Context is destroyed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pxl-trace-'));
    const file = join(dir, 'trace.json');
    const saved = process.env.PXL_TRACE;
    process.env.PXL_TRACE = file;
    try {
      const traced = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } });
      expect(traced.tracing).toBe(true);
      const m = await traced.createModule(new URL('./fixtures/kernels.ts', import.meta.url));
      const j = traced.createJob();
      j.load(m);
      const counts = traced.memAlloc(4 * 3);
      const map = j.buildMap('count_tasks', 3).setBatchSize(1);
      await map.execute(counts);
      await map.synchronize();
      await traced.destroy();
      const trace = JSON.parse(await readFile(file, 'utf8')) as ChromeTrace;
      validateTraceEventFormat(trace);
      expect(batches(trace, 'count_tasks')).toHaveLength(3);
    } finally {
      if (saved === undefined) delete process.env.PXL_TRACE;
      else process.env.PXL_TRACE = saved;
      await rm(dir, { recursive: true, force: true });
    }
  });
});

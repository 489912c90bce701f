import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { commandDependencies } from '../src/mux/commandOrder.js';
import { CommandBuffer, CommandBufferError, createContext, dispatch, Fence, KernelError, StateError, type Context, type DevicePtr, type Job } from '../src/index.js';
import { runBuffer } from './fixtures/runBuffer.js';
import { gateBytes, openAllGates, waitForAtLeast, waitForStarted } from './fixtures/gates.js';

/**
 * Commands of one buffer behave as if in order: dependent commands (overlapping memory, one of
 * them writing) never overlap, independent ones may, and dependent launches are chained on the
 * cores. Checked on the dependency graph itself, then through the real cores.
 */

let ctx: Context;
let job: Job;

beforeAll(async () => {
  ctx = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } });
  job = ctx.createJob();
  job.load(await ctx.createModule(new URL('./fixtures/muxOrderKernels.ts', import.meta.url)));
});

afterAll(async () => {
  await ctx?.destroy();
});

describe('commandDependencies', () => {
  it('links commands that share bytes with a write among them, and only those', () => {
    const a = ctx.memAlloc(32);
    const b = ctx.memAlloc(32);
    const c = ctx.memAlloc(32);
    const host = new Int32Array(4);
    const cb = new CommandBuffer(ctx)
      .write(a, 0, new Int32Array(2)) // 0: a[0, 8)
      .write(b, 0, new Int32Array(2)) // 1: b[0, 8)
      .read(a, 0, host.subarray(0, 1)) // 2: reads a[0, 4): after 0
      .read(a, 0, host.subarray(1, 2)) // 3: reads a[0, 4) again: after 0, not after the other read
      .copy(a, 4, b, 0, 4) // 4: reads a[4, 8), writes b[0, 4): after 0 and 1
      .fill(c, 0, 32, Int32Array.of(0)) // 5: independent of all
      .write(a, 0, new Int32Array(1)) // 6: overwrites what 2 and 3 read: after 0, 2, 3
      .read(b, 8, host.subarray(0, 1)); // 7: b[8, 12) is untouched, but the host bytes were filled by 2
    expect(commandDependencies(cb.commands)).toEqual([[], [], [0], [0], [0, 1], [], [0, 2, 3], [2]]);
  });

  it('treats a launch as writing each pointer from its offset to the end of its allocation', () => {
    const a = ctx.memAlloc(32);
    const cb = new CommandBuffer(ctx, job)
      .write(a, 0, new Int32Array(1)) // 0: a[0, 4)
      .write(a, 16, new Int32Array(1)) // 1: a[16, 20)
      .launch('order_add_one', { global: [4] }, a.add(8)) // 2: a[8, 32): after 1 only
      .read(a, 0, new Int32Array(1)); // 3: a[0, 4): after 0 only
    expect(commandDependencies(cb.commands)).toEqual([[], [], [1], [0]]);
  });

  it('makes a callback a barrier between what comes before and after it', () => {
    const a = ctx.memAlloc(8);
    const b = ctx.memAlloc(8);
    const cb = new CommandBuffer(ctx)
      .write(a, 0, new Int32Array(1))
      .write(b, 0, new Int32Array(1))
      .callback(() => {})
      .write(a, 4, new Int32Array(1))
      .write(b, 4, new Int32Array(1))
      .callback(() => {});
    expect(commandDependencies(cb.commands)).toEqual([[], [], [0, 1], [2], [2], [2, 3, 4]]);
  });
});

describe('CommandBuffer ordering on the cores', () => {
  it('starts an independent launch while an earlier one is still running', async () => {
    const gates = ctx.memAlloc(gateBytes(1));
    const marks = ctx.memAlloc(32 * 4);
    const g = ctx.hostView(gates, 'int32');
    const m = ctx.hostView(marks, 'int32');
    // 32 tasks in batches of 16: batch 0 on core 0 holds at the gate, batch 1 runs on core 1.
    const cb = new CommandBuffer(ctx, job).launch('order_hold', { global: [32] }, gates).launch('order_mark', { global: [32] }, marks);
    const fence = new Fence();
    dispatch(cb.finalize(), { fence });
    try {
      await waitForStarted(g, 1);
      const marked = await Promise.race([waitForAtLeast(m, 16, 1).then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 10_000))]);
      expect(marked).toBe(true);
    } finally {
      openAllGates(g);
    }
    await fence.wait();
    expect([...m]).toEqual(new Array(32).fill(1));
  });

  it('never starts a dependent launch before the launch it depends on has finished', async () => {
    const gates = ctx.memAlloc(gateBytes(1));
    const seen = ctx.memAlloc(32 * 4);
    const g = ctx.hostView(gates, 'int32');
    // The second launch reads the gate memory the first one is given, so it depends on it.
    const cb = new CommandBuffer(ctx, job).launch('order_hold', { global: [32] }, gates).launch('order_seen_gate', { global: [32] }, gates, seen);
    const fence = new Fence();
    dispatch(cb.finalize(), { fence });
    await waitForStarted(g, 1);
    // Give the second launch every chance to reach the idle core before the gate opens.
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    openAllGates(g);
    await fence.wait();
    expect([...ctx.hostView(seen, 'int32')]).toEqual(new Array(32).fill(1));
  });

  it('runs a chain of 100 dependent launches in order, each seeing what the one before wrote on every core', async () => {
    const a = ctx.memAlloc(64 * 4);
    const b = ctx.memAlloc(64 * 4);
    const cb = new CommandBuffer(ctx, job).fill(a, 0, 64 * 4, Int32Array.of(0));
    for (let i = 0; i < 100; i++) cb.launch('order_rotate_add', { global: [64] }, i % 2 === 0 ? a : b, i % 2 === 0 ? b : a);
    const out = new Int32Array(64);
    await runBuffer(cb.read(a, 0, out));
    expect([...out]).toEqual(new Array(64).fill(100));
  });

  it('does not run the launches chained after a failed one, and reports the failed one', async () => {
    const gates = ctx.memAlloc(gateBytes(1));
    const g = ctx.hostView(gates, 'int32');
    const data = ctx.memAlloc(16 * 4);
    ctx.hostView(data, 'int32').fill(0);
    const cb = new CommandBuffer(ctx, job)
      .launch('order_hold_then_throw', { global: [16] }, gates, data)
      .launch('order_add_one', { global: [16] }, data)
      .launch('order_add_one', { global: [16] }, data);
    const fence = new Fence();
    dispatch(cb.finalize(), { fence });
    await waitForStarted(g, 1);
    // The two launches after it are handed to the cores while it holds, so the cores must stop them.
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    openAllGates(g);
    const error = await fence.wait().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CommandBufferError);
    expect((error as CommandBufferError).message).toBe('command 0 (launch) of the command buffer failed: ' + ((error as CommandBufferError).cause as Error).message);
    expect((error as CommandBufferError).cause).toBeInstanceOf(KernelError);
    expect(((error as CommandBufferError).cause as Error).message).toMatch(/order boom after the gate/);
    expect([...ctx.hostView(data, 'int32')]).toEqual(new Array(16).fill(0));
  });

  it('fails its fence with the Context\'s StateError, without hanging, when the Context is destroyed while a chain waits on the cores', async () => {
    const other = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } });
    const j = other.createJob();
    j.load(await other.createModule(new URL('./fixtures/muxOrderKernels.ts', import.meta.url)));
    const gates = other.memAlloc(gateBytes(1));
    const seen = other.memAlloc(16 * 4);
    const cb = new CommandBuffer(other, j).launch('order_hold', { global: [32] }, gates);
    for (let i = 0; i < 10; i++) cb.launch('order_seen_gate', { global: [16] }, gates, seen);
    const fence = new Fence();
    dispatch(cb.finalize(), { fence });
    await waitForStarted(other.hostView(gates, 'int32'), 1);
    // The first launch never finishes (its gate stays shut); the ten after it wait on the cores.
    await other.destroy();
    const error = await fence.wait().then(
      () => undefined,
      (e: unknown) => e,
    );
    // The dispatch settles with the Context's own error, as everything outstanding does.
    expect(error).toEqual(new StateError('this Context was destroyed; create a new one with createContext() (pdist, cdist and l2Kernel without a context open a new default one themselves)'));
  });

  it('refuses a launch ordered after another Context\'s launch without holding a launch slot', async () => {
    const other = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 1 } });
    const j = other.createJob();
    j.load(await other.createModule(new URL('./fixtures/muxOrderKernels.ts', import.meta.url)));
    const track = { id: 0, label: 'test' };
    const foreign = await j.buildMap('order_add_one', 1).launchNow([other.memAlloc(4)], undefined, track);
    await foreign.done;
    const data = ctx.memAlloc(4);
    ctx.hostView(data, 'int32').fill(0);
    const map = job.buildMap('order_add_one', 1);
    // More refusals than there are launch slots: a slot held by each would leave none.
    for (let i = 0; i < 70; i++) {
      await expect(map.launchNow([data], foreign, track)).rejects.toThrow(new StateError("launch of 'order_add_one': it was ordered after a launch of another backend or Context"));
    }
    const handles = await Promise.all(Array.from({ length: 70 }, () => map.launchNow([data], undefined, track)));
    await Promise.all(handles.map((h) => h.done));
    expect(ctx.hostView(data, 'int32')[0]).toBe(70);
    await other.destroy();
  });

  it('draws its launches on its own track of an execution trace, with their batches on the cores', async () => {
    const data = ctx.memAlloc(64 * 4);
    const cb = new CommandBuffer(ctx, job).launch('order_add_one', { global: [64] }, data).launch('order_add_one', { global: [64] }, data).finalize();
    ctx.startTrace();
    await runBuffer(cb);
    const trace = ctx.stopTrace();
    const track = trace.traceEvents.find((e) => e.ph === 'M' && e.name === 'thread_name' && String(e.args?.name).startsWith('command buffer '));
    expect(track).toBeDefined();
    const launches = trace.traceEvents.filter((e) => e.ph === 'b' && e.cat === 'execute' && e.tid === track!.tid && e.name === 'order_add_one');
    expect(launches).toHaveLength(2);
    const ends = trace.traceEvents.filter((e) => e.ph === 'e' && e.cat === 'execute' && e.tid === track!.tid && e.name === 'order_add_one');
    expect(ends.map((e) => e.args?.outcome)).toEqual(['Idle', 'Idle']);
    const executes = new Set(launches.map((e) => e.args?.execute));
    const batches = trace.traceEvents.filter((e) => e.ph === 'X' && e.cat === 'batch' && executes.has(e.args?.execute));
    // 64 tasks in batches of 16, twice.
    expect(batches).toHaveLength(8);
    ctx.memFree(data);
  });

  it('gives the same memory as running the commands one by one, for any sequence', async () => {
    const WORDS = 8;
    const slot = fc.integer({ min: 0, max: 2 });
    const span = fc.tuple(fc.integer({ min: 0, max: WORDS - 1 }), fc.integer({ min: 1, max: WORDS })).map(([at, n]) => [at, Math.min(n, WORDS - at)] as const);
    const command = fc.oneof(
      fc.record({ kind: fc.constant('write' as const), dst: slot, span, value: fc.integer({ min: -50, max: 50 }) }),
      fc.record({ kind: fc.constant('fill' as const), dst: slot, span, value: fc.integer({ min: -50, max: 50 }) }),
      fc.record({ kind: fc.constant('copy' as const), src: slot, dst: slot, span, to: fc.integer({ min: 0, max: WORDS - 1 }) }),
      fc.record({ kind: fc.constant('read' as const), src: slot, span, to: fc.integer({ min: 0, max: WORDS - 1 }) }),
      fc.record({ kind: fc.constant('launch' as const), dst: slot, from: fc.integer({ min: 0, max: WORDS - 1 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 12 }), async (program) => {
        const ptrs: DevicePtr[] = [0, 1, 2].map(() => ctx.memAlloc(WORDS * 4));
        const model = [0, 1, 2].map(() => new Int32Array(WORDS));
        const host = new Int32Array(WORDS);
        const hostModel = new Int32Array(WORDS);
        for (const p of ptrs) ctx.hostView(p, 'int32').fill(0);
        const cb = new CommandBuffer(ctx, job);
        for (const c of program) {
          if (c.kind === 'write' || c.kind === 'fill') {
            const [at, n] = c.span;
            if (c.kind === 'write') cb.write(ptrs[c.dst]!, at * 4, new Int32Array(n).fill(c.value));
            else cb.fill(ptrs[c.dst]!, at * 4, n * 4, Int32Array.of(c.value));
            model[c.dst]!.fill(c.value, at, at + n);
          } else if (c.kind === 'copy') {
            const [at, n0] = c.span;
            const n = Math.min(n0, WORDS - c.to);
            cb.copy(ptrs[c.src]!, at * 4, ptrs[c.dst]!, c.to * 4, n * 4);
            model[c.dst]!.set(model[c.src]!.slice(at, at + n), c.to);
          } else if (c.kind === 'read') {
            const [at, n0] = c.span;
            const n = Math.min(n0, WORDS - c.to);
            cb.read(ptrs[c.src]!, at * 4, host.subarray(c.to, c.to + n));
            hostModel.set(model[c.src]!.slice(at, at + n), c.to);
          } else {
            cb.launch('order_add_one', { global: [WORDS - c.from] }, ptrs[c.dst]!.add(c.from * 4));
            for (let i = c.from; i < WORDS; i++) model[c.dst]![i]! += 1;
          }
        }
        await runBuffer(cb);
        ptrs.forEach((p, i) => expect([...ctx.hostView(p, 'int32')]).toEqual([...model[i]!]));
        expect([...host]).toEqual([...hostModel]);
        for (const p of ptrs) ctx.memFree(p);
      }),
      { numRuns: 40 },
    );
  });
});

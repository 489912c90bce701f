import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArgumentError, CommandBuffer, CommandBufferError, createContext, dispatch, Fence, KernelNotFoundError, OptionError, StateError, type Context, type Job } from '../src/index.js';
import { runBuffer } from './fixtures/runBuffer.js';

let ctx: Context;
let job: Job;

beforeAll(async () => {
  ctx = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } });
  job = ctx.createJob();
  job.load(await ctx.createModule(new URL('./fixtures/muxKernels.ts', import.meta.url)));
});

afterAll(async () => {
  await ctx?.destroy();
});

describe('CommandBuffer memory commands', () => {
  it('writes, fills, copies and reads regions in recording order', async () => {
    const a = ctx.memAlloc(16);
    const b = ctx.memAlloc(16);
    const out = new Int32Array(4);
    const cb = new CommandBuffer(ctx)
      .fill(a, 0, 16, Int32Array.of(7))
      .write(a, 4, Int32Array.of(1, 2))
      .copy(a, 0, b, 0, 16)
      .fill(a, 0, 16, Int32Array.of(0))
      .read(b, 0, out);
    await runBuffer(cb);
    expect(Array.from(out)).toEqual([7, 1, 2, 7]);
    expect(Array.from(ctx.hostView(a, 'int32'))).toEqual([0, 0, 0, 0]);
  });

  it('snapshots write data when recorded and reads host memory when run', async () => {
    const a = ctx.memAlloc(8);
    const data = Int32Array.of(5, 6);
    const out = new Int32Array(2);
    const cb = new CommandBuffer(ctx).write(a, 0, data).read(a, 0, out);
    data[0] = 99;
    expect(out[0]).toBe(0);
    await runBuffer(cb);
    expect(Array.from(out)).toEqual([5, 6]);
  });

  it('runs callbacks in order with the other commands, awaiting returned promises', async () => {
    const seen: string[] = [];
    const cb = new CommandBuffer(ctx)
      .callback(async () => {
        await new Promise((r) => setTimeout(r, 5));
        seen.push('a');
      })
      .callback(() => {
        seen.push('b');
      });
    await runBuffer(cb);
    expect(seen).toEqual(['a', 'b']);
  });
});

describe('CommandBuffer validation', () => {
  it.each<[string, (cb: CommandBuffer, p: ReturnType<Context['memAlloc']>) => unknown, Error]>([
    ['a write past the allocation', (cb, p) => cb.write(p, 12, Int32Array.of(1, 2)), new ArgumentError('write: region [12, 20) does not fit in the 16 bytes from the pointer to the end of its allocation')],
    ['a negative offset', (cb, p) => cb.fill(p, -4, 4, Int32Array.of(0)), new ArgumentError('fill: offset must be an integer ≥ 0, got -4')],
    ['a zero size', (cb, p) => cb.copy(p, 0, p, 8, 0), new ArgumentError('copy source: size must be an integer ≥ 1, got 0')],
    ['a copy destination past the end', (cb, p) => cb.copy(p, 0, p, 12, 8), new ArgumentError('copy destination: region [12, 20) does not fit in the 16 bytes from the pointer to the end of its allocation')],
    ['a fill size not a multiple of the pattern', (cb, p) => cb.fill(p, 0, 6, Int32Array.of(1)), new ArgumentError("fill: size 6 must be a multiple of the pattern's 4 bytes (and the pattern must not be empty)")],
    ['a read into a region past the end', (cb, p) => cb.read(p, 8, new Int32Array(3)), new ArgumentError('read: region [8, 20) does not fit in the 16 bytes from the pointer to the end of its allocation')],
    ['an unknown kernel', (cb) => cb.launch('nope', { global: [4] }), new KernelNotFoundError('nope', ['mux_count', 'mux_double', 'mux_throw_at'])],
    ['four dimensions', (cb) => cb.launch('mux_count', { global: [1, 1, 1, 1] }), new OptionError('launch: global must be an array of 1 to 3 sizes, got 4 dimensions')],
    ['a work-group size that does not divide the range', (cb) => cb.launch('mux_count', { global: [6, 2], local: [4, 1] }), new OptionError('launch: local[0] must be an integer ≥ 1 dividing global[0] = 6, got 4')],
    ['mismatched local dimensions', (cb) => cb.launch('mux_count', { global: [6, 2], local: [2] }), new OptionError('launch: local has 1 dimensions but global has 2; give one work-group size per dimension')],
  ])('rejects %s and leaves the buffer unchanged', (_, record, error) => {
    const p = ctx.memAlloc(16);
    const cb = new CommandBuffer(ctx, job).fill(p, 0, 16, Uint8Array.of(1));
    const before = cb.commands;
    expect(() => record(cb, p)).toThrow(error);
    expect(cb.commands).toEqual(before);
    expect(cb.state).toBe('recording');
  });

  it('rejects a pointer of another Context and a freed pointer', async () => {
    const other = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 1 } });
    try {
      const foreign = other.memAlloc(8);
      const cb = new CommandBuffer(ctx);
      expect(() => cb.fill(foreign, 0, 8, Uint8Array.of(0))).toThrow(new ArgumentError('fill: the device pointer belongs to another Context'));
      const freed = ctx.memAlloc(8);
      ctx.memFree(freed);
      expect(() => cb.write(freed, 0, Uint8Array.of(1))).toThrow(new ArgumentError('write: the device pointer was freed with memFree'));
      expect(cb.commands).toEqual([]);
    } finally {
      await other.destroy();
    }
  });

  it('refuses a launch on a buffer without a Job', () => {
    expect(() => new CommandBuffer(ctx).launch('mux_count', { global: [1] })).toThrow(new StateError('launch: this command buffer has no Job; create it with new CommandBuffer(ctx, job)'));
  });
});

describe('CommandBuffer lifecycle', () => {
  it('accepts a second finalize, refuses recording after finalize until reset', () => {
    const cb = new CommandBuffer(ctx).callback(() => {});
    cb.finalize();
    expect(() => cb.finalize()).not.toThrow();
    expect(cb.state).toBe('finalized');
    expect(() => cb.callback(() => {})).toThrow(new StateError('callback: the command buffer is finalized; call reset() to record again'));
    expect(cb.commands).toHaveLength(1);
    cb.reset();
    expect(cb.state).toBe('recording');
    expect(cb.commands).toEqual([]);
    cb.callback(() => {});
    expect(cb.commands).toHaveLength(1);
  });

  it('refuses to dispatch a buffer still recording, and one not yet complete', async () => {
    const cb = new CommandBuffer(ctx).callback(() => {});
    expect(() => dispatch(cb)).toThrow(new StateError('dispatch: the command buffer is still recording; call finalize() first'));
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const slow = new CommandBuffer(ctx).callback(() => gate).finalize();
    const fence = new Fence();
    dispatch(slow, { fence });
    expect(() => dispatch(slow)).toThrow(new StateError('dispatch: the command buffer is already dispatched and has not completed; dispatch it again once its fence completes'));
    expect(() => slow.reset()).toThrow(new StateError('reset: this command buffer is dispatched and has not completed; wait on its fence first'));
    open();
    await fence.wait();
    expect(slow.state).toBe('finalized');
  });

  it('dispatches a finalized buffer again after it completed', async () => {
    let runs = 0;
    const cb = new CommandBuffer(ctx).callback(() => void runs++).finalize();
    await runBuffer(cb);
    await runBuffer(cb);
    expect(runs).toBe(2);
  });
});

describe('CommandBuffer kernel launches', () => {
  it('runs a 3-D launch once per work-item and records the work-group size', async () => {
    const n = 4 * 3 * 2;
    const counts = ctx.memAlloc(n * 4);
    const cb = new CommandBuffer(ctx, job).launch('mux_count', { global: [4, 3, 2], local: [2, 3, 1] }, counts);
    const launch = cb.commands[0]!;
    expect(launch.kind === 'launch' && { global: launch.global, local: launch.local, taskCount: launch.taskCount }).toEqual({ global: [4, 3, 2], local: [2, 3, 1], taskCount: n });
    await runBuffer(cb);
    expect(Array.from(ctx.hostView(counts, 'int32'))).toEqual(new Array(n).fill(1));
  });

  it('orders a launch between the memory commands around it', async () => {
    const data = ctx.memAlloc(16);
    const out = new Int32Array(4);
    const cb = new CommandBuffer(ctx, job)
      .write(data, 0, Int32Array.of(1, 2, 3, 4))
      .launch('mux_double', { global: [4] }, data)
      .launch('mux_double', { global: [2, 2] }, data)
      .read(data, 0, out);
    await runBuffer(cb);
    expect(Array.from(out)).toEqual([4, 8, 12, 16]);
  });

  it('fails the fence with the failing command, skipping the rest', async () => {
    let after = false;
    const cb = new CommandBuffer(ctx, job)
      .launch('mux_throw_at', { global: [4] }, 2)
      .callback(() => void (after = true))
      .finalize();
    const fence = new Fence();
    dispatch(cb, { fence });
    const error = await fence.wait().then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(CommandBufferError);
    expect(error).toMatchObject({ reason: 'failed', commandIndex: 0, command: 'launch' });
    expect((error as Error).message).toMatch(/^command 0 \(launch\) of the command buffer failed: .*mux boom at 2/);
    expect(after).toBe(false);
    expect(fence.state).toBe('failed');
  });
});

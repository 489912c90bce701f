import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandBuffer, CommandBufferError, createContext, dispatch, Fence, OptionError, Semaphore, StateError, type Context } from '../src/index.js';

let ctx: Context;

beforeAll(async () => {
  ctx = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 1 } });
});

afterAll(async () => {
  await ctx?.destroy();
});

/** A finalized buffer whose one callback pushes `label` to `log`. */
function logging(log: string[], label: string): CommandBuffer {
  return new CommandBuffer(ctx).callback(() => void log.push(label)).finalize();
}

/** A finalized buffer whose callback waits until `open()` is called. */
function gated(): { cb: CommandBuffer; open: () => void } {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  return { cb: new CommandBuffer(ctx).callback(() => gate).finalize(), open };
}

function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(() => undefined, (e: unknown) => e);
}

describe('dispatch ordering', () => {
  it('starts a dispatch waiting on a semaphore only after a buffer dispatched later signals it', async () => {
    const log: string[] = [];
    const s = new Semaphore();
    const fence = new Fence();
    dispatch(logging(log, 'consumer'), { wait: [s], fence });
    await new Promise((r) => setTimeout(r, 10));
    expect(log).toEqual([]);
    expect(fence.state).toBe('pending');
    dispatch(logging(log, 'producer'), { signal: [s] });
    await fence.wait();
    expect(log).toEqual(['producer', 'consumer']);
    expect(s.state).toBe('signalled');
  });

  it('waits for every wait semaphore', async () => {
    const log: string[] = [];
    const a = new Semaphore();
    const b = new Semaphore();
    const fence = new Fence();
    dispatch(logging(log, 'join'), { wait: [a, b], fence });
    dispatch(logging(log, 'a'), { signal: [a] });
    expect(await fence.tryWait(10)).toBe(false);
    dispatch(logging(log, 'b'), { signal: [b] });
    await fence.wait();
    expect(log).toEqual(['a', 'b', 'join']);
  });

  it('completes commands, then the dispatch callback, then signal semaphores, then the fence', async () => {
    const log: string[] = [];
    const s = new Semaphore();
    const fence = new Fence();
    const cb = new CommandBuffer(ctx).callback(() => void log.push(`command; semaphore ${s.state}; fence ${fence.state}`)).finalize();
    dispatch(cb, {
      signal: [s],
      fence,
      callback: (error) => log.push(`callback ${String(error)}; semaphore ${s.state}; fence ${fence.state}`),
    });
    await fence.wait();
    log.push(`done; semaphore ${s.state}; fence ${fence.state}`);
    expect(log).toEqual([
      'command; semaphore unsignalled; fence pending',
      'callback undefined; semaphore unsignalled; fence pending',
      'done; semaphore signalled; fence complete',
    ]);
  });

  it('signals semaphores before the fence completes', async () => {
    const s = new Semaphore();
    const fence = new Fence();
    let seen: string | undefined;
    dispatch(new CommandBuffer(ctx).finalize(), { signal: [s], fence });
    // Registered before completion, so it runs as soon as the fence wakes its waiters.
    await fence.wait().then(() => (seen = s.state));
    expect(seen).toBe('signalled');
  });

  it('does not order buffers without semaphores', async () => {
    const log: string[] = [];
    const first = gated();
    const f1 = new Fence();
    const f2 = new Fence();
    dispatch(first.cb, { fence: f1 });
    dispatch(logging(log, 'second'), { fence: f2 });
    await f2.wait();
    expect(log).toEqual(['second']);
    expect(f1.state).toBe('pending');
    first.open();
    await f1.wait();
  });

  it('completes a chain of 10,000 buffers, each waiting on the previous one, in order', async () => {
    const n = 10_000;
    const order: number[] = [];
    const ptr = ctx.memAlloc(4);
    const semaphores = Array.from({ length: n }, () => new Semaphore());
    const fence = new Fence();
    // Dispatched last to first, so only the semaphores can produce the order.
    for (let i = n - 1; i >= 0; i--) {
      const cb = new CommandBuffer(ctx);
      if (i % 2 === 0) cb.callback(() => void order.push(i));
      else cb.fill(ptr, 0, 4, Int32Array.of(i)).callback(() => void order.push(i));
      dispatch(cb.finalize(), { wait: i === 0 ? [] : [semaphores[i - 1]!], signal: [semaphores[i]!], ...(i === n - 1 ? { fence } : {}) });
    }
    await fence.wait();
    expect(order).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(ctx.hostView(ptr, 'int32')[0]).toBe(n - 1);
  });
});

describe('dispatch failure', () => {
  it('fails the fence, the callback and the signal semaphores of a failed buffer', async () => {
    const s = new Semaphore();
    const fence = new Fence();
    const seen: unknown[] = [];
    const cb = new CommandBuffer(ctx).callback(() => {
      throw new Error('host boom');
    }).finalize();
    dispatch(cb, { signal: [s], fence, callback: (e) => seen.push(e) });
    const error = await failure(fence.wait());
    expect(error).toBeInstanceOf(CommandBufferError);
    expect((error as Error).message).toBe('command 0 (callback) of the command buffer failed: host boom');
    expect(error).toMatchObject({ reason: 'failed', commandIndex: 0, command: 'callback' });
    expect(((error as Error).cause as Error).message).toBe('host boom');
    expect(seen).toEqual([error]);
    expect(s.state).toBe('failed');
    expect(s.error).toBe(error);
    expect(fence.error).toBe(error);
  });

  it('propagates a failure down a chain; waiting buffers do not run', async () => {
    const ran: string[] = [];
    const s1 = new Semaphore();
    const s2 = new Semaphore();
    const f2 = new Fence();
    const f3 = new Fence();
    dispatch(logging(ran, 'third'), { wait: [s2], fence: f3 });
    dispatch(logging(ran, 'second'), { wait: [s1], signal: [s2], fence: f2 });
    dispatch(new CommandBuffer(ctx).callback(() => Promise.reject(new Error('first failed'))).finalize(), { signal: [s1] });
    const e2 = await failure(f2.wait());
    const e3 = await failure(f3.wait());
    expect(ran).toEqual([]);
    expect(e2).toMatchObject({ reason: 'upstream' });
    expect((e2 as Error).message).toBe('the command buffer did not run: a semaphore it waited on failed (command 0 (callback) of the command buffer failed: first failed)');
    expect(e3).toMatchObject({ reason: 'upstream' });
    expect(((e3 as Error).cause as Error).message).toBe((e2 as Error).message);
    expect(s2.state).toBe('failed');
  });

  it('propagates a failure along 10,000 waiting buffers without running any', async () => {
    const n = 10_000;
    let ran = 0;
    const semaphores = Array.from({ length: n }, () => new Semaphore());
    const fence = new Fence();
    for (let i = 1; i < n; i++) {
      const cb = new CommandBuffer(ctx).callback(() => void ran++).finalize();
      dispatch(cb, { wait: [semaphores[i - 1]!], signal: [semaphores[i]!], ...(i === n - 1 ? { fence } : {}) });
    }
    dispatch(new CommandBuffer(ctx).callback(() => {
      throw new Error('root');
    }).finalize(), { signal: [semaphores[0]!] });
    expect(await failure(fence.wait())).toMatchObject({ reason: 'upstream' });
    expect(ran).toBe(0);
  });

  it('runs a buffer waiting on a semaphore that was already signalled', async () => {
    const log: string[] = [];
    const s = new Semaphore();
    const f1 = new Fence();
    dispatch(logging(log, 'first'), { signal: [s], fence: f1 });
    await f1.wait();
    const f2 = new Fence();
    dispatch(logging(log, 'second'), { wait: [s], fence: f2 });
    await f2.wait();
    expect(log).toEqual(['first', 'second']);
  });
});

describe('Fence', () => {
  it('tryWait(0) polls: false while pending, true once complete', async () => {
    const { cb, open } = gated();
    const fence = new Fence();
    dispatch(cb, { fence });
    expect(await fence.tryWait(0)).toBe(false);
    open();
    await fence.wait();
    expect(await fence.tryWait(0)).toBe(true);
  });

  it('tryWait(timeout) times out on a pending dispatch and resolves early on completion', async () => {
    const { cb, open } = gated();
    const fence = new Fence();
    dispatch(cb, { fence });
    expect(await fence.tryWait(20)).toBe(false);
    const waiting = fence.tryWait(60_000);
    open();
    expect(await waiting).toBe(true);
  });

  it('tryWait rejects with the failure of a failed dispatch', async () => {
    const fence = new Fence();
    dispatch(new CommandBuffer(ctx).callback(() => {
      throw new Error('x');
    }).finalize(), { fence });
    expect(await failure(fence.wait())).toBeInstanceOf(CommandBufferError);
    expect(await failure(fence.tryWait(0))).toBe(fence.error);
  });

  it('rejects a bad timeout', async () => {
    expect(await failure(new Fence().tryWait(-1))).toEqual(new OptionError('timeoutMs must be a finite number >= 0, got -1'));
  });

  it('belongs to one dispatch at a time and is reusable after reset', async () => {
    const { cb, open } = gated();
    const fence = new Fence();
    dispatch(cb, { fence });
    const other = new CommandBuffer(ctx).finalize();
    expect(() => dispatch(other, { fence })).toThrow(new StateError('dispatch: the fence is pending with another dispatch; reset() it after that one completes, or use a new Fence'));
    expect(other.state).toBe('finalized');
    expect(() => fence.reset()).toThrow(new StateError('Fence.reset: a dispatch holding this fence is still pending; wait() for it first'));
    open();
    await fence.wait();
    fence.reset();
    expect(fence.state).toBe('unused');
    dispatch(other, { fence });
    await fence.wait();
    expect(fence.state).toBe('complete');
  });
});

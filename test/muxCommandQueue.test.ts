import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArgumentError, COMMAND_QUEUE_DEFAULTS, CommandBufferError, CommandQueue, createContext, OptionError, StateError, type Context, type Job } from '../src/index.js';

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

/** A promise and the function that resolves it: holds a queue's work until the test opens it. */
function gate(): { wait: () => Promise<void>; open: () => void } {
  let open!: () => void;
  const p = new Promise<void>((r) => (open = r));
  return { wait: () => p, open };
}

function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(() => undefined, (e: unknown) => e);
}

/** V8's gc(), exposed at run time (the flag only takes effect for contexts created afterwards). */
function fullGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

describe('CommandQueue batching', () => {
  it('runs a dependent chain write → launch → launch → read as one command buffer and has the data after finish()', async () => {
    const data = ctx.memAlloc(16);
    const out = new Int32Array(4);
    const q = new CommandQueue(ctx, job)
      .enqueueWrite(data, 0, Int32Array.of(1, 2, 3, 4))
      .enqueueLaunch('mux_double', { global: [4] }, data)
      .enqueueLaunch('mux_double', { global: [2, 2] }, data)
      .enqueueRead(data, 0, out);
    expect(q.queued).toBe(4);
    q.flush();
    expect([q.queued, q.inFlight]).toEqual([0, 1]);
    await q.finish();
    expect(Array.from(out)).toEqual([4, 8, 12, 16]);
    expect(q.inFlight).toBe(0);
  });

  it('runs copies and fills in enqueue order with the other commands', async () => {
    const a = ctx.memAlloc(16);
    const b = ctx.memAlloc(16);
    const out = new Int32Array(4);
    const q = new CommandQueue(ctx, job)
      .enqueueFill(a, 0, 16, Int32Array.of(3))
      .enqueueLaunch('mux_double', { global: [4] }, a)
      .enqueueCopy(a, 0, b, 0, 8)
      .enqueueFill(b, 8, 8, Int32Array.of(-1))
      .enqueueRead(b, 0, out);
    await q.finish();
    expect(Array.from(out)).toEqual([6, 6, -1, -1]);
  });

  it('a blocking read flushes the queue and resolves with the data in the host array', async () => {
    const data = ctx.memAlloc(8);
    const out = new Int32Array(2);
    const q = new CommandQueue(ctx, job).enqueueWrite(data, 0, Int32Array.of(5, 6)).enqueueLaunch('mux_double', { global: [2] }, data);
    const done = q.enqueueRead(data, 0, out, { blocking: true });
    expect(done).toBeInstanceOf(Promise);
    expect([q.queued, q.inFlight]).toEqual([0, 1]);
    await done;
    expect(Array.from(out)).toEqual([10, 12]);
  });

  it('submits nothing until a flush: enqueued commands wait in the open buffer', async () => {
    const log: string[] = [];
    const q = new CommandQueue(ctx).enqueueCallback(() => void log.push('a')).enqueueCallback(() => void log.push('b'));
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual([]);
    expect([q.queued, q.inFlight]).toEqual([2, 0]);
    q.flush();
    q.flush(); // nothing open: a no-op
    expect(q.inFlight).toBe(1);
    await q.finish();
    expect(log).toEqual(['a', 'b']);
  });

  it('runs flushed buffers in order without the host waiting between them', async () => {
    const log: string[] = [];
    const first = gate();
    const q = new CommandQueue(ctx).enqueueCallback(async () => {
      await first.wait();
      log.push('first');
    });
    q.flush();
    q.enqueueCallback(() => void log.push('second')).flush();
    q.enqueueCallback(() => void log.push('third')).flush();
    expect(q.inFlight).toBe(3);
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual([]);
    first.open();
    await q.finish();
    expect(log).toEqual(['first', 'second', 'third']);
  });

  it('flushes by itself when the open buffer reaches maxBatch commands', async () => {
    const hold = gate();
    const q = new CommandQueue(ctx, undefined, { maxBatch: 3 });
    q.enqueueCallback(() => hold.wait()).enqueueCallback(() => {});
    expect([q.queued, q.inFlight]).toEqual([2, 0]);
    q.enqueueCallback(() => {});
    expect([q.queued, q.inFlight]).toEqual([0, 1]);
    q.enqueueCallback(() => {}).enqueueCallback(() => {}).enqueueCallback(() => {}).enqueueCallback(() => {});
    expect([q.queued, q.inFlight]).toEqual([1, 2]);
    hold.open();
    await q.finish();
    expect([q.queued, q.inFlight]).toEqual([0, 0]);
  });

  it('completes 10,000 enqueued commands in order and lets their buffers go', async () => {
    const gc = fullGc();
    for (const maxBatch of [1, COMMAND_QUEUE_DEFAULTS.maxBatch]) {
      const n = 10_000;
      const order: number[] = [];
      let collected = 0;
      // A FinalizationRegistry, not WeakRefs: creating or dereferencing a WeakRef keeps its target
      // alive for the rest of the job, which would blur what the queue itself retains.
      const registry = new FinalizationRegistry(() => void collected++);
      const q = new CommandQueue(ctx, undefined, { maxBatch });
      for (let i = 0; i < n; i++) {
        const payload = { i };
        registry.register(payload, i);
        q.enqueueCallback(() => void order.push(payload.i));
      }
      await q.finish();
      expect(order).toEqual(Array.from({ length: n }, (_, i) => i));
      expect(q.inFlight).toBe(0);
      // Every payload is reachable only through a command's callback, so once no command buffer
      // holding it is retained a full GC collects it; finalizers run in later turns of the loop.
      for (let round = 0; round < 200 && collected < n; round++) {
        await new Promise((r) => setImmediate(r));
        gc();
      }
      expect(collected).toBe(n);
      registry.unregister(q); // keeps the registry alive until here
    }
  });
});

describe('CommandQueue failure', () => {
  it('fails finish() with the first CommandBufferError; the rest of the chain does not run', async () => {
    const ran: string[] = [];
    const q = new CommandQueue(ctx, job)
      .enqueueCallback(() => void ran.push('before'))
      .enqueueLaunch('mux_throw_at', { global: [4] }, 2)
      .enqueueCallback(() => void ran.push('same buffer'));
    q.flush();
    q.enqueueCallback(() => void ran.push('next buffer')).flush();
    q.enqueueCallback(() => void ran.push('last buffer'));
    const error = await failure(q.finish());
    expect(error).toBeInstanceOf(CommandBufferError);
    expect(error).toMatchObject({ reason: 'failed', commandIndex: 1, command: 'launch' });
    expect((error as Error).message).toMatch(/^command 1 \(launch\) of the command buffer failed: .*mux boom at 2/);
    expect(ran).toEqual(['before']);
    expect(q.failure).toBe(error);
    expect(q.inFlight).toBe(0);
  });

  it('stays failed: enqueues and flush throw a StateError naming the failure, finish() rejects again, until reset()', async () => {
    const q = new CommandQueue(ctx).enqueueCallback(() => {}).enqueueCallback(() => {
      throw new Error('host boom');
    });
    const error = await failure(q.finish());
    const refused = new StateError('enqueueCallback: the queue failed earlier (command 1 (callback) of the command buffer failed: host boom); call reset() after finish() to use it again, or create a new CommandQueue');
    expect(() => q.enqueueCallback(() => {})).toThrow(refused);
    expect(() => q.flush()).toThrow(new StateError(refused.message.replace('enqueueCallback', 'flush')));
    expect(await failure(q.finish())).toBe(error);
    const out = new Int32Array(1);
    expect(await failure(q.enqueueRead(ctx.memAlloc(4), 0, out, { blocking: true }))).toEqual(new StateError(refused.message.replace('enqueueCallback', 'enqueueRead')));

    q.reset();
    expect(q.failure).toBeUndefined();
    let ran = false;
    await q.enqueueCallback(() => void (ran = true)).finish();
    expect(ran).toBe(true);
  });

  it('rejects a blocking read when an earlier command failed', async () => {
    const data = ctx.memAlloc(4);
    const q = new CommandQueue(ctx, job).enqueueLaunch('mux_throw_at', { global: [1] }, 0);
    const error = await failure(q.enqueueRead(data, 0, new Int32Array(1), { blocking: true }));
    expect(error).toMatchObject({ reason: 'failed', commandIndex: 0, command: 'launch' });
  });

  it('refuses reset() while submitted buffers are in flight', async () => {
    const hold = gate();
    const q = new CommandQueue(ctx).enqueueCallback(() => hold.wait());
    q.flush();
    expect(() => q.reset()).toThrow(new StateError('CommandQueue.reset: 1 submitted command buffer(s) have not completed; await finish() first'));
    hold.open();
    await q.finish();
    q.reset();
  });

  it('reset() drops commands not yet submitted', async () => {
    let ran = false;
    const q = new CommandQueue(ctx).enqueueCallback(() => void (ran = true));
    q.reset();
    expect(q.queued).toBe(0);
    await q.finish();
    expect(ran).toBe(false);
  });
});

describe('CommandQueue validation', () => {
  it.each<[string, unknown, string]>([
    ['zero', 0, 'maxBatch must be an integer in [1, 1048576], got 0'],
    ['a fraction', 1.5, 'maxBatch must be an integer in [1, 1048576], got 1.5'],
    ['too many', 2 ** 20 + 1, 'maxBatch must be an integer in [1, 1048576], got 1048577'],
    ['a string', '8', "maxBatch must be an integer in [1, 1048576], got '8'"],
  ])('rejects a maxBatch of %s', (_, maxBatch, message) => {
    expect(() => new CommandQueue(ctx, job, { maxBatch: maxBatch as number })).toThrow(new OptionError(message));
  });

  it('defaults maxBatch to 256', () => {
    expect(new CommandQueue(ctx).maxBatch).toBe(256);
    expect(COMMAND_QUEUE_DEFAULTS).toEqual({ maxBatch: 256 });
  });

  it('passes on a recording error and leaves the queue unchanged', async () => {
    const p = ctx.memAlloc(8);
    const out = new Int32Array(2);
    const q = new CommandQueue(ctx, job).enqueueWrite(p, 0, Int32Array.of(1, 2));
    expect(() => q.enqueueWrite(p, 4, Int32Array.of(1, 2))).toThrow(new ArgumentError('write: region [4, 12) does not fit in the 8 bytes from the pointer to the end of its allocation'));
    expect(() => q.enqueueLaunch('mux_double', { global: [0] }, p)).toThrow(new OptionError('launch: global[0] must be an integer ≥ 1, got 0'));
    expect(() => q.enqueueCallback(42 as never)).toThrow(new ArgumentError('enqueueCallback: fn must be a function to run as a command, got 42'));
    expect(await failure(q.enqueueRead(p, 4, new Int32Array(2), { blocking: true }))).toEqual(new ArgumentError('read: region [4, 12) does not fit in the 8 bytes from the pointer to the end of its allocation'));
    expect([q.queued, q.inFlight]).toEqual([1, 0]);
    await q.enqueueRead(p, 0, out, { blocking: true });
    expect(Array.from(out)).toEqual([1, 2]);
  });

  it('refuses a launch on a queue without a Job', () => {
    expect(() => new CommandQueue(ctx).enqueueLaunch('mux_count', { global: [1] })).toThrow(new StateError('enqueueLaunch: this queue has no Job; create it with new CommandQueue(ctx, job)'));
  });

  it('types a blocking read as a promise and a non-blocking one as the queue', () => {
    const q = new CommandQueue(ctx);
    const p = ctx.memAlloc(4);
    const blocking: Promise<void> = q.enqueueRead(p, 0, new Int32Array(1), { blocking: true });
    const chained: CommandQueue = q.enqueueRead(p, 0, new Int32Array(1));
    expect(chained).toBe(q);
    return blocking;
  });
});

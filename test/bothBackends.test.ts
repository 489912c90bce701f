import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ArgumentError,
  CommandBuffer,
  createContext,
  dispatch,
  Fence,
  KernelError,
  LocalityMode,
  MaxTaskCount,
  NDArray,
  PxlError,
  Result,
  StateError,
  UnsupportedError,
  type Context,
  type DevicePtr,
  type Job,
  type KernelArg,
  type KernelMap,
} from '../src/index.js';
import { gpu } from './fixtures/wgslGpu.js';

/**
 * The runtime's behaviour, one set of tests over both backends: exactly-once execution,
 * arguments, lifecycle states and progress, cancellation, errors and streams. Kernels carry a
 * JavaScript and a WGSL body (fixtures/wgslKernels.ts, fixtures/bothKernels.ts), so the same Maps
 * run unchanged on MU cores and on the GPU. Only the host API is used: memory moves with
 * copyToDevice and copyFromDevice, which both backends have.
 *
 * Without a WebGPU adapter the webgpu half is skipped with a message that says what to install
 * (fixtures/wgslGpu.ts); in CI it runs anyway and fails.
 */

interface BackendCase {
  readonly name: 'cpu' | 'webgpu';
  readonly run: boolean;
  readonly create: () => Promise<Context>;
}

const BACKENDS: readonly BackendCase[] = [
  { name: 'cpu', run: true, create: () => createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } }) },
  { name: 'webgpu', run: gpu.run, create: () => createContext({ backend: 'webgpu' }) },
];

/** Enough busy work that a launch is still running when the test looks at it (hundreds of ms on either backend here). */
const SLOW = { tasks: MaxTaskCount, spin: 1000 } as const;

for (const backend of BACKENDS) {
  describe.runIf(backend.run)(`the runtime on the ${backend.name} backend`, () => {
    let ctx: Context;
    let job: Job;

    beforeAll(async () => {
      ctx = await backend.create();
      job = ctx.createJob();
      job.load(await ctx.createModule(new URL('./fixtures/wgslKernels.ts', import.meta.url)));
      job.load(await ctx.createModule(new URL('./fixtures/bothKernels.ts', import.meta.url)));
    });

    afterAll(async () => {
      await ctx?.destroy();
    });

    async function read<T extends Uint32Array | Int32Array | Float32Array>(ptr: DevicePtr, out: T): Promise<T> {
      await ctx.copyFromDevice(out, ptr);
      return out;
    }

    async function zeroed(bytes: number): Promise<DevicePtr> {
      const ptr = ctx.memAlloc(bytes);
      await ctx.copyToDevice(ptr, new Uint8Array(bytes));
      return ptr;
    }

    it('reports its backend', () => {
      expect(ctx.getAttribute('backend')).toBe(backend.name);
    });

    describe('exactly-once execution', () => {
      it('runs every task index exactly once for random taskCount, batchSize and locality mode', async () => {
        const max = 5000;
        const hits = ctx.memAlloc(4 * max);
        await fc.assert(
          fc.asyncProperty(
            fc.integer({ min: 1, max }),
            fc.integer({ min: 1, max: 400 }),
            fc.constantFrom(LocalityMode.CompactMode, LocalityMode.SpreadMode),
            async (taskCount, batchSize, mode) => {
              await ctx.copyToDevice(hits, new Uint32Array(max));
              const map = job.buildMap('count_hits', taskCount).setBatchSize(batchSize).setLocalityMode(mode);
              expect(await map.execute(hits)).toBe(Result.Success);
              await map.synchronize();
              const counts = await read(hits, new Uint32Array(max));
              expect(counts.subarray(0, taskCount).every((c) => c === 1)).toBe(true);
              expect(counts.subarray(taskCount).every((c) => c === 0)).toBe(true);
              const batches = Math.ceil(taskCount / batchSize);
              expect(map.getProgress()).toEqual({ target: batches, issued: batches, done: batches });
            },
          ),
          { numRuns: 30 },
        );
        ctx.memFree(hits);
      });

      it('runs each of several queued executes once', async () => {
        const hits = await zeroed(4 * 300);
        const map = job.buildMap('count_hits', 300).setBatchSize(7);
        for (let k = 0; k < 12; k++) await map.execute(hits);
        await map.synchronize();
        expect((await read(hits, new Uint32Array(300))).every((c) => c === 12)).toBe(true);
        ctx.memFree(hits);
      });

      it('runs MaxTaskCount tasks exactly once', async () => {
        const hits = await zeroed(4 * MaxTaskCount);
        const map = job.buildMap('count_hits', MaxTaskCount).setBatchSize(64);
        await map.execute(hits);
        await map.synchronize();
        expect((await read(hits, new Uint32Array(MaxTaskCount))).every((c) => c === 1)).toBe(true);
        ctx.memFree(hits);
      });
    });

    describe('arguments', () => {
      it('gives each task its index and the task count', async () => {
        const out = ctx.memAlloc(4 * 2 * 77);
        const map = job.buildMap('task_info', 77).setBatchSize(5);
        await map.execute(out);
        await map.synchronize();
        expect(Array.from(await read(out, new Uint32Array(2 * 77)))).toEqual(Array.from({ length: 77 }, (_, t) => [t, 77]).flat());
        ctx.memFree(out);
      });

      it('passes scalar, integer, boolean and object constants', async () => {
        const out = ctx.memAlloc(4 * 7);
        const map = job.buildMap('echo_constants', 4).setBatchSize(16);
        await map.execute(-0.125, -123456, 4_000_000_000, true, { x: 3.5, k: 9, on: false }, out);
        await map.synchronize();
        expect(Array.from(await read(out, new Float32Array(7)))).toEqual([-0.125, -123456, 4_000_000_000, 1, 3.5, 9, 0]);
        ctx.memFree(out);
      });

      it('addresses a device pointer from its offset into the allocation', async () => {
        const out = await zeroed(4 * 8);
        const map = job.buildMap('put_count', 3);
        await map.execute(out.add(8), 5);
        await map.synchronize();
        expect(Array.from(await read(out, new Uint32Array(8)))).toEqual([0, 0, 5, 5, 5, 0, 0, 0]);
        ctx.memFree(out);
      });

      it('slices NDArrays along their leading dimension for task kernels, from any offset', async () => {
        const tasks = 5;
        const cube = ctx.memAlloc(4 * (2 + tasks * 12));
        await ctx.copyToDevice(cube, Int32Array.from({ length: 2 + tasks * 12 }, (_, k) => k * k));
        const out = ctx.memAlloc(4 * 5 * tasks);
        const map = job.buildMap('view_info', tasks).setBatchSize(2);
        await map.execute(new NDArray(cube.add(8), 'int32', [tasks, 3, 4]), out);
        await map.synchronize();
        // Task t's slice starts at element 2 + 12t of the allocation and has shape [3, 4].
        const expected = Array.from({ length: tasks }, (_, t) => [(2 + 12 * t) ** 2, 12, 3, 4, 1]).flat();
        expect(Array.from(await read(out, new Int32Array(5 * tasks)))).toEqual(expected);
        ctx.memFree(cube);
        ctx.memFree(out);
      });

      it('reads one NDArray and writes another in one launch', async () => {
        const rows = 33;
        const x = ctx.memAlloc(4 * rows * 6);
        const y = ctx.memAlloc(4 * rows * 6);
        await ctx.copyToDevice(x, Float32Array.from({ length: rows * 6 }, (_, k) => k % 11));
        await ctx.copyToDevice(y, new Float32Array(rows * 6).fill(1));
        const map = job.buildMap('axpy_rows', rows).setBatchSize(4);
        await map.execute(new NDArray(x, 'float32', [rows, 6]), new NDArray(y, 'float32', [rows, 6]), -2);
        await map.synchronize();
        expect(Array.from(await read(y, new Float32Array(rows * 6)))).toEqual(Array.from({ length: rows * 6 }, (_, k) => 1 - 2 * (k % 11)));
        ctx.memFree(x);
        ctx.memFree(y);
      });

      it('passes NDArrays whole to batch kernels', async () => {
        const out = ctx.memAlloc(4 * 50);
        const map = job.buildMap('whole_sizes', 50).setBatchSize(8);
        await map.execute(new NDArray(out, 'uint32', [50]));
        await map.synchronize();
        expect(Array.from(await read(out, new Uint32Array(50)))).toEqual(new Array(50).fill(50));
        ctx.memFree(out);
      });

      it('rejects the execute itself for a pointer of another Context, and the Map stays usable', async () => {
        const foreign = await createContext({ topology: { coresPerCluster: 1 } });
        const out = await zeroed(4 * 4);
        try {
          const map = job.buildMap('put_count', 4);
          await expect(map.execute(foreign.memAlloc(16), 1)).rejects.toBeInstanceOf(ArgumentError);
          expect(map.getExecuteStatus()).toBe('Idle');
          await map.execute(out, 2);
          await map.synchronize();
          expect(Array.from(await read(out, new Uint32Array(4)))).toEqual([2, 2, 2, 2]);
        } finally {
          ctx.memFree(out);
          await foreign.destroy();
        }
      });
    });

    describe('lifecycle', () => {
      it('is Idle with empty progress before the first execute', () => {
        const map = job.buildMap('count_hits', 4);
        expect(map.getExecuteStatus()).toBe('Idle');
        expect(map.getProgress()).toEqual({ target: 0, issued: 0, done: 0 });
      });

      it('leaves Idle at execute, runs, and is Idle with full progress after synchronize', async () => {
        const hits = await zeroed(4 * SLOW.tasks);
        const map = job.buildMap('slow_hits', SLOW.tasks).setBatchSize(4096);
        const seen = new Set<string>();
        const accepted = map.execute(hits, 10);
        seen.add(map.getExecuteStatus());
        expect(await accepted).toBe(Result.Success);
        seen.add(map.getExecuteStatus());
        await map.synchronize();
        expect(map.getExecuteStatus()).toBe('Idle');
        expect(seen.has('Idle')).toBe(false);
        for (const s of seen) expect(['HostInit', 'DeviceInit', 'Request', 'Waiting', 'DeviceFinalize', 'HostFinalize']).toContain(s);
        const batches = Math.ceil(SLOW.tasks / 4096);
        expect(map.getProgress()).toEqual({ target: batches, issued: batches, done: batches });
        ctx.memFree(hits);
      });

      it('calls the completion callback once per execute, in HostFinalize', async () => {
        const hits = await zeroed(4 * 10);
        const states: string[] = [];
        const map = job.buildMap('count_hits', 10);
        map.setCompletionCallback(() => states.push(map.getExecuteStatus()));
        for (let k = 0; k < 3; k++) await map.execute(hits);
        await map.synchronize();
        expect(states).toEqual(['HostFinalize', 'HostFinalize', 'HostFinalize']);
        ctx.memFree(hits);
      });

      it('counts issued and done batches while a launch runs', async () => {
        const hits = await zeroed(4 * SLOW.tasks);
        const map = job.buildMap('slow_hits', SLOW.tasks).setBatchSize(1);
        await map.execute(hits, SLOW.spin);
        const during = map.getProgress();
        expect(during.target).toBe(SLOW.tasks);
        expect(during.done).toBeLessThanOrEqual(during.issued);
        expect(during.issued).toBeLessThanOrEqual(SLOW.tasks);
        await map.cancel();
        ctx.memFree(hits);
      });

      it('refuses a destroyed Job, returns its Subs, and refuses everything once the Context is destroyed', async () => {
        const other = await backend.create();
        const j = other.createJob();
        j.load(await other.createModule(new URL('./fixtures/bothKernels.ts', import.meta.url)));
        expect(other.availableSubCount).toBe(0);
        other.destroyJob(j);
        expect(other.availableSubCount).toBe(other.getAttribute('subCount'));
        expect(() => j.buildMap('put_count', 1)).toThrow(StateError);
        await other.destroy();
        expect(() => other.memAlloc(4)).toThrow(StateError);
        expect(() => other.createJob()).toThrow(StateError);
      });
    });

    describe('cancel', () => {
      it('stops a launch between batches: what ran ran once, the rest never runs, and the Map is Cancelled', async () => {
        const hits = await zeroed(4 * SLOW.tasks);
        let completed = 0;
        const map = job.buildMap('slow_hits', SLOW.tasks).setBatchSize(1).setCompletionCallback(() => completed++);
        await map.execute(hits, SLOW.spin);
        await map.cancel();
        expect(map.getExecuteStatus()).toBe('Cancelled');
        const progress = map.getProgress();
        expect(progress.done).toBe(progress.issued);
        expect(progress.done).toBeLessThan(SLOW.tasks);
        const counts = await read(hits, new Uint32Array(SLOW.tasks));
        expect(counts.every((c) => c <= 1)).toBe(true);
        expect(counts.reduce((a, c) => a + c, 0)).toBe(progress.done);
        expect(completed).toBe(0);
        ctx.memFree(hits);
      });

      it('also skips executes queued behind the running one', async () => {
        const hits = await zeroed(4 * SLOW.tasks);
        const map = job.buildMap('slow_hits', SLOW.tasks).setBatchSize(1);
        for (let k = 0; k < 3; k++) await map.execute(hits, SLOW.spin);
        await map.cancel();
        expect(map.getExecuteStatus()).toBe('Cancelled');
        expect((await read(hits, new Uint32Array(SLOW.tasks))).every((c) => c <= 1)).toBe(true);
        ctx.memFree(hits);
      });

      it('leaves the Map reusable: the next execute runs every task once and ends Idle', async () => {
        const hits = await zeroed(4 * SLOW.tasks);
        let completed = 0;
        const map = job.buildMap('slow_hits', SLOW.tasks).setBatchSize(1).setCompletionCallback(() => completed++);
        await map.execute(hits, SLOW.spin);
        await map.cancel();
        expect(map.getExecuteStatus()).toBe('Cancelled');
        await ctx.copyToDevice(hits, new Uint32Array(SLOW.tasks));
        expect(await map.execute(hits, 0)).toBe(Result.Success);
        await map.synchronize();
        expect(map.getExecuteStatus()).toBe('Idle');
        expect(map.getProgress()).toEqual({ target: SLOW.tasks, issued: SLOW.tasks, done: SLOW.tasks });
        expect((await read(hits, new Uint32Array(SLOW.tasks))).every((c) => c === 1)).toBe(true);
        expect(completed).toBe(1);
        ctx.memFree(hits);
      });

      it('on an idle Map does nothing', async () => {
        const hits = await zeroed(4 * 8);
        const map = job.buildMap('count_hits', 8);
        await map.execute(hits);
        await map.synchronize();
        await map.cancel();
        expect(map.getExecuteStatus()).toBe('Idle');
        expect((await read(hits, new Uint32Array(8))).every((c) => c === 1)).toBe(true);
        ctx.memFree(hits);
      });
    });

    describe('errors', () => {
      // JavaScript throws for a negative count. WGSL cannot throw, and arguments that do not fit its
      // declared types reject execute() itself, so on the GPU a kernel it cannot run fails the Map.
      const failingMap = (): KernelMap => job.buildMap(backend.name === 'cpu' ? 'put_count' : 'js_only', 16);
      const failingArgs = (out: DevicePtr): KernelArg[] => (backend.name === 'cpu' ? [out, -1] : [out]);

      it('fails the Map on a kernel error: synchronize rejects, the error callback and map.error say why, the Map stays failed', async () => {
        const out = await zeroed(4 * 16);
        const map = failingMap();
        const reported: PxlError[] = [];
        map.setErrorCallback((e) => reported.push(e));
        await map.execute(...failingArgs(out));
        const err = await map.synchronize().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(backend.name === 'cpu' ? KernelError : UnsupportedError);
        expect((err as PxlError).message).toMatch(backend.name === 'cpu' ? /count must be >= 0, got -1/ : /run it on a Context created with backend: 'cpu'/);
        expect(map.getExecuteStatus()).toBe('Fail');
        expect(map.error).toBe(err);
        expect(reported).toEqual([err]);
        await expect(map.execute(...failingArgs(out))).rejects.toBeInstanceOf(StateError);
        ctx.memFree(out);
      });

      it('keeps the Job usable after a Map fails', async () => {
        const out = await zeroed(4 * 16);
        const bad = failingMap();
        await bad.execute(...failingArgs(out));
        await expect(bad.synchronize()).rejects.toBeInstanceOf(PxlError);
        const good = job.buildMap('put_count', 16);
        await good.execute(out, 3);
        await good.synchronize();
        expect(Array.from(await read(out, new Uint32Array(16)))).toEqual(new Array(16).fill(3));
        ctx.memFree(out);
      });

      it('fails the Map of a kernel this backend cannot run, with a message that says which backend can', async () => {
        const out = await zeroed(4 * 4);
        // The other backend's kernel: WGSL only on CPU cores, JavaScript only on the GPU.
        const map = job.buildMap(backend.name === 'cpu' ? 'gpu_only' : 'js_only', 4);
        await map.execute(out);
        const err = await map.synchronize().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(backend.name === 'cpu' ? KernelError : UnsupportedError);
        expect((err as PxlError).message).toMatch(backend.name === 'cpu' ? /runs on the webgpu backend only/ : /run it on a Context created with backend: 'cpu'/);
        expect(map.getExecuteStatus()).toBe('Fail');
        expect(Array.from(await read(out, new Uint32Array(4)))).toEqual([0, 0, 0, 0]);
        ctx.memFree(out);
      });
    });

    describe('command buffers', () => {
      it('runs a chain of dependent launches in order, each seeing all of the previous one', async () => {
        const a = await zeroed(4 * 64);
        const b = await zeroed(4 * 64);
        const cb = new CommandBuffer(ctx, job);
        for (let i = 0; i < 20; i++) cb.launch('rotate_add', { global: [64] }, i % 2 === 0 ? a : b, i % 2 === 0 ? b : a);
        const out = new Uint32Array(64);
        const fence = new Fence();
        dispatch(cb.read(a, 0, out).finalize(), { fence });
        await fence.wait();
        expect([...out]).toEqual(new Array(64).fill(20));
        ctx.memFree(a);
        ctx.memFree(b);
      });
    });

    describe('streams', () => {
      it('runs the executes of one stream in issue order', async () => {
        const rows = 40;
        const a = ctx.memAlloc(4 * rows * 3);
        const y = await zeroed(4 * rows * 3);
        const fill = job.buildMap('fill_rows', rows).setBatchSize(3);
        const axpy = job.buildMap('axpy_rows', rows).setBatchSize(5);
        const av = new NDArray(a, 'float32', [rows, 3]);
        const yv = new NDArray(y, 'float32', [rows, 3]);
        // y += a after each fill; a is overwritten between the reads, so any reordering shows.
        for (const scale of [1, 10, 100]) {
          await fill.execute(av, scale);
          await axpy.execute(av, yv, 1);
        }
        await fill.execute(av, 0);
        await axpy.synchronize();
        await fill.synchronize();
        const expected = Array.from({ length: rows * 3 }, (_, k) => 111 * (Math.floor(k / 3) + 1) + 3 * (k % 3));
        expect(Array.from(await read(y, new Float32Array(rows * 3)))).toEqual(expected);
        ctx.memFree(a);
        ctx.memFree(y);
      });

      it('holds a Map in HostInit while an earlier launch of its stream runs', async () => {
        const hits = await zeroed(4 * SLOW.tasks);
        const out = await zeroed(4 * 8);
        const stream = ctx.createStream();
        const slow = job.buildMap('slow_hits', SLOW.tasks).setBatchSize(1).setStream(stream);
        const next = job.buildMap('put_count', 8).setStream(stream);
        await slow.execute(hits, SLOW.spin);
        expect(await next.execute(out, 9)).toBe(Result.Success);
        expect(next.getExecuteStatus()).toBe('HostInit');
        expect(next.getProgress()).toEqual({ target: 0, issued: 0, done: 0 });
        await slow.cancel();
        await next.synchronize();
        expect(next.getExecuteStatus()).toBe('Idle');
        expect(Array.from(await read(out, new Uint32Array(8)))).toEqual(new Array(8).fill(9));
        ctx.destroyStream(stream);
        ctx.memFree(hits);
        ctx.memFree(out);
      });

      it('makes execute() wait for room when the stream holds its limit', async () => {
        const hits = await zeroed(4 * SLOW.tasks);
        const out = await zeroed(4 * 8);
        const stream = ctx.createStream(1);
        const slow = job.buildMap('slow_hits', SLOW.tasks).setBatchSize(1).setStream(stream);
        const next = job.buildMap('put_count', 8).setStream(stream);
        expect(await slow.execute(hits, SLOW.spin)).toBe(Result.Success);
        let settled = false;
        const waiting = next.execute(out, 4).finally(() => (settled = true));
        expect(stream.inFlight).toBe(1);
        await new Promise((resolve) => setImmediate(resolve));
        expect(settled).toBe(false);
        await slow.cancel();
        expect(await waiting).toBe(Result.Success);
        await next.synchronize();
        expect(Array.from(await read(out, new Uint32Array(8)))).toEqual(new Array(8).fill(4));
        ctx.destroyStream(stream);
        ctx.memFree(hits);
        ctx.memFree(out);
      });

      it('resolves an execute waiting for room to Result.Failure when its stream is destroyed', async () => {
        const hits = await zeroed(4 * SLOW.tasks);
        const out = await zeroed(4 * 8);
        const stream = ctx.createStream(1);
        const slow = job.buildMap('slow_hits', SLOW.tasks).setBatchSize(1).setStream(stream);
        const refused = job.buildMap('put_count', 8).setStream(stream);
        await slow.execute(hits, SLOW.spin);
        const waiting = refused.execute(out, 4);
        ctx.destroyStream(stream);
        expect(await waiting).toBe(Result.Failure);
        expect(refused.getExecuteStatus()).toBe('Idle');
        await slow.cancel();
        expect(Array.from(await read(out, new Uint32Array(8)))).toEqual(new Array(8).fill(0));
        ctx.memFree(hits);
        ctx.memFree(out);
      });
    });
  });
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  access, ArgumentError, box, regionOf, createContext, formatDependency, formatRegion, GeometryError, KernelNotFoundError, RangeMapperError, StateError, subrange, TaskGraphError,
  type ChromeTrace, type Context, type DevicePtr, type GraphWarning, type Job, type KernelModule, type Queue, type TaskRecord, type TraceEvent,
} from '../src/index.js';
import type { Accessor } from '../src/graph/accessor.js';
import type { HostTaskHandle } from '../src/graph/commandGroup.js';
import { gateBytes, openAllGates, openGates, waitForStarted } from './fixtures/gates.js';

let ctx: Context;
let job: Job;
let mod: KernelModule;

beforeAll(async () => {
  ctx = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } });
  mod = await ctx.createModule(new URL('./fixtures/graphKernels.ts', import.meta.url));
  job = ctx.createJob();
});
afterAll(async () => {
  await ctx.destroy();
});

/** A queue on the shared Job, two chunks per kernel unless told otherwise; destroyed by the caller. */
function queue(options: Parameters<Context['createQueue']>[0] = {}): Queue {
  const q = ctx.createQueue({ job, chunks: 2, ...options });
  q.load(mod);
  return q;
}

const iota = (n: number, start = 0): number[] => Array.from({ length: n }, (_, i) => start + i);

describe('queue: tasks and fences', () => {
  it('runs dependent tasks in order and returns host snapshots from fences', async () => {
    const q = queue();
    const a = q.buffer(Float64Array, [10]);
    const b = q.buffer('float64', [10]);
    q.submit((cg) => cg.parallelFor([10], 'iota', cg.write(a, access.oneToOne(), { noInit: true }), 5));
    const t2 = q.submit((cg) => cg.parallelFor([10], 'scale', cg.read(a, access.oneToOne()), cg.write(b, access.oneToOne(), { noInit: true }), 2));
    expect(t2.dependencies.map((d) => [d.task, d.kind])).toEqual([[1, 'true']]);
    const result = await q.fence(b);
    expect(result).toBeInstanceOf(Float64Array);
    expect([...result]).toEqual(iota(10, 5).map((x) => 2 * x));
    expect([...(await q.fence(a, subrange([2], [3])))]).toEqual([7, 8, 9]);
    await q.wait();
    await q.destroy();
  });

  it('finds the dependencies of the example in docs/task-graph.md on partially overlapping parts', async () => {
    const q = queue({ chunks: 1 });
    const b = q.buffer(Float64Array, [16]);
    const part = (lo: number, hi: number) => access.fixed(subrange([lo], [hi - lo]));
    q.submit((cg) => cg.parallelFor([1], 'fill', cg.write(b, part(0, 8), { noInit: true }), 0, 8, 1)); // T1
    q.submit((cg) => cg.parallelFor([1], 'fill', cg.write(b, part(8, 16), { noInit: true }), 8, 16, 2)); // T2
    const t3 = q.submit((cg) => cg.parallelFor([1], 'add', cg.readWrite(b, part(6, 10)), 6, 10, 3)); // T3
    expect(t3.dependencies.map(formatDependency)).toEqual(['true T1 B0 {[(6),(8))}', 'true T2 B0 {[(8),(10))}']);
    expect([...(await q.fence(b))]).toEqual([1, 1, 1, 1, 1, 1, 4, 4, 5, 5, 2, 2, 2, 2, 2, 2]);
    await q.destroy();
  });

  it('fences parts of 2-D and 3-D buffers row-major within the part', async () => {
    const q = queue();
    const m = q.buffer(Int32Array, [4, 6], { init: iota(24) });
    expect([...(await q.fence(m, subrange([1, 2], [2, 3])))]).toEqual([8, 9, 10, 14, 15, 16]);
    expect([...(await q.fence(m, box([1, 0], [3, 6])))]).toEqual(iota(12, 6));
    expect([...(await q.fence(m, subrange([0, 0], [0, 6])))]).toEqual([]);
    const cube = q.buffer(Int32Array, [3, 4, 5], { init: iota(60) });
    expect([...(await q.fence(cube, subrange([1, 1, 3], [2, 2, 2])))]).toEqual([28, 29, 33, 34, 48, 49, 53, 54]);
    expect([...(await q.fence(cube, subrange([1, 0, 0], [1, 4, 5])))]).toEqual(iota(20, 20));
    await expect(q.fence(m, subrange([3, 0], [2, 6]))).rejects.toThrow(new ArgumentError("fence: the part [(3,0),(5,6)) does not lie within buffer B0 of extent (4,6)"));
    await q.destroy();
  });

  it('lets a later writer wait for an earlier fence (write after read)', async () => {
    const q = queue();
    const a = q.buffer(Float64Array, [6], { init: new Array(6).fill(1) });
    const before = q.fence(a);
    const writer = q.submit((cg) => cg.parallelFor([6], 'iota', cg.write(a, access.oneToOne(), { noInit: true }), 0));
    // The fence (T2) read what the init (T1) wrote, so the writer waits for the fence only.
    expect(writer.dependencies.map((d) => [d.task, d.kind])).toEqual([[2, 'anti']]);
    expect([...(await before)]).toEqual([1, 1, 1, 1, 1, 1]);
    expect([...(await q.fence(a))]).toEqual(iota(6));
    await q.destroy();
  });

  it('copies init data at the call and checks it', async () => {
    const q = queue();
    const data = new Float32Array([1, 2, 3]);
    const b = q.buffer(Float32Array, [3], { init: data });
    data.fill(0);
    expect([...(await q.fence(b))]).toEqual([1, 2, 3]);
    const big = q.buffer(BigInt64Array, [2], { init: [5n, -1n] });
    expect([...(await q.fence(big))]).toEqual([5n, -1n]);
    expect(() => q.buffer(Float32Array, [4], { init: [1, 2] })).toThrow(new ArgumentError("a buffer's init has 2 elements, but the buffer holds 4"));
    expect(() => q.buffer(BigInt64Array, [1], { init: [1] })).toThrow(/^a buffer's init does not fit its bigint64 elements: /);
    expect(() => q.buffer(Uint8ClampedArray as never, [4])).toThrow(/^a buffer's element type must be a TypedArray class \(Float32Array, Int32Array, \.\.\.\) or one of float64, float32/);
    expect(() => q.buffer(Float32Array, [4, 0])).toThrow(new ArgumentError('a buffer needs at least one element, got shape [4, 0]'));
    await q.destroy();
  });

  it('splits kernels into the configured number of chunks, spread over the cores', async () => {
    const q = queue({ chunks: 5 });
    const line = q.buffer(Int32Array, [10]);
    const grid = q.buffer(Int32Array, [4, 6]);
    const t = q.submit((cg) => cg.parallelFor([10], 'mark_chunk', cg.write(line, access.oneToOne(), { noInit: true })));
    expect(t.chunks).toHaveLength(5);
    expect([...(await q.fence(line))]).toEqual([0, 0, 1, 1, 2, 2, 3, 3, 4, 4]);
    await q.destroy();
    const q4 = queue({ chunks: 4 });
    const grid4 = q4.buffer(Int32Array, [4, 6]);
    q4.submit((cg) => cg.parallelFor([4, 6], 'mark_chunk', cg.write(grid4, access.oneToOne(), { noInit: true })));
    expect([...(await q4.fence(grid4))]).toEqual([0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 2, 2, 2, 3, 3, 3]);
    expect(grid.size).toBe(24);
    await q4.destroy();
  });

  it('runs a kernel over an empty range as a task with no chunks', async () => {
    const q = queue();
    const a = q.buffer(Float64Array, [4], { init: [1, 2, 3, 4] });
    const t = q.submit((cg) => cg.parallelFor([0], 'iota', cg.write(a, access.oneToOne(), { noInit: true }), 0));
    expect(t.chunks).toEqual([]);
    expect(t.accesses[0]!.region.boxes).toEqual([]);
    expect(t.dependencies).toEqual([]);
    await q.wait();
    expect([...(await q.fence(a))]).toEqual([1, 2, 3, 4]);
    expect(() => q.submit((cg) => cg.parallelFor([2 ** 31], 'iota', cg.write(a, access.oneToOne()), 0))).toThrow(
      new ArgumentError('parallelFor ranges reach at most 2147483647 along a dimension (chunk bounds travel as int32), got (2147483648)'),
    );
    await q.destroy();
  });

  it('reports every task it builds through onTask, and reads of unwritten data through onWarning', async () => {
    const tasks: TaskRecord[] = [];
    const warnings: GraphWarning[] = [];
    const q = queue({ onTask: (t) => tasks.push(t), onWarning: (w) => warnings.push(w) });
    const a = q.buffer(Float64Array, [4], { init: [1, 2, 3, 4], name: 'a' });
    const b = q.buffer(Float64Array, [8], { name: 'b' });
    q.submit((cg) => cg.parallelFor([4], 'scale', cg.read(a, access.oneToOne()), cg.write(b, access.oneToOne(), { noInit: true }), 10));
    const snapshot = await q.fence(b);
    expect([...snapshot]).toEqual([10, 20, 30, 40, 0, 0, 0, 0]);
    expect(tasks.map((t) => [t.id, t.kind, t.name, t.dependencies.map((d) => `${d.kind} T${d.task}`)])).toEqual([
      [1, 'init', 'init', []],
      [2, 'kernel', 'scale', ['true T1']],
      [3, 'fence', 'fence', ['true T2']],
    ]);
    expect(warnings.map((w) => w.message)).toEqual([
      "task T3 'fence' reads {[(4),(8))} of buffer B1 'b', which no task has written: the kernel sees the buffer's initial zeros; give the buffer init data or write it first",
    ]);
    await q.destroy();
  });
});

describe('queue: failures', () => {
  it('fails the task of a throwing kernel, naming the chunk, and the tasks that depend on it', async () => {
    const q = queue();
    const a = q.buffer(Float64Array, [10]);
    q.submit((cg) => cg.parallelFor([10], 'throw_in_chunk', cg.write(a, access.oneToOne(), { noInit: true }), 1));
    const snapshot = q.fence(a);
    await expect(snapshot).rejects.toThrow(
      "task T2 'fence' did not run because a task it depends on failed: task T1 'throw_in_chunk' failed in chunk 1 (offset (5) range (5)): kernel 'throw_in_chunk' threw at task 1: chunk 1 fails on purpose",
    );
    // The passed-on failure names the buffer and the region the fence reads that the failed task wrote.
    const passedOn = (await snapshot.catch((e: unknown) => e)) as TaskGraphError;
    expect({ task: passedOn.task, buffer: passedOn.buffer, region: formatRegion(passedOn.region as never) }).toEqual({ task: "T2 'fence'", buffer: 'B0', region: '{[(0),(10))}' });
    const err = await q.wait().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskGraphError);
    expect((err as TaskGraphError).task).toBe("T1 'throw_in_chunk'");
    expect((err as Error).cause).toMatchObject({ code: 'PXL_KERNEL_FAILED', taskIdx: 1 });
    // The queue goes on: a new write does not depend on the failed task.
    q.submit((cg) => cg.parallelFor([10], 'throw_in_chunk', cg.write(a, access.oneToOne(), { noInit: true }), -1));
    expect([...(await q.fence(a))]).toEqual(new Array(10).fill(7));
    await q.destroy();
  });

  it('refuses malformed command groups at submit with errors that say what to change', async () => {
    const q = queue();
    const other = queue();
    const a = q.buffer(Float64Array, [4]);
    const foreign = other.buffer(Float64Array, [4]);
    expect(() => q.submit((cg) => cg.parallelFor([4], 'nope', cg.write(a, access.oneToOne())))).toThrow(KernelNotFoundError);
    expect(() => q.submit((cg) => cg.parallelFor([4], 'plain_task'))).toThrow(
      new ArgumentError("kernel 'plain_task' is a task kernel; parallelFor runs chunk kernels: define it with defineChunkKernel from pxl/mu"),
    );
    expect(() => q.submit((cg) => void cg.write(a, access.oneToOne()))).toThrow(new StateError('the command group did not call parallelFor or hostTask: a submit runs exactly one kernel or host task'));
    expect(() =>
      q.submit((cg) => {
        cg.parallelFor([4], 'iota', cg.write(a, access.oneToOne()), 0);
        cg.parallelFor([4], 'iota', cg.write(a, access.oneToOne()), 0);
      }),
    ).toThrow(new StateError('a command group runs one kernel: parallelFor was already called in this submit'));
    expect(() => q.submit(async (cg) => cg.parallelFor([4], 'iota', cg.write(a, access.oneToOne()), 0))).toThrow(
      new StateError('the function given to submit must declare its accesses and call parallelFor or hostTask synchronously; it returned a promise (make the hostTask function async instead)'),
    );
    expect(() => q.submit((cg) => cg.parallelFor([4], 'iota', cg.write(foreign, access.oneToOne()), 0))).toThrow(new ArgumentError('buffer B0 belongs to another queue'));
    let kept: Parameters<Parameters<Queue['submit']>[0]>[0] | undefined;
    q.submit((cg) => {
      kept = cg;
      cg.parallelFor([4], 'iota', cg.write(a, access.oneToOne(), { noInit: true }), 0);
    });
    expect(() => kept!.read(a, access.all())).toThrow(new StateError('read: the command group is closed; use it only inside the function given to submit'));
    expect(() => q.submit((cg) => cg.parallelFor([4], 'iota', cg.write(a, access.oneToOne()), 'x' as never))).toThrow(ArgumentError);
    expect(() => q.submit((cg) => cg.parallelFor([4], 'iota', ...new Array(9).fill(0)))).toThrow(
      new ArgumentError('parallelFor passes at most 8 arguments to a kernel (the chunk table is the ninth), got 9: group constants into one plain object'),
    );
    expect(() => q.submit((cg) => cg.parallelFor([4], 'iota', cg.write(a, 'rows' as never)))).toThrow(new ArgumentError("an accessor of buffer B0 needs a range mapper such as access.oneToOne(), got 'rows'"));
    await q.wait();
    await other.destroy();
    await q.destroy();
  });

  it('refuses overlapping producer chunks at submit and stays usable', async () => {
    const q = queue();
    const a = q.buffer(Float64Array, [8], { name: 'a' });
    expect(() => q.submit((cg) => cg.parallelFor([8], 'iota', cg.write(a, access.neighborhood([1])), 0))).toThrow(
      new TaskGraphError(
        "task T1 'iota' writes the region {[(3),(5))} of buffer B0 'a' from two chunks at once (chunk 0: offset (0) range (4), chunk 1: offset (4) range (4)); a write access needs a range mapper that gives different chunks disjoint regions, such as oneToOne()",
        { task: "T1 'iota'", buffer: "B0 'a'", region: regionOf(box([3], [5])) },
      ),
    );
    const t = q.submit((cg) => cg.parallelFor([8], 'iota', cg.write(a, access.oneToOne(), { noInit: true }), 0));
    expect(t.id).toBe(1);
    expect([...(await q.fence(a))]).toEqual(iota(8));
    await q.destroy();
  });

  it('frees its memory on destroy and refuses use afterwards', async () => {
    const free = ctx.availableMemSize;
    const q = queue();
    const a = q.buffer(Float64Array, [1000]);
    q.submit((cg) => cg.parallelFor([1000], 'iota', cg.write(a, access.oneToOne(), { noInit: true }), 0));
    expect(ctx.availableMemSize).toBeLessThan(free);
    await q.destroy();
    expect(ctx.availableMemSize).toBe(free);
    expect(() => q.buffer(Float64Array, [4])).toThrow(new StateError('this queue was destroyed; create a new one with ctx.createQueue()'));
    await expect(q.fence(a)).rejects.toThrow(StateError);
  });

  it('makes its own Job of every free Sub when given none, and returns it on destroy', async () => {
    const own = await createContext({ topology: { subs: 2, clustersPerSub: 1, coresPerCluster: 1 } });
    try {
      const q = own.createQueue();
      expect(own.availableSubCount).toBe(0);
      expect(q.job.coreCount).toBe(2);
      expect(q.chunkCount).toBe(2);
      await q.destroy();
      expect(own.availableSubCount).toBe(2);
    } finally {
      await own.destroy();
    }
  });
});

describe('queue: host tasks', () => {
  it('orders kernel, host task and kernel on one buffer both ways (true dependencies)', async () => {
    const q = queue({ uninitializedReads: 'throw' });
    const a = q.buffer(Float64Array, [10], { name: 'a' });
    const b = q.buffer(Float64Array, [10], { name: 'b' });
    q.submit((cg) => cg.parallelFor([10], 'iota', cg.write(a, access.oneToOne(), { noInit: true }), 1)); // T1
    let seen: number[] = [];
    const host = q.submit((cg) => {
      const rw = cg.readWrite(a, access.oneToOne());
      cg.hostTask([10], (h) => {
        const v = h.view(rw);
        expect(v.shape).toEqual([10]);
        expect(v.mode).toBe('read_write');
        expect(formatRegion(v.region)).toBe('{[(0),(10))}');
        seen = [...v.data];
        for (let i = 0; i < 10; i++) v.data[i] = v.data[i]! * 10;
      });
    }); // T2
    expect(host.kind).toBe('host');
    expect(host.name).toBe('host');
    expect(host.range).toEqual([10]);
    expect(host.chunks).toHaveLength(1);
    expect(host.dependencies.map(formatDependency)).toEqual(['true T1 B0 {[(0),(10))}']);
    const after = q.submit((cg) => cg.parallelFor([10], 'scale', cg.read(a, access.oneToOne()), cg.write(b, access.oneToOne(), { noInit: true }), 3)); // T3
    expect(after.dependencies.map(formatDependency)).toEqual(['true T2 B0 {[(0),(10))}']);
    expect([...(await q.fence(b))]).toEqual(iota(10, 1).map((x) => 30 * x));
    expect(seen).toEqual(iota(10, 1));
    await q.wait();
    await q.destroy();
  });

  it('gives a host task the values a kernel wrote into the region it reads, and awaits an async one', async () => {
    const q = queue();
    const m = q.buffer(Int32Array, [4, 6], { name: 'm' });
    q.submit((cg) => cg.parallelFor([4, 6], 'mark_chunk', cg.write(m, access.oneToOne(), { noInit: true }))); // T1: chunk 0 has columns 0-2, chunk 1 columns 3-5
    const out = q.buffer(Float64Array, [2], { init: [0, 0], name: 'out' }); // T2 (init)
    let rows: number[][] = [];
    let ran = false;
    const t = q.submit((cg) => {
      const part = cg.read(m, access.fixed(subrange([1, 2], [2, 3])));
      const sums = cg.write(out, access.all());
      cg.hostTask(
        async (h) => {
          await new Promise((r) => setTimeout(r, 5));
          const v = h.view(part);
          const cols = v.shape[1]!;
          rows = [1, 2].map((i) => [2, 3, 4].map((j) => v.data[i * cols + j]!));
          h.view(sums).data[0] = rows.flat().reduce((s, x) => s + x, 0);
          ran = true;
        },
        { name: 'sum' },
      );
    }); // T3
    expect(ran).toBe(false); // never inside submit
    expect(t.dependencies.map(formatDependency)).toEqual(['true T1 B0 {[(1,2),(3,5))}', 'true T2 B1 {[(0),(2))}']);
    // A later kernel that overwrites what the host task reads waits for it (write after read), and
    // not also for T1, which the host task waits for.
    const over = q.submit((cg) => cg.parallelFor([4, 6], 'mark_chunk', cg.write(m, access.oneToOne(), { noInit: true })));
    expect(over.dependencies.map((d) => `${d.kind} T${d.task}`)).toEqual(['anti T3']);
    const total = await q.fence(out);
    expect(ran).toBe(true);
    expect(rows).toEqual([[0, 1, 1], [0, 1, 1]]);
    expect([...total]).toEqual([4, 0]);
    await q.destroy();
  });

  it('runs a host task whose writes a later host task and a fence read, over a 2-D range', async () => {
    const q = queue();
    const g = q.buffer(Int32Array, [3, 4]);
    q.submit((cg) => {
      const w = cg.write(g, access.oneToOne(), { noInit: true });
      cg.hostTask([3, 4], (h) => {
        const v = h.view(w);
        for (let i = 0; i < 12; i++) v.data[i] = i;
      });
    });
    const second = q.submit((cg) => {
      const row = cg.readWrite(g, access.fixed(subrange([2, 0], [1, 4])));
      cg.hostTask((h) => {
        const v = h.view(row);
        for (let j = 0; j < 4; j++) v.data[8 + j] = -v.data[8 + j]!;
      });
    });
    expect(second.range).toEqual([1]);
    expect(second.dependencies.map(formatDependency)).toEqual(['true T1 B0 {[(2,0),(3,4))}']);
    expect([...(await q.fence(g))]).toEqual([0, 1, 2, 3, 4, 5, 6, 7, -8, -9, -10, -11]);
    await q.destroy();
  });

  it('fails a throwing host task like a failing kernel, and the readers of what it wrote', async () => {
    const q = queue();
    const a = q.buffer(Float64Array, [4], { init: [1, 2, 3, 4], name: 'a' });
    q.submit((cg) => {
      cg.write(a, access.all());
      cg.hostTask(() => {
        throw new Error('host fails on purpose');
      }, { name: 'bad' });
    }); // T2
    let readerRan = false;
    q.submit((cg) => {
      cg.read(a, access.all());
      cg.hostTask(() => {
        readerRan = true;
      });
    }); // T3
    await expect(q.fence(a)).rejects.toThrow("task T4 'fence' did not run because a task it depends on failed: task T2 'bad' failed: host fails on purpose");
    const err = await q.wait().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskGraphError);
    expect((err as TaskGraphError).task).toBe("T2 'bad'");
    expect((err as Error).cause).toEqual(new Error('host fails on purpose'));
    expect(readerRan).toBe(false);

    // An async rejection fails the same way; a kernel failure fails a host task that reads its output.
    q.submit((cg) => {
      cg.write(a, access.all(), { noInit: true });
      cg.hostTask(async () => {
        await Promise.resolve();
        throw new Error('later');
      });
    }); // T5
    q.submit((cg) => cg.parallelFor([4], 'throw_in_chunk', cg.write(a, access.oneToOne(), { noInit: true }), 0)); // T6
    let afterKernel = false;
    q.submit((cg) => {
      cg.read(a, access.fixed(subrange([0], [1])));
      cg.hostTask(() => {
        afterKernel = true;
      });
    }); // T7
    const second = await q.wait().catch((e: unknown) => e);
    expect((second as Error).message).toBe("task T5 'host' failed: later (and 1 more task failure)");
    expect(afterKernel).toBe(false);
    await q.destroy();
  });

  it('refuses malformed host tasks at submit and checks views while running', async () => {
    const q = queue();
    const a = q.buffer(Float64Array, [4], { init: [1, 2, 3, 4], name: 'a' });
    const grid = q.buffer(Float64Array, [2, 2], { init: [1, 2, 3, 4] });
    const f = (): void => undefined;
    expect(() => q.submit((cg) => { cg.hostTask(f); cg.hostTask(f); })).toThrow(new StateError('a command group runs one kernel or host task: hostTask was already called in this submit'));
    expect(() => q.submit((cg) => { cg.parallelFor([4], 'iota', cg.write(a, access.oneToOne()), 0); cg.hostTask(f); })).toThrow(
      new StateError('a command group runs one kernel or host task: parallelFor was already called in this submit'),
    );
    expect(() => q.submit((cg) => { cg.hostTask(f); cg.parallelFor([4], 'iota', cg.write(a, access.oneToOne()), 0); })).toThrow(
      new StateError('a command group runs one kernel or host task: hostTask was already called in this submit'),
    );
    expect(() => q.submit((cg) => cg.hostTask('nope' as never))).toThrow(new ArgumentError("hostTask needs a function to run on the host, got 'nope'"));
    expect(() => q.submit((cg) => cg.hostTask([4], undefined as never))).toThrow(new ArgumentError('hostTask needs a function to run on the host, got undefined'));
    expect(() => q.submit((cg) => cg.hostTask(f, { name: '' }))).toThrow(new ArgumentError("a host task's name must be a non-empty string, got ''"));
    expect(() => q.submit((cg) => cg.hostTask([-1], f))).toThrow(new GeometryError('range[0] must be a non-negative integer, got -1'));
    expect(() => q.submit((cg) => { cg.read(grid, access.slice(1)); cg.hostTask(f); })).toThrow(RangeMapperError);
    expect(() => q.submit((cg) => { cg.read(grid, access.oneToOne()); cg.hostTask([4], f); })).toThrow(/^task T3 'host', buffer B1: /);
    let kept: Parameters<Parameters<Queue['submit']>[0]>[0] | undefined;
    q.submit((cg) => {
      kept = cg;
      cg.hostTask(f);
    });
    expect(() => kept!.hostTask(f)).toThrow(new StateError('hostTask: the command group is closed; use it only inside the function given to submit'));
    await q.wait();

    // Views: only of this command group's accessors, and only while the function runs.
    let foreign: Accessor<'float64', 1, 'read'> | undefined;
    q.submit((cg) => {
      foreign = cg.read(a, access.all());
      cg.hostTask(f);
    });
    let handle: HostTaskHandle | undefined;
    q.submit((cg) => {
      cg.read(a, access.all());
      cg.hostTask((h) => {
        handle = h;
        h.view(foreign!);
      }, { name: 'peek' });
    });
    const err = await q.wait().catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/^task T\d+ 'peek' failed: host task T\d+ 'peek' has a view only of the accessors its own command group declared$/);
    expect(() => handle!.view(foreign!)).toThrow(/has ended: views are valid only while its function runs$/);
    await q.destroy();
  });
});

function alloc(bytes: number): { ptr: DevicePtr; gates: Int32Array } {
  const ptr = ctx.memAlloc(bytes);
  return { ptr, gates: ctx.hostView(ptr, 'int32') };
}
function free(...gates: { ptr: DevicePtr }[]): void {
  for (const g of gates) ctx.memFree(g.ptr);
}
const batchesOf = (trace: ChromeTrace, kernel: string): TraceEvent[] => trace.traceEvents.filter((e) => e.ph === 'X' && e.name === kernel);
const endOf = (e: TraceEvent): number => e.ts! + e.dur!;

describe('queue: concurrency, shown by the execution trace', () => {
  it('runs two independent tasks at the same time on different cores', async () => {
    // Both tasks have a chunk on each core. Task A holds its chunk 0 at a gate on core 0; task B is
    // independent, so its chunk 1 runs on core 1 while A still holds core 0.
    const q = queue();
    const gatesA = alloc(gateBytes(2));
    const gatesB = alloc(gateBytes(2));
    openGates(gatesB.gates, [0, 1]);
    openGates(gatesA.gates, [1]);
    const a = q.buffer(Int32Array, [2]);
    const b = q.buffer(Int32Array, [2]);
    ctx.startTrace();
    q.submit((cg) => cg.parallelFor([2], 'gated_chunk', gatesA.ptr, cg.write(a, access.oneToOne(), { noInit: true })));
    const tb = q.submit((cg) => cg.parallelFor([2], 'gated_other', gatesB.ptr, cg.write(b, access.oneToOne(), { noInit: true })));
    expect(tb.dependencies).toEqual([]);
    await waitForStarted(gatesB.gates, 1);
    expect(q.pendingTasks).toBe(2);
    openAllGates(gatesA.gates);
    await q.wait();
    const trace = ctx.stopTrace();
    const heldA = batchesOf(trace, 'gated_chunk').find((e) => e.tid === 0)!;
    const bOnCore1 = batchesOf(trace, 'gated_other').find((e) => e.tid === 1)!;
    expect(bOnCore1.ts!).toBeLessThan(endOf(heldA));
    expect(bOnCore1.args!.launch).not.toBe(heldA.args!.launch);
    expect([...(await q.fence(a))]).toEqual([1, 1]);
    expect([...(await q.fence(b))]).toEqual([1, 1]);
    free(gatesA, gatesB);
    await q.destroy();
  });

  it('starts a dependent task only after every chunk of the task it depends on has ended', async () => {
    const q = queue();
    const { ptr: gatesPtr, gates } = alloc(gateBytes(2));
    openGates(gates, [1]);
    const a = q.buffer(Int32Array, [2]);
    ctx.startTrace();
    q.submit((cg) => cg.parallelFor([2], 'gated_chunk', gatesPtr, cg.write(a, access.oneToOne(), { noInit: true })));
    const tb = q.submit((cg) => cg.parallelFor([2], 'mark_chunk', cg.write(a, access.oneToOne(), { noInit: true })));
    expect(tb.dependencies.map((d) => [d.task, d.kind])).toEqual([[1, 'output']]);
    await waitForStarted(gates, 2);
    expect(q.pendingTasks).toBe(2);
    openAllGates(gates);
    await q.wait();
    const trace = ctx.stopTrace();
    const lastA = Math.max(...batchesOf(trace, 'gated_chunk').map(endOf));
    const bs = batchesOf(trace, 'mark_chunk');
    expect(bs).toHaveLength(2);
    for (const e of bs) expect(e.ts!).toBeGreaterThanOrEqual(lastA);
    expect([...(await q.fence(a))]).toEqual([0, 1]);
    ctx.memFree(gatesPtr);
    await q.destroy();
  });
});

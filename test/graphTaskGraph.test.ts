import { describe, expect, it } from 'vitest';
import { box } from '../src/core/box.js';
import { OptionError, RangeMapperError, TaskGraphError } from '../src/core/errors.js';
import { range } from '../src/core/range.js';
import { regionOf } from '../src/core/region.js';
import type { NDArray } from '../src/pxl/ndarray.js';
import { accessOf, type Access } from '../src/graph/accessMode.js';
import { GraphBuffer, type BufferId } from '../src/graph/buffer.js';
import { HOST_MEMORY, memorySpace } from '../src/graph/coherence.js';
import { fixed, neighborhood, oneToOne, slice } from '../src/graph/mappers.js';
import type { AnyRangeMapper } from '../src/graph/rangeMapper.js';
import { split } from '../src/graph/split.js';
import { formatDependency, type GraphWarning, type TaskRecord } from '../src/graph/task.js';
import { TaskGraph, type TaskGraphOptions } from '../src/graph/taskGraph.js';

// The graph runs nothing, so these tests need no Context: buffers carry only their shape and dtype.
const owner = {};
let nextBuffer = 0;
function buffer(shape: number[], name?: string): GraphBuffer {
  return new GraphBuffer(owner, nextBuffer++ as BufferId, name, range(shape), { dtype: 'float32' } as unknown as NDArray<'float32'>);
}

const read = accessOf('read');
const write = accessOf('write');
const discard = accessOf('write', { noInit: true });
const readWrite = accessOf('read_write');

/** Adds a kernel task over `kernelRange` split into `chunks`, with these accesses. */
function kernel(g: TaskGraph, name: string, accesses: [GraphBuffer, AnyRangeMapper, Access][], kernelRange: number[] = [1], chunks = 1): TaskRecord {
  return g.add({
    kind: 'kernel',
    name,
    range: range(kernelRange),
    chunks: split(range(kernelRange), chunks),
    accesses: accesses.map(([b, mapper, access]) => ({ buffer: b, access, mapper })),
  });
}

const part = (lo: number, hi: number): AnyRangeMapper => fixed(box([lo], [hi]));
const deps = (t: TaskRecord): string[] => t.dependencies.map(formatDependency);

function graph(options: TaskGraphOptions = {}): { g: TaskGraph; warnings: GraphWarning[] } {
  const warnings: GraphWarning[] = [];
  return { g: new TaskGraph({ onWarning: (w) => warnings.push(w), ...options }), warnings };
}

describe('dependencies', () => {
  it('makes a read depend on the writer of the part it overlaps (true dependency)', () => {
    const { g } = graph();
    const b = buffer([16]);
    const t1 = kernel(g, 'produce', [[b, part(0, 8), discard]]);
    const t2 = kernel(g, 'produce', [[b, part(8, 16), discard]]);
    const t3 = kernel(g, 'consume', [[b, part(6, 10), read]]);
    expect([t1.id, t2.id, t3.id]).toEqual([1, 2, 3]);
    expect(t2.dependencies).toEqual([]);
    expect(deps(t3)).toEqual([`true T1 B${b.id} {[(6),(8))}`, `true T2 B${b.id} {[(8),(10))}`]);
  });

  it('makes a write depend on the readers since the last write (anti) only, not also on the writer they read', () => {
    const { g } = graph();
    const b = buffer([16]);
    kernel(g, 'init', [[b, part(0, 16), discard]]);
    kernel(g, 'left', [[b, part(0, 6), read]]);
    kernel(g, 'right', [[b, part(6, 16), read]]);
    const t4 = kernel(g, 'overwrite', [[b, part(4, 8), discard]]);
    expect(deps(t4)).toEqual([`anti T2 B${b.id} {[(4),(6))}`, `anti T3 B${b.id} {[(6),(8))}`]);
    // After the write, readers start over: a new write of [4, 8) only waits for T4.
    const t5 = kernel(g, 'again', [[b, part(5, 7), discard]]);
    expect(deps(t5)).toEqual([`output T4 B${b.id} {[(5),(7))}`]);
  });

  it('lists only the true dependency when a task reads and writes what another wrote', () => {
    const { g } = graph();
    const b = buffer([8]);
    kernel(g, 'init', [[b, part(0, 8), discard]]);
    const t2 = kernel(g, 'update', [[b, part(2, 4), readWrite]]);
    expect(deps(t2)).toEqual([`true T1 B${b.id} {[(2),(4))}`]);
  });

  it('finds no dependency between tasks on disjoint regions or different buffers', () => {
    const { g } = graph();
    const a = buffer([8]);
    const b = buffer([8]);
    kernel(g, 'w', [[a, part(0, 4), discard]]);
    expect(kernel(g, 'w', [[a, part(4, 8), discard]]).dependencies).toEqual([]);
    expect(kernel(g, 'w', [[b, part(0, 8), discard]]).dependencies).toEqual([]);
    expect(kernel(g, 'r', [[a, part(0, 2), read], [a, part(6, 8), read]]).dependencies.map((d) => d.task)).toEqual([1, 2]);
  });

  it('takes the union over chunks: a 2-D stencil depends on the writers of its halo', () => {
    const { g } = graph();
    const b = buffer([8, 8]);
    kernel(g, 'top', [[b, oneToOne(), discard]], [4, 8], 2);
    kernel(g, 'bottom', [[b, fixed(box([4, 0], [8, 8])), discard]]);
    const t3 = kernel(g, 'stencil', [[b, neighborhood([1, 1]), read]], [4, 8], 2);
    expect(t3.accesses[0]!.chunkRegions.map((r) => r.boxes.map((x) => `${x.min}-${x.max}`))).toEqual([['0,0-5,5'], ['0,3-5,8']]);
    expect(deps(t3)).toEqual([`true T1 B${b.id} {[(0,0),(4,8))}`, `true T2 B${b.id} {[(4,0),(5,8))}`]);
  });

  it('makes a write depend on a last writer itself (output) where nobody read what it overwrites since', () => {
    const { g } = graph();
    const b = buffer([16]);
    kernel(g, 'a', [[b, part(0, 8), discard]]); // T1
    kernel(g, 'b', [[b, part(8, 16), discard]]); // T2
    kernel(g, 'r', [[b, part(0, 2), read]]); // T3 reads part of what T1 wrote
    // T3 read none of [4, 12), so the write waits for the writers themselves.
    expect(deps(kernel(g, 'w', [[b, part(4, 12), discard]]))).toEqual([`output T1 B${b.id} {[(4),(8))}`, `output T2 B${b.id} {[(8),(12))}`]);
    // [0, 4): T1's reader T3 waits for T1, so only T3; [4, 12) and [12, 16): unread, so their writers.
    expect(deps(kernel(g, 'w2', [[b, part(0, 16), discard]]))).toEqual([`output T2 B${b.id} {[(12),(16))}`, `anti T3 B${b.id} {[(0),(2))}`, `output T4 B${b.id} {[(4),(12))}`]);
  });

  it('waits for the readers of never-written points before overwriting them', () => {
    const { g } = graph({ uninitializedReads: 'ignore' });
    const b = buffer([8]);
    kernel(g, 'r', [[b, part(0, 4), read]]);
    expect(deps(kernel(g, 'w', [[b, part(0, 8), discard]]))).toEqual([`anti T1 B${b.id} {[(0),(4))}`]);
  });

  it('reports a write without noInit of never-written points as an uninitialized read, and depends on nothing', () => {
    const { g, warnings } = graph();
    const b = buffer([8], 'out');
    expect(kernel(g, 'w', [[b, part(0, 8), write]]).dependencies).toEqual([]);
    expect(warnings.map((w) => w.message)).toEqual([
      `task T1 'w' writes {[(0),(8))} of buffer B${b.id} 'out' without noInit, so it keeps what it does not overwrite there, but no task has written it: ` +
        "the kernel sees the buffer's initial zeros; declare the write with { noInit: true } if the kernel overwrites every point, or give the buffer init data",
    ]);
    expect(kernel(g, 'w', [[buffer([8]), part(0, 8), discard]]).dependencies).toEqual([]);
    expect(warnings).toHaveLength(1);
    const strict = graph({ uninitializedReads: 'throw' });
    expect(() => kernel(strict.g, 'w', [[b, part(2, 6), readWrite]])).toThrow(expect.objectContaining({ task: "T1 'w'", buffer: `B${b.id} 'out'`, region: regionOf(box([2], [6])) }));
  });
});

describe('reads of never-written points', () => {
  it('warns through the hook with the task, the buffer and the unwritten region', () => {
    const { g, warnings } = graph();
    const b = buffer([16], 'grid');
    kernel(g, 'w', [[b, part(0, 4), discard]]);
    const t2 = kernel(g, 'r', [[b, part(2, 10), read]]);
    expect(warnings).toEqual([
      {
        kind: 'uninitialized-read',
        task: t2.id,
        buffer: b.id,
        region: regionOf(box([4], [10])),
        message: `task T2 'r' reads {[(4),(10))} of buffer B${b.id} 'grid', which no task has written: the kernel sees the buffer's initial zeros; give the buffer init data or write it first`,
      },
    ]);
  });

  it("refuses the task under the 'throw' policy and leaves the graph unchanged", () => {
    const { g } = graph({ uninitializedReads: 'throw' });
    const b = buffer([4]);
    expect(() => kernel(g, 'r', [[b, part(0, 4), read]])).toThrow(TaskGraphError);
    expect(() => kernel(g, 'r', [[b, part(1, 3), read]])).toThrow(expect.objectContaining({ task: "T1 'r'", buffer: `B${b.id}`, region: regionOf(box([1], [3])) }));
    expect(g.taskCount).toBe(0);
    expect(kernel(g, 'w', [[b, part(0, 4), discard]]).id).toBe(1);
  });

  it("stays silent under 'ignore' and rejects unknown policies", () => {
    const { g, warnings } = graph({ uninitializedReads: 'ignore' });
    kernel(g, 'r', [[buffer([4]), part(0, 4), read]]);
    expect(warnings).toEqual([]);
    expect(() => new TaskGraph({ uninitializedReads: 'loud' as never })).toThrow(new OptionError("uninitializedReads must be one of 'ignore', 'warn', 'throw', got 'loud'"));
  });
});

describe('validation', () => {
  it('refuses producer accesses of different chunks that overlap, naming task, buffer and region', () => {
    const { g } = graph();
    const b = buffer([8, 8], 'grid');
    kernel(g, 'init', [[b, oneToOne(), discard]], [8, 8], 1);
    const attempt = (): TaskRecord => kernel(g, 'smear', [[b, neighborhood([1, 0]), readWrite]], [8, 8], 2);
    expect(attempt).toThrow(
      new TaskGraphError(
        `task T2 'smear' writes the region {[(3,0),(5,8))} of buffer B${b.id} 'grid' from two chunks at once (chunk 0: offset (0,0) range (4,8), chunk 1: offset (4,0) range (4,8)); a write access needs a range mapper that gives different chunks disjoint regions, such as oneToOne()`,
        { task: "T2 'smear'", buffer: `B${b.id} 'grid'`, region: regionOf(box([3, 0], [5, 8])) },
      ),
    );
    expect(attempt).toThrow(expect.objectContaining({ code: 'PXL_TASK_GRAPH', task: "T2 'smear'", buffer: `B${b.id} 'grid'`, region: regionOf(box([3, 0], [5, 8])) }));
    // Reads may overlap, and one chunk cannot overlap itself.
    expect(() => kernel(g, 'blur', [[b, neighborhood([1, 0]), read]], [8, 8], 2)).not.toThrow();
    expect(() => kernel(g, 'smear', [[b, neighborhood([1, 0]), readWrite]], [8, 8], 1)).not.toThrow();
  });

  it('counts two write accessors of one buffer together when checking overlap', () => {
    const { g } = graph();
    const b = buffer([8]);
    expect(() => kernel(g, 'two', [[b, oneToOne(), discard], [b, part(3, 5), discard]], [8], 2)).toThrow(/writes the region \{\[\(3\),\(5\)\)\} of buffer B\d+ from two chunks/);
  });

  it('names the task and the buffer when a mapper does not fit the dimensionalities', () => {
    const { g } = graph();
    const b = buffer([8], 'line');
    const attempt = (): TaskRecord => kernel(g, 'k', [[b, slice(1), read]], [8, 8]);
    expect(attempt).toThrow(
      new RangeMapperError('slice(1)', 2, 1, `task T1 'k', buffer B${b.id} 'line': range mapper slice(1) needs a kernel and a buffer of one dimensionality with a dimension 1, got a 2-dimensional kernel and a 1-dimensional buffer`, {
        task: "T1 'k'",
        buffer: `B${b.id} 'line'`,
      }),
    );
    expect(attempt).toThrow(expect.objectContaining({ mapper: 'slice(1)', kernelDims: 2, bufferDims: 1, task: "T1 'k'", buffer: `B${b.id} 'line'` }));
    expect(g.taskCount).toBe(0);
  });
});

describe('memory spaces', () => {
  it('runs every task in host shared memory by default, with no copies', () => {
    const { g } = graph();
    const b = buffer([8]);
    kernel(g, 'w', [[b, part(0, 8), discard]]);
    const t = kernel(g, 'r', [[b, part(0, 8), read]]);
    expect(t.space).toBe(HOST_MEMORY.id);
    expect(t.copies).toEqual([]);
  });

  it('plans the copies each task needs in its space with two simulated spaces', () => {
    const gpu = memorySpace(1, 'gpu', 'GPU 0').id;
    const onGpu = new Set(['gpuWrite', 'gpuUpdate']);
    const { g } = graph({ spaceFor: (t) => (onGpu.has(t.name) ? gpu : HOST_MEMORY.id) });
    const b = buffer([8, 8]);
    const rows = (lo: number, hi: number) => regionOf(box([lo, 0], [hi, 8]));
    kernel(g, 'hostInit', [[b, oneToOne(), discard]], [8, 8]);
    // The GPU writes rows 4-8 without noInit: it needs the old rows there first.
    const t2 = kernel(g, 'gpuWrite', [[b, fixed(box([4, 0], [8, 8])), write]]);
    expect(t2.copies).toEqual([{ buffer: b.id, copy: { from: HOST_MEMORY.id, to: gpu, region: rows(4, 8) } }]);
    // A host stencil over rows 2-5 (halo included) needs back only row 4, which the GPU wrote.
    const t3 = kernel(g, 'hostRead', [[b, neighborhood([1, 0]), read]], [8, 8], 1);
    expect(t3.copies).toEqual([{ buffer: b.id, copy: { from: gpu, to: HOST_MEMORY.id, region: rows(4, 8) } }]);
    const t4 = kernel(g, 'hostRead', [[b, oneToOne(), read]], [8, 8]);
    expect(t4.copies).toEqual([]);
    // A noInit write needs no copy; the GPU's next read of what the host kept needs none either.
    const t5 = kernel(g, 'gpuUpdate', [[b, fixed(box([0, 0], [2, 8])), discard], [b, fixed(box([4, 0], [6, 8])), read]]);
    expect(t5.copies).toEqual([]);
    const t6 = kernel(g, 'hostRead', [[b, fixed(box([0, 0], [6, 8])), read]]);
    expect(t6.copies).toEqual([{ buffer: b.id, copy: { from: gpu, to: HOST_MEMORY.id, region: rows(0, 2) } }]);
  });
});

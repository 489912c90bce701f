/**
 * Bad input at the task graph's public API and its geometry values: each row is a call with a bad
 * argument and the exact typed error (class and message) the user sees, thrown before anything is
 * taken, recorded or submitted. The runtime's (Context, Job, Map, command buffers) are in
 * badInput.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  access,
  accessOf,
  applyRangeMapper,
  ArgumentError,
  area,
  boundingBox,
  box,
  chunk,
  clampedBox,
  CoherenceTable,
  contains,
  createContext,
  defineRangeMapper,
  dependencyTasks,
  difference,
  emptyRegion,
  equals,
  formatRegion,
  formatTaskId,
  GeometryError,
  intersection,
  isEmpty,
  isProducer,
  OptionError,
  range,
  region,
  regionOf,
  split,
  union,
  type Context,
  type GraphBuffer,
  type Job,
  type Queue,
} from '../src/index.js';

const SET = 'must be a region, box, subrange or chunk (made with region(), box(), subrange() or chunk())';
const B1 = box([0], [4]);
const C1 = chunk([0], [4], [8]);
const R1 = range([8]);

type Row = [string, () => unknown, Error];

function refuses(rows: Row[]): void {
  it.each(rows)('%s', (_, call, error) => {
    expect(call).toThrow(error);
    expect(call).toThrow(error.constructor as new () => Error);
  });
}

describe('regions and boxes refuse what is not an index set', () => {
  refuses([
    ['region(2, 5)', () => region(2, 5 as never), new GeometryError('region: parts must be an array (or other iterable) of regions, boxes, subranges or chunks, got 5')],
    ['region(1, [null])', () => region(1, [null as never]), new GeometryError(`region: parts[0] ${SET}, got null`)],
    ['region(1, [box, 5])', () => region(1, [B1, 5 as never]), new GeometryError(`region: parts[1] ${SET}, got 5`)],
    ['regionOf({})', () => regionOf({} as never), new GeometryError(`regionOf: x ${SET}, got an object`)],
    ['union(null, box)', () => union(null as never, B1), new GeometryError(`union: a ${SET}, got null`)],
    ['intersection(box, 5)', () => intersection(B1, 5 as never), new GeometryError(`intersection: b ${SET}, got 5`)],
    ['difference(box, coordinates)', () => difference(B1, [0, 4] as never), new GeometryError(`difference: b ${SET}, got an array of length 2`)],
    ['isEmpty(null)', () => isEmpty(null as never), new GeometryError(`isEmpty: x ${SET}, got null`)],
    ['area(undefined)', () => area(undefined as never), new GeometryError(`area: x ${SET}, got undefined`)],
    ['equals(box, null)', () => equals(B1, null as never), new GeometryError(`equals: b ${SET}, got null`)],
    ['boundingBox(5)', () => boundingBox(5 as never), new GeometryError(`boundingBox: x ${SET}, got 5`)],
    ['contains(null, point)', () => contains(null as never, [1] as never), new GeometryError(`contains: a ${SET}, got null`)],
    ['contains(box, null)', () => contains(B1, null as never), new GeometryError(`contains: b (a set or a point) ${SET}, got null`)],
    ['contains(box, a fractional point)', () => contains(B1, [1.5] as never), new GeometryError('contains: point b[0] must be a non-negative integer, got 1.5')],
    ['formatRegion(box)', () => formatRegion(B1 as never), new GeometryError('formatRegion: r must be a region (from region() or regionOf()), got a box; for a box, subrange or chunk pass regionOf(x)')],
    ['new CoherenceTable(null)', () => new CoherenceTable(null as never), new GeometryError('CoherenceTable bufferRange must be an array of 0 to 3 coordinates, got null')],
    ['CoherenceTable.holders(null)', () => new CoherenceTable(R1).holders(null as never), new GeometryError(`CoherenceTable.holders: region ${SET}, got null`)],
    ["CoherenceTable.copiesFor('gpu', box)", () => new CoherenceTable(R1).copiesFor('gpu' as never, B1), new OptionError("CoherenceTable.copiesFor space (a memory space id) must be an integer in [0, 9007199254740991], got 'gpu'")],
    ['CoherenceTable.applyCopies([null])', () => new CoherenceTable(R1).applyCopies([null] as never), new GeometryError(`CoherenceTable.applyCopies: the region of copies[0] ${SET}, got undefined`)],
    ['emptyRegion(4)', () => emptyRegion(4 as never), new GeometryError('emptyRegion dims must be 0, 1, 2 or 3, got 4')],
    ['CoherenceTable.applyCopies(null)', () => new CoherenceTable(R1).applyCopies(null as never), new OptionError('CoherenceTable.applyCopies: copies must be an array of copies (from copiesFor), got null')],
  ]);
});

describe('range mappers, access modes and split refuse bad input', () => {
  const f = (): never => undefined as never;
  refuses([
    ['defineRangeMapper(5, ...)', () => defineRangeMapper(5 as never, f, f), new ArgumentError('defineRangeMapper: name must be a non-empty string, how diagnostics name the mapper, got 5')],
    ['defineRangeMapper with a mismatch that is not a function', () => defineRangeMapper('rows', 'no' as never, f), new ArgumentError("defineRangeMapper: mismatch must be a function (kernelDims, bufferDims) => reason | undefined, got 'no'; pass () => undefined for a mapper that serves every dimensionality")],
    ['defineRangeMapper without a mapper function', () => defineRangeMapper('rows', f, undefined as never), new ArgumentError('defineRangeMapper: fn must be the mapper function (chunk, bufferRange) => subrange, box or region, got undefined')],
    ['applyRangeMapper(5, ...)', () => applyRangeMapper(5 as never, C1, R1), new ArgumentError('applyRangeMapper: mapper must be a range mapper such as access.oneToOne(), got 5')],
    ['applyRangeMapper with a subrange for a chunk', () => applyRangeMapper(access.oneToOne(), [0] as never, R1), new GeometryError('applyRangeMapper: chunk must be a chunk (from chunk() or split()), got an array of length 1')],
    ['applyRangeMapper without a buffer range', () => applyRangeMapper(access.oneToOne() as never, C1, null as never), new GeometryError("applyRangeMapper: bufferRange must be the buffer's extent, 0 to 3 sizes (from range()), got null")],
    ['clampedBox with a max of another dimensionality', () => clampedBox([0], [1, 2], R1), new GeometryError('clampedBox: max must be an array of 1 integers, one per dimension of the 1-dimensional buffer, got an array of length 2')],
    ['clampedBox with NaN', () => clampedBox([NaN], [2], R1), new GeometryError('clampedBox: min[0] must be an integer (it may lie outside the buffer), got NaN')],
    ['access.fixed(null)', () => access.fixed(null as never), new GeometryError(`access.fixed: part ${SET}, got null`)],
    ['access.evenSplit({ gran })', () => access.evenSplit({ gran: 2 } as never), new OptionError("evenSplit options has no option 'gran'; did you mean 'granularity'? Valid options: 'granularity'")],
    ['accessOf(mode, null)', () => accessOf('write', null as never), new OptionError('access options must be an object of options (or left out), got null')],
    ['accessOf with noinit', () => accessOf('write', { noinit: true } as never), new OptionError("access options has no option 'noinit'; did you mean 'noInit'? Valid options: 'noInit'")],
    ["accessOf with noInit: 'yes'", () => accessOf('write', { noInit: 'yes' } as never), new OptionError("noInit must be true or false, got 'yes'")],
    ['isProducer(null)', () => isProducer(null as never), new OptionError("isProducer: a must be an Access (from accessOf('read'), accessOf('write', { noInit: true }), ...), got null")],
    ['split(null, 2)', () => split(null as never, 2), new GeometryError('split globalRange must be an array of 0 to 3 coordinates, got null')],
    ['split with options null', () => split(R1, 2, null as never), new OptionError('split options must be an object of options (or left out), got null')],
    ['split with { gran }', () => split(R1, 2, { gran: 2 } as never), new OptionError("split options has no option 'gran'; did you mean 'granularity'? Valid options: 'granularity', 'axes'")],
    ["formatTaskId('x')", () => formatTaskId('x' as never), new ArgumentError("formatTaskId: id must be a task id (a TaskRecord's id, an integer >= 0), got 'x'")],
    ['dependencyTasks(null)', () => dependencyTasks(null as never), new ArgumentError('dependencyTasks: t must be a TaskRecord (what Queue.submit returns, or onTask receives), got null')],
  ]);
});

describe('queues, buffers and command groups refuse bad input', () => {
  let ctx: Context;
  let job: Job;
  let q: Queue;
  let b: GraphBuffer<'float64', 1>;
  const tasks: string[] = [];

  beforeAll(async () => {
    ctx = await createContext({ topology: { subs: 2, coresPerCluster: 1 } });
    job = ctx.createJob(1);
    q = ctx.createQueue({ job, chunks: 2, onTask: (t) => tasks.push(t.kind) });
    q.load(await ctx.createModule(new URL('./fixtures/graphKernels.ts', import.meta.url)));
    b = q.buffer(Float64Array, [8]);
  });
  afterAll(async () => {
    await ctx?.destroy();
  });

  const QUEUE_OPTIONS = "Valid options: 'job', 'chunks', 'maxTasksInFlight', 'uninitializedReads', 'onWarning', 'onTask', 'debugBounds', 'horizonStep', 'horizonMaxParallelism'";
  it.each<[string, unknown, string]>([
    ['null', null, 'createQueue options must be an object of options (or left out), got null'],
    ['a number', 5, 'createQueue options must be an object of options (or left out), got 5'],
    ['a misspelt option', { chunk: 2 }, `createQueue options has no option 'chunk'; did you mean 'chunks'? ${QUEUE_OPTIONS}`],
    ["debugBounds: 'y'", { debugBounds: 'y' }, "debugBounds must be true or false, got 'y'"],
    ['onTask: 5', { onTask: 5 }, 'onTask must be a function, got 5'],
    ["onWarning: 'log'", { onWarning: 'log' }, "onWarning must be a function, got 'log'"],
  ])('createQueue refuses options %s before taking any Sub', (_, options, message) => {
    const free = ctx.availableSubCount;
    expect(() => ctx.createQueue(options as never)).toThrow(new OptionError(message));
    expect(ctx.availableSubCount).toBe(free);
  });

  it('createQueue refuses a Job of another Context', async () => {
    const other = await createContext({ topology: { coresPerCluster: 1 } });
    try {
      expect(() => ctx.createQueue({ job: other.createJob() })).toThrow(new OptionError("job belongs to another Context; create it with this Context's createJob()"));
    } finally {
      await other.destroy();
    }
  });

  it.each<[string, () => unknown, Error]>([
    ['buffer(Float64Array, 4)', () => q.buffer(Float64Array, 4 as never), new GeometryError('buffer shape must be an array of 0 to 3 coordinates, got 4')],
    ['buffer options null', () => q.buffer(Float64Array, [4], null as never), new OptionError('buffer options must be an object of options (or left out), got null')],
    ['buffer option nme', () => q.buffer(Float64Array, [4], { nme: 'a' } as never), new OptionError("buffer options has no option 'nme'; did you mean 'name'? Valid options: 'init', 'name'")],
    ['buffer name 5', () => q.buffer(Float64Array, [4], { name: 5 } as never), new OptionError('buffer option name must be a string, got 5')],
    ['submit(null)', () => q.submit(null as never), new ArgumentError('submit: group must be a function (cg) => { ... } that declares the task\'s accesses and calls parallelFor or hostTask, got null')],
    ['write with { noinit }', () => q.submit((cg) => void cg.write(b, access.oneToOne(), { noinit: true } as never)), new OptionError("access options has no option 'noinit'; did you mean 'noInit'? Valid options: 'noInit'")],
    ['hostTask options { nam }', () => q.submit((cg) => cg.hostTask(() => undefined, { nam: 'x' } as never)), new OptionError("hostTask options has no option 'nam'; did you mean 'name'? Valid options: 'name'")],
    ['hostTask options null', () => q.submit((cg) => cg.hostTask(() => undefined, null as never)), new OptionError('hostTask options must be an object of options (or left out), got null')],
    ['hostTask(range, 5)', () => q.submit((cg) => cg.hostTask([4], 5 as never)), new ArgumentError('hostTask needs a function to run on the host, got 5')],
  ])('%s', (_, call, error) => {
    expect(call).toThrow(error);
    expect(call).toThrow(error.constructor as new () => Error);
  });

  it('fence rejects a part that is not a subrange or box, and a value that is not a buffer', async () => {
    await expect(q.fence(b, 5 as never)).rejects.toThrow(new ArgumentError('fence: part must be a subrange or box of buffer B0 (subrange(offset, range) or box(min, max)), or left out for the whole buffer, got 5'));
    await expect(q.fence(null as never)).rejects.toThrow(new ArgumentError("fence: buffer must be a buffer made by this queue's buffer(), got null"));
    await expect(q.fence(b, null as never)).rejects.toBeInstanceOf(ArgumentError);
  });

  it('built no task for any refused call', () => {
    expect(tasks).toEqual([]);
    expect(q.pendingTasks).toBe(0);
  });
});

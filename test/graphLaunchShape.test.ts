import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { access, applyRangeMapper, checkLaunchShape, createContext, GeometryError, OptionError, range, type Context, type KernelModule } from '../src/index.js';
import { launchChunks } from '../src/graph/launchShape.js';

/** The chunks of a launch as `offset+range` strings, in split order. */
const chunksOf = (shape: Parameters<typeof checkLaunchShape>[0], count: number): string[] =>
  launchChunks(checkLaunchShape(shape), count).map((c) => `${c.offset.join(',')}+${c.range.join(',')}`);

describe('checkLaunchShape', () => {
  it('fills in a plain range: offset zero, work-groups and split constraint of one item', () => {
    expect(checkLaunchShape([10, 20])).toEqual({ global: [10, 20], offset: [0, 0], local: [1, 1], splitConstraint: [1, 1], granularity: [1, 1] });
    expect(checkLaunchShape({ global: [4, 4, 4] })).toEqual({ global: [4, 4, 4], offset: [0, 0, 0], local: [1, 1, 1], splitConstraint: [1, 1, 1], granularity: [1, 1, 1] });
  });

  it('splits by the lcm of the local size and the split constraint', () => {
    expect(checkLaunchShape({ global: [24], local: [4], splitConstraint: [6] }).granularity).toEqual([12]);
    expect(checkLaunchShape({ global: [16, 30], local: [8, 1], splitConstraint: [4, 15] }).granularity).toEqual([8, 15]);
    expect(checkLaunchShape({ global: [12, 12, 12], offset: [1, 2, 3], local: [2, 3, 4] })).toEqual({
      global: [12, 12, 12], offset: [1, 2, 3], local: [2, 3, 4], splitConstraint: [1, 1, 1], granularity: [2, 3, 4],
    });
  });

  it("refuses a split constraint of 0 with Celerity's message", () => {
    expect(() => checkLaunchShape({ global: [10], splitConstraint: [0] })).toThrow(new GeometryError('Split constraint cannot be 0'));
    expect(() => checkLaunchShape({ global: [10, 10], splitConstraint: [2, 0] })).toThrow(new GeometryError('Split constraint cannot be 0'));
  });

  it("refuses a split constraint that does not divide the global size with Celerity's message", () => {
    expect(() => checkLaunchShape({ global: [10], splitConstraint: [3] })).toThrow(
      new GeometryError('The split constraint [3] does not evenly divide the kernel global size [10]'),
    );
    expect(() => checkLaunchShape({ global: [10, 20], splitConstraint: [1, 3] })).toThrow(
      new GeometryError('The split constraint [1,3] does not evenly divide the kernel global size [10,20]'),
    );
    // Work-groups of one item leave the constraint as given: no "effective".
    expect(() => checkLaunchShape({ global: [9, 9, 9], local: [1, 1, 1], splitConstraint: [2, 1, 1] })).toThrow(
      new GeometryError('The split constraint [2,1,1] does not evenly divide the kernel global size [9,9,9]'),
    );
  });

  it('names the effective constraint, the lcm with the local size, when work-groups hold more than one item', () => {
    expect(() => checkLaunchShape({ global: [16], local: [4], splitConstraint: [6] })).toThrow(
      new GeometryError('The effective split constraint [12] does not evenly divide the kernel global size [16]'),
    );
    expect(() => checkLaunchShape({ global: [8, 8], local: [2, 2], splitConstraint: [3, 1] })).toThrow(
      new GeometryError('The effective split constraint [6,2] does not evenly divide the kernel global size [8,8]'),
    );
  });

  it('accepts constraints that divide the global size, the whole size included, and an empty global size', () => {
    expect(checkLaunchShape({ global: [10], splitConstraint: [10] }).granularity).toEqual([10]);
    expect(checkLaunchShape({ global: [0], splitConstraint: [4] }).granularity).toEqual([4]);
    expect(checkLaunchShape({ global: [0, 8], local: [3, 2] }).granularity).toEqual([3, 2]);
  });

  it('refuses a local size that is 0 or does not divide the global size', () => {
    expect(() => checkLaunchShape({ global: [10], local: [4] })).toThrow(
      new GeometryError('the local size [4] does not evenly divide the kernel global size [10] along dimension 0; choose a work-group size that divides it'),
    );
    expect(() => checkLaunchShape({ global: [8, 8], local: [8, 0] })).toThrow(
      new GeometryError('the local size [8,0] does not evenly divide the kernel global size [8,8] along dimension 1; choose a work-group size that divides it'),
    );
  });

  it('refuses parts of another dimensionality, bad coordinates and unknown keys', () => {
    expect(() => checkLaunchShape({ global: [8, 8], offset: [1] })).toThrow(
      new GeometryError('launch shape offset (1) is 1-dimensional but the global size (8,8) is 2-dimensional; give one entry per dimension'),
    );
    expect(() => checkLaunchShape({ global: [8], local: [2, 2] })).toThrow(/^launch shape local \(2,2\) is 2-dimensional/);
    expect(() => checkLaunchShape({ global: [8], offset: [-1] })).toThrow(new GeometryError('launch shape offset[0] must be a non-negative integer, got -1'));
    expect(() => checkLaunchShape({ global: [1, 2, 3, 4] })).toThrow(new GeometryError('launch shape global must be an array of 0 to 3 coordinates, got an array of length 4'));
    expect(() => checkLaunchShape({ global: [8], localSize: [2] } as never)).toThrow(OptionError);
    expect(() => checkLaunchShape({ global: [8], localSize: [2] } as never)).toThrow(/has no option 'localSize'; did you mean 'local'\?/);
  });
});

describe('launchChunks', () => {
  it('cuts a 1-D launch by its granularity, handing whole granules to the first chunks', () => {
    expect(chunksOf({ global: [100], splitConstraint: [20] }, 3)).toEqual(['0+40', '40+40', '80+20']);
    expect(chunksOf({ global: [96], local: [8], splitConstraint: [12] }, 3)).toEqual(['0+48', '48+24', '72+24']);
    // Fewer granules than chunks: fewer chunks.
    expect(chunksOf({ global: [8], local: [4] }, 4)).toEqual(['0+4', '4+4']);
    expect(chunksOf({ global: [0], splitConstraint: [4] }, 4)).toEqual([]);
  });

  it('shifts every chunk by the kernel offset and keeps the global size', () => {
    expect(chunksOf({ global: [10], offset: [5] }, 3)).toEqual(['5+4', '9+3', '12+3']);
    const chunks = launchChunks(checkLaunchShape({ global: [10], offset: [5] }), 3);
    expect(chunks.map((c) => c.globalSize)).toEqual([[10], [10], [10]]);
  });

  it('cuts 2-D and 3-D launches into whole work-groups, offset included', () => {
    expect(chunksOf({ global: [64, 64], offset: [8, 4], local: [8, 8] }, 4)).toEqual(['8,4+32,32', '8,36+32,32', '40,4+32,32', '40,36+32,32']);
    expect(chunksOf({ global: [24, 16], local: [8, 1], splitConstraint: [1, 16] }, 4)).toEqual(['0,0+8,16', '8,0+8,16', '16,0+8,16']);
    expect(chunksOf({ global: [8, 8, 8], offset: [1, 1, 1], local: [2, 2, 2] }, 2)).toEqual(['1,1,1+4,8,8', '5,1,1+4,8,8']);
  });

  it('gives range mappers chunks whose offset includes the kernel offset, clamped to the buffer', () => {
    const [first, second] = launchChunks(checkLaunchShape({ global: [8], offset: [6] }), 2);
    expect(applyRangeMapper(access.oneToOne(), first!, range([12])).boxes.map((b) => [b.min, b.max])).toEqual([[[6], [10]]]);
    // Items 10..13 lie past the buffer's end: only what lies within it is accessed.
    expect(applyRangeMapper(access.oneToOne(), second!, range([12])).boxes.map((b) => [b.min, b.max])).toEqual([[[10], [12]]]);
    expect(applyRangeMapper(access.neighborhood([1]), first!, range([12])).boxes.map((b) => [b.min, b.max])).toEqual([[[5], [11]]]);
  });
});

describe('parallelFor with a launch shape', () => {
  let ctx: Context;
  let mod: KernelModule;
  beforeAll(async () => {
    ctx = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } });
    mod = await ctx.createModule(new URL('./fixtures/graphKernels.ts', import.meta.url));
  });
  afterAll(async () => {
    await ctx.destroy();
  });

  it('runs the items [offset, offset + global) and records the launch on the task', async () => {
    const q = ctx.createQueue({ chunks: 2 });
    q.load(mod);
    const b = q.buffer(Float64Array, [12], { init: new Float64Array(12).fill(-1) });
    const t = q.submit((cg) => cg.parallelFor({ global: [6], offset: [4], local: [3] }, 'iota', cg.write(b, access.oneToOne()), 100));
    expect(t.launch).toEqual({ global: [6], offset: [4], local: [3], splitConstraint: [1], granularity: [3] });
    expect(t.range).toEqual([6]);
    expect(t.chunks.map((c) => [c.offset[0], c.range[0]])).toEqual([[4, 3], [7, 3]]);
    expect(t.accesses[0]!.region.boxes.map((x) => [x.min, x.max])).toEqual([[[4], [10]]]);
    expect([...(await q.fence(b))]).toEqual([-1, -1, -1, -1, 104, 105, 106, 107, 108, 109, -1, -1]);
    await q.destroy();
  });

  it('refuses a split constraint that does not divide the global size before the task is added', async () => {
    const q = ctx.createQueue({ chunks: 2 });
    q.load(mod);
    const b = q.buffer(Float64Array, [10]);
    expect(() => q.submit((cg) => cg.parallelFor({ global: [10], splitConstraint: [3] }, 'iota', cg.write(b, access.oneToOne(), { noInit: true }), 0))).toThrow(
      new GeometryError('The split constraint [3] does not evenly divide the kernel global size [10]'),
    );
    expect(() => q.submit((cg) => cg.parallelFor({ global: [10], splitConstraint: [0] }, 'iota', cg.write(b, access.oneToOne(), { noInit: true }), 0))).toThrow(
      new GeometryError('Split constraint cannot be 0'),
    );
    // Nothing was added: the next task is T1.
    const t = q.submit((cg) => cg.parallelFor({ global: [10], splitConstraint: [5] }, 'iota', cg.write(b, access.oneToOne(), { noInit: true }), 0));
    expect(t.id).toBe(1);
    expect(t.launch?.offset).toEqual([0]);
    expect(t.chunks.map((c) => c.range[0])).toEqual([5, 5]);
    await q.destroy();
  });
});

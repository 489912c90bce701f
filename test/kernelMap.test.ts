import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext, DefaultBatchSize, LocalityMode, MaxTaskCount, OptionError, Result, type Context, type Job } from '../src/index.js';

let ctx: Context;
let job: Job;

beforeAll(async () => {
  ctx = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 1 } });
  job = ctx.createJob();
  job.load(await ctx.createModule(new URL('./fixtures/kernels.ts', import.meta.url)));
});

afterAll(async () => {
  await ctx?.destroy();
});

describe('Job.buildMap', () => {
  it('binds a kernel name to a taskCount', () => {
    const map = job.buildMap('count_tasks', 12);
    expect(map.kernelName).toBe('count_tasks');
    expect(map.taskCount).toBe(12);
    expect(job.buildMap('count_tasks', MaxTaskCount).taskCount).toBe(1048575);
  });

  it.each<[string, number, string]>([
    ['MaxTaskCount + 1', MaxTaskCount + 1, 'taskCount must be an integer in [1, 1048575], got 1048576'],
    ['a negative taskCount', -1, 'taskCount must be an integer in [1, 1048575], got -1'],
    ['a fractional taskCount', 2.5, 'taskCount must be an integer in [1, 1048575], got 2.5'],
    ['NaN', Number.NaN, 'taskCount must be an integer in [1, 1048575], got NaN'],
  ])('rejects %s with the limit in the message', (_, taskCount, message) => {
    expect(() => job.buildMap('count_tasks', taskCount)).toThrow(new OptionError(message));
  });

  it('runs a Map of MaxTaskCount tasks, each task once', async () => {
    const counts = ctx.memAlloc(MaxTaskCount * 4);
    const map = job.buildMap('count_tasks', MaxTaskCount).setBatchSize(65536);
    await map.execute(counts);
    await map.synchronize();
    const seen = ctx.hostView(counts, 'int32');
    expect(seen.length).toBe(MaxTaskCount);
    expect(seen.every((n) => n === 1)).toBe(true);
    ctx.memFree(counts);
  });

  it('refuses a Map of zero tasks when it is built: a launch with no work is skipped, not built', () => {
    expect(() => job.buildMap('throw_at', 0)).toThrow(new OptionError(`taskCount must be an integer in [1, ${MaxTaskCount}], got 0`));
  });
});

describe('KernelMap.setBatchSize', () => {
  it(`defaults to DefaultBatchSize (${DefaultBatchSize}) and returns the Map for chaining`, () => {
    const map = job.buildMap('count_tasks', 10);
    expect(map.batchSize).toBe(16);
    expect(map.setBatchSize(3)).toBe(map);
    expect(map.batchSize).toBe(3);
    expect(map.setBatchSize(MaxTaskCount).batchSize).toBe(MaxTaskCount);
  });

  it.each<[string, unknown, string]>([
    ['0', 0, 'batchSize must be an integer in [1, 1048575], got 0'],
    ['MaxTaskCount + 1', MaxTaskCount + 1, 'batchSize must be an integer in [1, 1048575], got 1048576'],
    ['a fraction', 1.5, 'batchSize must be an integer in [1, 1048575], got 1.5'],
    ['a numeric string', '8', "batchSize must be an integer in [1, 1048575], got '8'"],
  ])('rejects %s and keeps the previous batch size', (_, batchSize, message) => {
    const map = job.buildMap('count_tasks', 10).setBatchSize(4);
    expect(() => map.setBatchSize(batchSize as number)).toThrow(new OptionError(message));
    expect(map.batchSize).toBe(4);
  });
});

describe('KernelMap.setLocalityMode', () => {
  it('defaults to CompactMode and accepts SpreadMode', () => {
    const map = job.buildMap('count_tasks', 10);
    expect(map.localityMode).toBe(LocalityMode.CompactMode);
    expect(map.setLocalityMode(LocalityMode.SpreadMode)).toBe(map);
    expect(map.localityMode).toBe('spread');
    expect(map.setLocalityMode('compact').localityMode).toBe('compact');
  });

  it('rejects an unknown mode, naming the valid ones, and keeps the previous mode', () => {
    const map = job.buildMap('count_tasks', 10).setLocalityMode('spread');
    expect(() => map.setLocalityMode('dense' as LocalityMode)).toThrow(new OptionError("localityMode must be one of 'compact', 'spread', got 'dense'"));
    expect(map.localityMode).toBe('spread');
  });
});

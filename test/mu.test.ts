import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext, type Context, type Job } from '../src/index.js';
import { getTaskCount, getTaskIdx, message, mu } from '../src/mu/index.js';

const fixtures = new URL('./fixtures/', import.meta.url);
const OUTSIDE = 'mu.message() can only be called from a kernel running on an MU core';

let ctx: Context;
let job: Job;

beforeAll(async () => {
  ctx = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } });
  job = ctx.createJob();
  job.load(await ctx.createModule(new URL('kernels.ts', fixtures)));
});

afterAll(async () => {
  await ctx?.destroy();
});

describe('getTaskIdx and getTaskCount', () => {
  it('give every invocation its own index in [0, taskCount) and the Map\'s taskCount', async () => {
    const out = ctx.memAlloc(2 * 37 * 4);
    const map = job.buildMap('task_info', 37).setBatchSize(5);
    await map.execute(out);
    await map.synchronize();
    expect([...ctx.hostView(out, 'int32')]).toEqual(Array.from({ length: 37 }, (_, t) => [t, 37]).flat());
    ctx.memFree(out);
  });

  it('follow the taskCount of each Map a core runs in turn', async () => {
    const out = ctx.memAlloc(8 * 4);
    const three = job.buildMap('echo_count', 3);
    const eight = job.buildMap('echo_count', 8).setBatchSize(1);
    await eight.execute(out);
    await three.execute(out);
    await eight.synchronize();
    await three.synchronize();
    expect([...ctx.hostView(out, 'int32')]).toEqual([3, 3, 3, 8, 8, 8, 8, 8]);
    ctx.memFree(out);
  });

  it('are exported both as functions and on the mu namespace', () => {
    expect(mu.getTaskIdx).toBe(getTaskIdx);
    expect(mu.getTaskCount).toBe(getTaskCount);
    expect(mu.message).toBe(message);
    expect(Object.isFrozen(mu)).toBe(true);
  });
});

describe('mu.message', () => {
  it('delivers every message of a launch to the message callback before synchronize() resolves', async () => {
    const seen: unknown[] = [];
    const map = job.buildMap('send_index', 1000).setBatchSize(7).setMessageCallback((m) => seen.push(m));
    await map.execute();
    await map.synchronize();
    const tasks = seen.map((m) => (m as { task: number }).task).sort((a, b) => a - b);
    expect(tasks).toEqual(Array.from({ length: 1000 }, (_, t) => t));
  });

  it('delivers the messages of each pipelined launch before synchronize() resolves', async () => {
    let count = 0;
    const map = job.buildMap('send_index', 100).setBatchSize(3).setMessageCallback(() => count++);
    for (let k = 0; k < 5; k++) await map.execute();
    await map.synchronize();
    expect(count).toBe(500);
  });

  it('keeps a launch running when the message callback throws', async () => {
    const out = ctx.memAlloc(4);
    const map = job.buildMap('send_index', 20).setMessageCallback(() => {
      throw new Error('callback fails');
    });
    await map.execute();
    await map.synchronize();
    expect(map.getExecuteStatus()).toBe('Idle');
    const after = job.buildMap('echo_count', 1);
    await after.execute(out);
    await after.synchronize();
    expect([...ctx.hostView(out, 'int32')]).toEqual([1]);
    ctx.memFree(out);
  });

  it('throws when called on the host, outside any kernel', () => {
    expect(() => message('hello')).toThrow(new Error(OUTSIDE));
  });

  it('throws on an MU core between launches', async () => {
    // Both cores run a launch first, so each has had a kernel's message channel installed.
    const warm = job.buildMap('send_index', 2).setBatchSize(1);
    await warm.execute();
    await warm.synchronize();
    job.load(await ctx.createModule(new URL('outsideKernel.ts', fixtures)));
    const seen: unknown[] = [];
    const map = job.buildMap('report_outside', 1).setMessageCallback((m) => seen.push(m));
    await map.execute();
    await map.synchronize();
    expect(seen).toEqual([OUTSIDE]);
  });
});

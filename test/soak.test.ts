import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext, Result, type Context, type DevicePtr, type Job, type KernelMap } from '../src/index.js';

/**
 * Soak: many execute/synchronize cycles must leave the host heap, the process's memory and the set
 * of MU cores where they were. One Context of two cores serves every case; the kernel is
 * mark_thread over two tasks of one batch each, so the launch plan puts task t on core t and
 * `threads[t]` is the worker thread id of core t after every launch. A core that died and was
 * replaced would show up as a new thread id.
 *
 * Memory is compared between the halves of a run (after a warm-up), not against an absolute
 * figure: a leak grows both halves alike, while V8's and the allocator's one-off growth lands in
 * the first. The bounds are generous on purpose; the point is no leak, not a tight budget.
 */

const CYCLES = 10_000;
const WARMUP = 500;
const MiB = 1 << 20;
/** Growth allowed over the second half of a run, with and without a forced collection first. */
const HEAP_GROWTH = { collected: 8 * MiB, uncollected: 100 * MiB };
const RSS_GROWTH = 200 * MiB;

let ctx: Context;
let job: Job;
let counts: DevicePtr;
let threads: DevicePtr;
let originalThreads: number[];

/** A full collection when the runtime lets us force one (node --expose-gc, or the flag set now). */
const collect: (() => void) | undefined = (() => {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === 'function') return exposed;
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    return typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  }
})();

interface Sample {
  readonly rss: number;
  readonly heapUsed: number;
}

async function sample(): Promise<Sample> {
  // Let finished launches' promises and callbacks settle before collecting.
  await new Promise((resolve) => setImmediate(resolve));
  if (collect !== undefined) for (let i = 0; i < 3; i++) collect();
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heapUsed };
}

function threadIds(): number[] {
  return [...ctx.hostView(threads, 'int32')];
}

function countsSeen(): number[] {
  return [...ctx.hostView(counts, 'int32')];
}

/** The launch every cycle runs: task t on core t, counting itself and recording its thread. */
function build(): KernelMap {
  return job.buildMap('mark_thread', 2).setBatchSize(1);
}

/**
 * Runs `cycles` execute/synchronize cycles with the Map `next(i)` gives, checking after each one
 * that both cores ran and that neither was replaced. Returns how many cycles saw other threads.
 */
async function cycle(cycles: number, next: (i: number) => KernelMap): Promise<number> {
  const view = ctx.hostView(threads, 'int32');
  let foreign = 0;
  for (let i = 0; i < cycles; i++) {
    view.fill(0);
    const map = next(i);
    if ((await map.execute(counts, threads)) !== Result.Success) throw new Error(`cycle ${i}: execute did not succeed`);
    await map.synchronize();
    if (view[0] !== originalThreads[0] || view[1] !== originalThreads[1]) foreign++;
  }
  return foreign;
}

/** Warm-up, then two halves of CYCLES / 2 cycles each, with a memory sample between them. */
async function soak(next: (i: number) => KernelMap): Promise<{ first: Sample; mid: Sample; last: Sample; foreign: number }> {
  let foreign = await cycle(WARMUP, next);
  ctx.hostView(counts, 'int32').fill(0);
  const first = await sample();
  foreign += await cycle(CYCLES / 2, next);
  const mid = await sample();
  foreign += await cycle(CYCLES / 2, next);
  const last = await sample();
  return { first, mid, last, foreign };
}

function expectNoLeak({ first, mid, last }: { first: Sample; mid: Sample; last: Sample }): void {
  const heapBound = collect === undefined ? HEAP_GROWTH.uncollected : HEAP_GROWTH.collected;
  const report = `heapUsed ${[first, mid, last].map((s) => (s.heapUsed / MiB).toFixed(1)).join(' → ')} MiB, rss ${[first, mid, last].map((s) => (s.rss / MiB).toFixed(1)).join(' → ')} MiB`;
  expect(last.heapUsed - mid.heapUsed, report).toBeLessThan(heapBound);
  expect(last.rss - mid.rss, report).toBeLessThan(RSS_GROWTH);
}

beforeAll(async () => {
  ctx = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } });
  const module = await ctx.createModule(new URL('./fixtures/kernels.ts', import.meta.url));
  job = ctx.createJob();
  job.load(module);
  counts = ctx.memAlloc(8);
  threads = ctx.memAlloc(8);
  const probe = build();
  await probe.execute(counts, threads);
  await probe.synchronize();
  originalThreads = threadIds();
});

afterAll(async () => {
  await ctx?.destroy();
});

describe('soak', () => {
  it('runs each core on its own worker thread', () => {
    expect(originalThreads).toHaveLength(2);
    expect(originalThreads[0]).not.toBe(originalThreads[1]);
    expect(originalThreads.every((t) => t > 0)).toBe(true);
  });

  it(`runs ${CYCLES} execute/synchronize cycles on one reused Map with the heap, memory and cores stable`, async () => {
    const map = build();
    const run = await soak(() => map);
    expect(run.foreign).toBe(0);
    expect(countsSeen()).toEqual([CYCLES, CYCLES]);
    expect(threadIds()).toEqual(originalThreads);
    expect(map.getExecuteStatus()).toBe('Idle');
    expect(job.defaultStream.inFlight).toBe(0);
    expectNoLeak(run);
  }, 60_000);

  it(`runs ${CYCLES} execute/synchronize cycles on a fresh Map each time with the heap, memory and cores stable`, async () => {
    const run = await soak(() => build());
    expect(run.foreign).toBe(0);
    expect(countsSeen()).toEqual([CYCLES, CYCLES]);
    expect(threadIds()).toEqual(originalThreads);
    expect(job.defaultStream.inFlight).toBe(0);
    expectNoLeak(run);
  }, 60_000);
});

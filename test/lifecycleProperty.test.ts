import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext, Result, StateError, type ChromeTrace, type Context, type DevicePtr, type Job, type KernelMap, type Stream } from '../src/index.js';

/**
 * Property: random interleavings of execute, cancel, synchronize, setStream and destroyStream over
 * several Maps on two Jobs and several streams, with injected core deaths, leave every launch in
 * exactly one of Idle, Cancelled or Fail; every task of a launch that ended Idle ran exactly once;
 * no task of a launch cancelled by a cancel() starts after that cancel() resolved; and the Context
 * runs a fresh launch on every core afterwards. Only a Map one of whose own launches killed a core
 * may fail. Each launch counts its tasks in its own part of a
 * counts buffer; how each execute ended is read from the Context's execution trace.
 */

const TASKS = 32;
const MAPS = 3;
const STREAMS = 2;
const MAX_OPS = 14;
/** A hang guard, not a speed check: a case that takes this long has hung. */
const CASE_LIMIT_MS = 25_000;

type Op =
  | { readonly kind: 'execute'; readonly map: number; readonly await: boolean; readonly dieAt: number }
  | { readonly kind: 'cancel'; readonly map: number; readonly await: boolean }
  | { readonly kind: 'synchronize'; readonly map: number }
  | { readonly kind: 'setStream'; readonly map: number; readonly stream: number }
  | { readonly kind: 'destroyStream'; readonly stream: number }
  | { readonly kind: 'yield' };

const mapIdx = fc.integer({ min: 0, max: MAPS - 1 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('execute' as const), map: mapIdx, await: fc.boolean(), dieAt: fc.oneof({ weight: 9, arbitrary: fc.constant(-1) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: TASKS - 1 }) }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), map: mapIdx, await: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('synchronize' as const), map: mapIdx }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('setStream' as const), map: mapIdx, stream: fc.integer({ min: -1, max: STREAMS - 1 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('destroyStream' as const), stream: fc.integer({ min: 0, max: STREAMS - 1 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'yield' as const }) },
);
const caseArb = fc.record({
  ops: fc.array(opArb, { minLength: 1, maxLength: MAX_OPS }),
  /** Which Job each Map is built on, and its batch size. */
  jobs: fc.array(fc.integer({ min: 0, max: 1 }), { minLength: MAPS, maxLength: MAPS }),
  batchSizes: fc.array(fc.constantFrom(1, 4, 16), { minLength: MAPS, maxLength: MAPS }),
});

/** One execute that the Map accepted for tracing (it was not refused for a failed Map). */
interface Launch {
  readonly map: number;
  /** The Map object: a failed Map is replaced by a new one in the same place. */
  readonly mapObject: KernelMap;
  /** Whether one of its tasks ends its core (an injected core death). */
  readonly dies: boolean;
  readonly base: number;
  /** Counts when a cancel() of its Map, called after this execute, resolved. */
  snapshot: number[] | undefined;
  result: Result | undefined;
}

let ctx: Context;
let jobs: Job[];

beforeAll(async () => {
  // Two Subs of one core each: one Job per Sub.
  ctx = await createContext({ topology: { subs: 2, clustersPerSub: 1, coresPerCluster: 1 } });
  const module = await ctx.createModule(new URL('./fixtures/propertyKernels.ts', import.meta.url));
  const counter = await ctx.createModule(new URL('./fixtures/kernels.ts', import.meta.url));
  jobs = [ctx.createJob(1), ctx.createJob(1)];
  for (const job of jobs) {
    job.load(module);
    job.load(counter);
  }
});

afterAll(async () => {
  await ctx?.destroy();
});

/** How each traced execute ended, by trace execute id (1 = the first execute since startTrace). */
function outcomes(trace: ChromeTrace): Map<number, string[]> {
  const ends = new Map<number, string[]>();
  for (const e of trace.traceEvents) {
    if (e.cat !== 'execute' || e.ph !== 'e' || e.name !== 'prop_task') continue;
    const id = e.id as number;
    ends.set(id, [...(ends.get(id) ?? []), String((e.args as { outcome: unknown }).outcome)]);
  }
  return ends;
}

async function runCase(ops: readonly Op[], jobOf: readonly number[], batchSizes: readonly number[]): Promise<void> {
  const counts: DevicePtr = ctx.memAlloc(MAX_OPS * TASKS * 4);
  const view = ctx.hostView(counts, 'int32');
  const region = (l: Launch): number[] => [...view.subarray(l.base, l.base + TASKS)];
  const streams: Stream[] = Array.from({ length: STREAMS }, () => ctx.createStream(2));
  const build = (m: number): KernelMap => jobs[jobOf[m]!]!.buildMap('prop_task', TASKS).setBatchSize(batchSizes[m]!);
  const maps = Array.from({ length: MAPS }, (_, m) => build(m));
  const launches: Launch[] = [];
  const pending: Promise<unknown>[] = [];
  ctx.startTrace();
  try {
    for (const op of ops) {
      switch (op.kind) {
        case 'execute': {
          // A failed Map is terminal: it is replaced, as a user would.
          if (maps[op.map]!.getExecuteStatus() === 'Fail') maps[op.map] = build(op.map);
          const launch: Launch = { map: op.map, mapObject: maps[op.map]!, dies: op.dieAt >= 0, base: launches.length * TASKS, snapshot: undefined, result: undefined };
          launches.push(launch);
          const accepted = maps[op.map]!.execute(counts, launch.base, 20_000, op.dieAt).then((r) => (launch.result = r));
          if (op.await) await accepted;
          else pending.push(accepted);
          break;
        }
        case 'cancel': {
          const map = maps[op.map]!;
          const covered = launches.filter((l) => l.map === op.map);
          const cancelled = map.cancel().then(() => {
            for (const l of covered) l.snapshot = region(l);
          });
          if (op.await) await cancelled;
          else pending.push(cancelled);
          break;
        }
        case 'synchronize':
          await maps[op.map]!.synchronize().catch(() => undefined);
          break;
        case 'setStream':
          maps[op.map]!.setStream(op.stream < 0 ? undefined : streams[op.stream]);
          break;
        case 'destroyStream':
          ctx.destroyStream(streams[op.stream]!);
          break;
        case 'yield':
          await new Promise((r) => setImmediate(r));
          break;
      }
    }
    await Promise.all(pending);
    for (const map of maps) await map.synchronize().catch(() => undefined);
  } finally {
    const trace = ctx.stopTrace();
    for (const s of streams) if (!s.destroyed) ctx.destroyStream(s);
    try {
      const ends = outcomes(trace);
      expect(ends.size).toBe(launches.length);
      launches.forEach((l, i) => {
        const end = ends.get(i + 1);
        // Exactly one end, and one of the three.
        expect(end).toHaveLength(1);
        expect(['Idle', 'Cancelled', 'Fail']).toContain(end![0]);
        const ran = region(l);
        if (end![0] === 'Idle') expect(ran).toEqual(new Array(TASKS).fill(1));
        // Fault isolation: only a Map whose own launch killed a core fails.
        if (end![0] === 'Fail') expect(launches.some((o) => o.mapObject === l.mapObject && o.dies)).toBe(true);
        else expect(ran.every((c) => c === 0 || c === 1)).toBe(true);
        if (l.result === Result.Failure) expect(ran).toEqual(new Array(TASKS).fill(0));
        if (end![0] === 'Cancelled' && l.snapshot !== undefined) expect(ran).toEqual(l.snapshot);
      });
    } finally {
      ctx.memFree(counts);
    }
  }
  // Still usable: a fresh launch on each Job runs every task once.
  for (const job of jobs) {
    const fresh = ctx.memAlloc(TASKS * 4);
    const map = job.buildMap('count_tasks', TASKS).setBatchSize(4);
    await map.execute(fresh);
    await map.synchronize();
    expect([...ctx.hostView(fresh, 'int32')]).toEqual(new Array(TASKS).fill(1));
    ctx.memFree(fresh);
  }
}

function bounded<T>(work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`a case did not finish within ${CASE_LIMIT_MS} ms: it hung`)), CASE_LIMIT_MS);
  });
  return Promise.race([work, guard]).finally(() => clearTimeout(timer));
}

describe('the lifecycle of launches under random interleavings and core deaths', () => {
  it('ends every launch once as Idle, Cancelled or Fail, runs completed launches exactly once, starts nothing after cancel, and keeps the Context usable', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, ({ ops, jobs: jobOf, batchSizes }) => bounded(runCase(ops, jobOf, batchSizes))),
      { numRuns: 40 },
    );
  }, 240_000);

  it('settles every execute, cancel and synchronize when the Context is destroyed at any point, runs no task twice, and refuses every later execute with one StateError', async () => {
    const destroyedError = new StateError('this Context was destroyed; create a new one with createContext() (pdist, cdist and l2Kernel without a context open a new default one themselves)');
    const destroyCase = fc.record({ ops: fc.array(opArb, { minLength: 1, maxLength: 8 }), at: fc.nat(8) });
    await fc.assert(
      fc.asyncProperty(destroyCase, ({ ops, at }) =>
        bounded(
          (async () => {
            const own = await createContext({ topology: { subs: 2, clustersPerSub: 1, coresPerCluster: 1 } });
            const module = await own.createModule(new URL('./fixtures/propertyKernels.ts', import.meta.url));
            const ownJobs = [own.createJob(1), own.createJob(1)];
            for (const job of ownJobs) job.load(module);
            const counts = own.memAlloc(ops.length * TASKS * 4);
            const view = own.hostView(counts, 'int32');
            const maps = Array.from({ length: MAPS }, (_, m) => ownJobs[m % 2]!.buildMap('prop_task', TASKS).setBatchSize(4));
            const settled: Promise<unknown>[] = [];
            let launches = 0;
            const destroyAt = Math.min(at, ops.length - 1);
            for (const [i, op] of ops.entries()) {
              if (i === destroyAt) await own.destroy();
              const map = maps[op.kind === 'destroyStream' || op.kind === 'yield' || op.kind === 'setStream' ? 0 : op.map]!;
              if (op.kind === 'execute' && map.getExecuteStatus() !== 'Fail') {
                const run = map.execute(counts, launches++ * TASKS, 20_000, op.dieAt);
                if (i >= destroyAt) await expect(run).rejects.toEqual(destroyedError);
                settled.push(run.catch(() => undefined));
              } else if (op.kind === 'cancel') {
                settled.push(map.cancel());
              } else if (op.kind === 'synchronize') {
                settled.push(map.synchronize().catch(() => undefined));
              }
            }
            await own.destroy();
            await Promise.all(settled);
            for (const map of maps) await map.synchronize().catch(() => undefined);
            expect([...view].every((c) => c === 0 || c === 1)).toBe(true);
          })(),
        ),
      ),
      { numRuns: 8 },
    );
  }, 240_000);
});

// Baseline: a minimal hand-written SharedArrayBuffer + Atomics worker pool.
//
// One launch = `taskCount` tasks cut into batches of `batchSize`. Workers claim batch
// indices with Atomics.add on a shared counter and call a trivial function inline for
// every task of the batch. Between launches workers sleep in Atomics.wait on a generation
// word; the main thread waits for completion with Atomics.waitAsync (it never blocks).
// Every hot word sits on its own 64-byte line.

import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { isMainThread, workerData } from 'node:worker_threads';
import { measure, waitUntil } from '../lib/stats.mjs';
import { isEntryModule, serveLaunches, startWorkers } from '../lib/workers.mjs';

const ROLE = 'pxl-bench-atomics-pool';
const LINE = 16; // Int32 slots per 64-byte line
const GEN = 0 * LINE; // launch generation; workers sleep on it
const NEXT = 1 * LINE; // next batch index (Atomics.add)
const DONE = 2 * LINE; // workers finished with the current launch
const READY = 3 * LINE; // workers started
const PARAMS = 4 * LINE; // [taskCount, batchSize, batchCount, stop]
const SINKS = 5 * LINE; // one line per worker: its checksum for the last launch (as Float64)
const MAX_TASKS = 0x7fffffff;

/** The per-task work: trivial, but its result is consumed so it cannot be dropped. */
function trivial(i) {
  return i & 7;
}

/** Sum over i in [0, n) of trivial(i), in closed form. */
function expectedChecksum(n) {
  const r = n % 8;
  return 28 * ((n - r) / 8) + (r * (r - 1)) / 2;
}

function workerMain() {
  const { sab, index, threads } = workerData;
  const ctl = new Int32Array(sab);
  const sink = new Float64Array(sab, (SINKS + index * LINE) * 4, 1);
  serveLaunches(ctl, GEN, READY, () => {
    if (ctl[PARAMS + 3] !== 0) return false;
    const taskCount = ctl[PARAMS];
    const batchSize = ctl[PARAMS + 1];
    const batchCount = ctl[PARAMS + 2];
    let acc = 0;
    for (;;) {
      const b = Atomics.add(ctl, NEXT, 1);
      if (b >= batchCount || b < 0) break; // b < 0: the counter wrapped past 2^31
      const start = b * batchSize;
      const end = Math.min(start + batchSize, taskCount);
      for (let i = start; i < end; i++) acc += trivial(i);
    }
    sink[0] = acc;
    if (Atomics.add(ctl, DONE, 1) + 1 === threads) Atomics.notify(ctl, DONE);
    return true;
  });
}

/**
 * Start `threads` workers and resolve once all of them are waiting for work.
 * @returns {Promise<{ threads:number, lastChecksum:number, run(taskCount:number, batchSize?:number): Promise<void>, close(): Promise<void> }>}
 *   `run` resolves when every task of the launch has run; it rejects if the launch checksum
 *   (sum of trivial(i) over all tasks, kept in `lastChecksum`) is wrong or a worker failed.
 */
export async function createAtomicsPool(threads = os.availableParallelism()) {
  const sab = new SharedArrayBuffer((SINKS + threads * LINE) * 4);
  const ctl = new Int32Array(sab);
  const sinks = new Float64Array(sab); // worker i's checksum is sinks[(SINKS + i * LINE) / 2]
  const group = startWorkers(
    new URL(import.meta.url),
    threads,
    (index) => ({ role: ROLE, sab, index, threads }),
    () => {
      // Wake the main thread wherever it waits so it can report the failure.
      Atomics.notify(ctl, READY);
      Atomics.notify(ctl, DONE);
    },
  );
  await waitUntil(ctl, READY, threads, (v) => v >= threads || group.failure() !== null);
  if (group.failure()) {
    await group.terminate();
    throw group.failure();
  }

  let busy = false;
  let closed = false;
  const pool = {
    threads,
    lastChecksum: 0,
    async run(taskCount, batchSize = 1) {
      if (closed) throw new Error('atomics pool is closed');
      if (busy) throw new Error('atomics pool runs one launch at a time');
      if (!Number.isInteger(taskCount) || taskCount < 0 || taskCount > MAX_TASKS)
        throw new RangeError(`taskCount must be an integer in [0, ${MAX_TASKS}]`);
      if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_TASKS)
        throw new RangeError('batchSize must be a positive integer');
      busy = true;
      try {
        ctl[PARAMS] = taskCount;
        ctl[PARAMS + 1] = batchSize;
        ctl[PARAMS + 2] = Math.ceil(taskCount / batchSize);
        Atomics.store(ctl, NEXT, 0);
        Atomics.store(ctl, DONE, 0);
        Atomics.add(ctl, GEN, 1); // seq-cst: publishes the plain writes above
        Atomics.notify(ctl, GEN);
        await waitUntil(ctl, DONE, threads, (v) => v >= threads || group.failure() !== null);
        if (group.failure()) throw group.failure();
        let sum = 0;
        for (let i = 0; i < threads; i++) sum += sinks[(SINKS + i * LINE) / 2];
        if (sum !== expectedChecksum(taskCount))
          throw new Error(`atomics pool: checksum ${sum} != ${expectedChecksum(taskCount)}`);
        pool.lastChecksum = sum;
      } finally {
        busy = false;
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await group.terminate(() => {
        ctl[PARAMS + 3] = 1;
        Atomics.add(ctl, GEN, 1);
        Atomics.notify(ctl, GEN);
      });
    },
  };
  return pool;
}

/**
 * Tasks/s of the minimal pool at one batch size: the launch size is calibrated so that one
 * launch lasts >= `minLaunchMs`, then the median over `repeats` launches is reported.
 * Pass `pool` to reuse an existing pool (it is then left open).
 */
export async function atomicsPoolThroughput({
  threads = os.availableParallelism(),
  taskCount, // optional: fixed launch size instead of calibration
  batchSize = 16,
  repeats = 7,
  warmup = 2,
  minLaunchMs = 50,
  pool,
} = {}) {
  const own = !pool;
  const p = pool ?? (await createAtomicsPool(threads));
  try {
    const timeLaunch = async (n) => {
      const t0 = performance.now();
      await p.run(n, batchSize);
      return performance.now() - t0;
    };
    let n = taskCount;
    if (n === undefined) {
      n = Math.min(MAX_TASKS, Math.max(batchSize * p.threads, 1 << 16));
      for (let tries = 0; tries < 40; tries++) {
        const ms = await timeLaunch(n);
        if (ms >= minLaunchMs || n === MAX_TASKS) break;
        // Aim 30% past the target so noise does not drop a launch below it.
        const grow = ms > 1 ? (1.3 * minLaunchMs) / ms : 16;
        n = Math.min(MAX_TASKS, Math.ceil(n * Math.min(16, Math.max(1.5, grow))));
      }
    }
    const r = await measure(async () => n / ((await timeLaunch(n)) / 1e3), { repeats, warmup, result: true });
    return r.median;
  } finally {
    if (own) await p.close();
  }
}

if (!isMainThread && workerData?.role === ROLE) {
  workerMain();
} else if (isMainThread && isEntryModule(import.meta.url)) {
  const pool = await createAtomicsPool();
  const out = {};
  for (const batchSize of [1, 16, 256]) out[`batch${batchSize}`] = await atomicsPoolThroughput({ batchSize, pool });
  await pool.close();
  console.log(out);
}

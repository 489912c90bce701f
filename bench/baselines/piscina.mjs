// Baseline: piscina running a trivial task (one message per task).

import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { Piscina } from 'piscina';
import { measure } from '../lib/stats.mjs';
import { isEntryModule } from '../lib/workers.mjs';

const TASK_FILE = new URL('./piscinaTask.mjs', import.meta.url).href;

async function runBatch(pool, tasks) {
  const pending = new Array(tasks);
  for (let i = 0; i < tasks; i++) pending[i] = pool.run(i);
  const results = await Promise.all(pending);
  if (results[tasks - 1] !== tasks - 1) throw new Error('piscina baseline: wrong result');
}

/**
 * Throughput of piscina running `tasks` trivial tasks (all submitted at once)
 * on `threads` worker threads, after a warm-up; median tasks/s over `repeats`.
 * `concurrentTasksPerWorker` is piscina's option of that name (piscina's default is 1;
 * larger values let each worker pick up several queued messages per wake-up).
 */
export async function piscinaTrivial({
  threads = os.availableParallelism(),
  tasks = 10_000,
  repeats = 5,
  warmup = 1,
  concurrentTasksPerWorker = 1,
} = {}) {
  const pool = new Piscina({
    filename: TASK_FILE,
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: 60_000,
    concurrentTasksPerWorker,
  });
  try {
    // Bring all threads up and let the JIT see the hot paths before timing.
    await runBatch(pool, Math.min(tasks, 2_000));
    const r = await measure(
      async () => {
        const t0 = performance.now();
        await runBatch(pool, tasks);
        return tasks / ((performance.now() - t0) / 1e3);
      },
      { repeats, warmup, result: true },
    );
    return r.median;
  } finally {
    await pool.destroy();
  }
}

if (isEntryModule(import.meta.url)) {
  console.log({
    piscinaTasksPerSec: await piscinaTrivial(),
    piscinaConcurrent16TasksPerSec: await piscinaTrivial({ concurrentTasksPerWorker: 16 }),
  });
}

// Runs every baseline with default settings and prints one JSON document.
//   node bench/baselines/run-all.mjs

import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { printJson, sig } from '../lib/stats.mjs';
import { isEntryModule } from '../lib/workers.mjs';
import { piscinaTrivial } from './piscina.mjs';
import { createAtomicsPool, atomicsPoolThroughput } from './atomicsPool.mjs';
import { rawPingPong } from './pingPong.mjs';
import { triadSingleThread, triadTwoWorkers } from './triad.mjs';

/** Run every baseline; resolves with a plain object (numbers are medians over repeats). */
export async function runAllBaselines({ threads = os.availableParallelism() } = {}) {
  const started = performance.now();
  const timed = async (fn) => {
    const t0 = performance.now();
    const value = await fn();
    return { value, seconds: sig((performance.now() - t0) / 1e3, 3) };
  };
  const seconds = {};

  const pisc = await timed(async () => ({
    trivialTasksPerSec: sig(await piscinaTrivial({ threads })),
    concurrent16TasksPerSec: sig(await piscinaTrivial({ threads, concurrentTasksPerWorker: 16 })),
  }));
  seconds.piscina = pisc.seconds;

  const pool = await timed(async () => {
    const p = await createAtomicsPool(threads);
    try {
      const out = {};
      for (const batchSize of [1, 16, 256])
        out[`batch${batchSize}TasksPerSec`] = sig(await atomicsPoolThroughput({ batchSize, pool: p }));
      return out;
    } finally {
      await p.close();
    }
  });
  seconds.atomicsPool = pool.seconds;

  const ping = await timed(async () => {
    const medianUs = await rawPingPong({ threads });
    const d = rawPingPong.last;
    return {
      medianUs: sig(medianUs, 3),
      setMediansUs: d.setMediansUs.map((v) => sig(v, 3)),
      pooledP10Us: sig(d.pooledP10Us, 3),
      pooledP90Us: sig(d.pooledP90Us, 3),
    };
  });
  seconds.pingPong = ping.seconds;

  const triad = await timed(async () => ({
    singleThreadGBs: sig(await triadSingleThread(), 3),
    twoWorkersGBs: sig(await triadTwoWorkers({ threads: 2 }), 3),
  }));
  seconds.triad = triad.seconds;
  seconds.total = sig((performance.now() - started) / 1e3, 3);

  return {
    node: process.version,
    cpus: os.availableParallelism(),
    threads,
    piscina: pisc.value,
    atomicsPool: pool.value,
    pingPong: ping.value,
    triad: triad.value,
    seconds,
  };
}

if (isEntryModule(import.meta.url)) {
  printJson(await runAllBaselines());
}

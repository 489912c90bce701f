// Dispatch benchmark: pxl against baselines measured in the same run, interleaved repeat by repeat
// so the machine's noise hits both sides alike. Prints one JSON document: medians and the median of
// per-repeat ratios.
//   npm run bench:dispatch            (builds first)
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { createContext, NDArray } from 'pxl';
import { createAtomicsPool } from './baselines/atomicsPool.mjs';
import { piscinaTrivial } from './baselines/piscina.mjs';
import { rawPingPong } from './baselines/pingPong.mjs';
import { triadSingleThread, triadTwoWorkers, TRIAD_ELEMENTS } from './baselines/triad.mjs';
import { median, printJson, sig } from './lib/stats.mjs';

const threads = os.availableParallelism();
const REPEATS = Number(process.env.PXL_BENCH_REPEATS ?? 7);

const ctx = await createContext();
const mod = await ctx.createModule(new URL('./kernels.mjs', import.meta.url));
const job = ctx.createJob();
job.load(mod);

/** Median of xs and of the per-repeat ratio a/b. */
function compare(ours, theirs) {
  return { pxl: sig(median(ours)), baseline: sig(median(theirs)), ratio: sig(median(ours.map((o, i) => o / theirs[i])), 3) };
}

async function pxlTrivialRate(batchSize) {
  const taskCount = (1 << 20) - 1;
  const launches = batchSize === 1 ? 4 : 16;
  const map = job.buildMap('trivial', taskCount).setBatchSize(batchSize);
  await map.execute();
  await map.synchronize();
  const t0 = performance.now();
  for (let i = 0; i < launches; i++) await map.execute();
  await map.synchronize();
  return (taskCount * launches) / ((performance.now() - t0) / 1e3);
}

async function checkExactlyOnce() {
  const out = ctx.memAlloc(4);
  const drain = job.buildMap('drain_sink', threads).setBatchSize(1);
  await drain.execute(out);
  await drain.synchronize();
  ctx.hostView(out, 'int32')[0] = 0;
  const n = 100_003;
  const map = job.buildMap('trivial', n).setBatchSize(16);
  await map.execute();
  await map.synchronize();
  await drain.execute(out);
  await drain.synchronize();
  let expected = 0;
  for (let i = 0; i < n; i++) expected += i & 7;
  const got = ctx.hostView(out, 'int32')[0];
  ctx.memFree(out);
  if (got !== expected) throw new Error(`trivial kernel checksum ${got} != ${expected}: some task ran more or less than once`);
}

async function throughput() {
  const pool = await createAtomicsPool(threads);
  const result = {};
  try {
    for (const batchSize of [1, 16, 256]) {
      const ours = [];
      const theirs = [];
      const n = (1 << 20) - 1;
      await pool.run(n, batchSize);
      for (let r = 0; r < REPEATS; r++) {
        let t0 = performance.now();
        for (let i = 0; i < 16; i++) await pool.run(n, batchSize);
        theirs.push((16 * n) / ((performance.now() - t0) / 1e3));
        ours.push(await pxlTrivialRate(batchSize));
      }
      result[`batch${batchSize}`] = { tasksPerSec: compare(ours, theirs) };
    }
  } finally {
    await pool.close();
  }
  const piscina = await piscinaTrivial({ threads });
  for (const k of Object.keys(result)) result[k].vsPiscina = sig(result[k].tasksPerSec.pxl / piscina, 4);
  result.piscinaTasksPerSec = sig(piscina);
  return result;
}

async function roundTrip() {
  const map = job.buildMap('empty', threads).setBatchSize(1);
  const rounds = 400;
  for (let i = 0; i < 100; i++) {
    await map.execute();
    await map.synchronize();
  }
  const ours = [];
  const theirs = [];
  for (let r = 0; r < Math.min(REPEATS, 5); r++) {
    const samples = [];
    for (let i = 0; i < rounds; i++) {
      const t0 = performance.now();
      await map.execute();
      await map.synchronize();
      samples.push((performance.now() - t0) * 1e3);
    }
    ours.push(median(samples));
    theirs.push(await rawPingPong({ threads, rounds, repeats: 1 }));
  }
  return { microseconds: compare(ours, theirs) };
}

async function triad() {
  const n = TRIAD_ELEMENTS;
  const chunk = 1 << 14;
  const x = ctx.memAlloc(n * 8);
  const y = ctx.memAlloc(n * 8);
  ctx.hostView(x, 'float64').fill(1);
  ctx.hostView(y, 'float64').fill(2);
  const map = job.buildMap('triad', n / chunk).setBatchSize(Math.ceil(n / chunk / threads));
  const args = [3, new NDArray(x, 'float64', [n]), new NDArray(y, 'float64', [n]), chunk];
  const passes = 3;
  const rate = async () => {
    const t0 = performance.now();
    for (let p = 0; p < passes; p++) await map.execute(...args);
    await map.synchronize();
    return (passes * n * 24) / ((performance.now() - t0) / 1e3) / 1e9;
  };
  await rate();
  const ours = [];
  const two = [];
  const one = [];
  for (let r = 0; r < Math.min(REPEATS, 5); r++) {
    ours.push(await rate());
    two.push(await triadTwoWorkers({ threads, repeats: 1, warmup: 1 }));
    one.push(await triadSingleThread({ repeats: 1, warmup: 1 }));
  }
  ctx.memFree(x);
  ctx.memFree(y);
  return { gbPerSec: compare(ours, two), singleThreadGbPerSec: sig(median(one)), vsSingleThread: sig(median(ours) / median(one), 3) };
}

try {
  await checkExactlyOnce();
  const t0 = performance.now();
  const report = {
    bench: 'dispatch',
    date: new Date().toISOString(),
    node: process.version,
    cores: threads,
    note: 'medians over repeats; ratio = median of per-repeat pxl/baseline (interleaved in one process)',
    throughput: await throughput(),
    launchRoundTrip: await roundTrip(),
    streamingTriad: await triad(),
  };
  report.seconds = sig((performance.now() - t0) / 1e3, 3);
  report.targets = {
    batch16AtLeastQuarterOfPool: report.throughput.batch16.tasksPerSec.ratio >= 0.25,
    roundTripWithin1_5xPingPong: report.launchRoundTrip.microseconds.ratio <= 1.5,
    triadAtLeast80PercentOfRawTwoWorker: report.streamingTriad.gbPerSec.ratio >= 0.8,
  };
  printJson(report);
} finally {
  await ctx.destroy();
}

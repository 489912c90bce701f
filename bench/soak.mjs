// pdist soak: many small calls (N = 100 PCFs of 20 points, p = 1) on one Context, in the main
// thread and inside a worker thread, without a context (the default Context) and with a caller's.
// Reports calls per second after a warm-up, and the growth of RSS, external memory (which holds
// every ArrayBuffer and SharedArrayBuffer) and open file descriptors from the end of the warm-up to
// the end. Baselines from the same run: calls that each open and destroy a Context of their own
// (what a call without a context cost before the default Context), and the same matrix computed
// by a plain single-thread loop over the same pair kernel. Prints one JSON document.
//
// The warm-up is long on purpose: under a steady stream of calls V8 grows the calling thread's
// young generation (up to two 16 MB semi-spaces) over the first few thousand calls, which shows up
// as RSS that rises and then stays. Measured here: with --max-semi-space-size=1 the same run is
// flat from its first thousand calls. newSpaceGrowthMB reports that part of any growth.
//   npm run bench:soak                (builds first; PXL_SOAK_CALLS=10000, PXL_SOAK_WARMUP=3000)
import { readdirSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { createContext, integrationLimit, pdist, randomPcfs } from 'pxl';
import { destroyDefaultContext } from '../dist/pcf/defaultContext.js';
import { l1Pair } from '../dist/pcf/pairKernels.js';
import { printJson, sig } from './lib/stats.mjs';

const CALLS = Number(process.env.PXL_SOAK_CALLS ?? 10_000);
const WARMUP = Number(process.env.PXL_SOAK_WARMUP ?? 3_000);
const N = 100;
const POINTS = 20;
const FRESH_CONTEXT_CALLS = 20;
const MB = 1e6;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');
const fds = () => readdirSync('/proc/self/fd').length;
const set = randomPcfs({ n: N, points: POINTS, seed: 1 });

async function sample() {
  await new Promise((r) => setImmediate(r));
  for (let i = 0; i < 3; i++) gc();
  const { rss, external } = process.memoryUsage();
  const newSpace = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
  return { rss, external, newSpace, fds: fds() };
}

/** `WARMUP` calls, then `CALLS` timed ones; growth is measured from the end of the warm-up. */
async function soak(kind) {
  const ctx = kind === 'context' ? await createContext({ topology: { subs: os.availableParallelism(), clustersPerSub: 1, coresPerCluster: 1 } }) : undefined;
  const options = ctx === undefined ? {} : { context: ctx };
  try {
    for (let i = 0; i < WARMUP; i++) await pdist(set, options);
    const before = await sample();
    let peak = before.rss;
    const t0 = performance.now();
    for (let i = 0; i < CALLS; i++) {
      await pdist(set, options);
      if ((i + 1) % 1000 === 0) peak = Math.max(peak, process.memoryUsage().rss);
    }
    const seconds = (performance.now() - t0) / 1e3;
    const after = await sample();
    return {
      calls: CALLS,
      callsPerSec: sig(CALLS / seconds),
      rssGrowthMB: sig((after.rss - before.rss) / MB, 3),
      peakRssGrowthMB: sig((peak - before.rss) / MB, 3),
      externalGrowthMB: sig((after.external - before.external) / MB, 3),
      newSpaceGrowthMB: sig((after.newSpace - before.newSpace) / MB, 3),
      fdGrowth: after.fds - before.fds,
    };
  } finally {
    await ctx?.destroy();
    await destroyDefaultContext();
  }
}

async function both() {
  return { callerContext: await soak('context'), defaultContext: await soak('default') };
}

/** A call that opens and destroys its own Context, as every call without a context did before. */
async function freshContextPerCall() {
  const t0 = performance.now();
  for (let i = 0; i < FRESH_CONTEXT_CALLS; i++) {
    const ctx = await createContext({ topology: { subs: os.availableParallelism(), clustersPerSub: 1, coresPerCluster: 1 } });
    try {
      await pdist(set, { context: ctx });
    } finally {
      await ctx.destroy();
    }
  }
  return { calls: FRESH_CONTEXT_CALLS, callsPerSec: sig(FRESH_CONTEXT_CALLS / ((performance.now() - t0) / 1e3)) };
}

/** The same matrix by a plain loop on this thread over the pair kernel the cores run. */
function singleThreadLoop() {
  const { times, values, offsets, count } = set;
  const upper = integrationLimit('float64');
  const out = new Float64Array((count * (count - 1)) / 2);
  const once = () => {
    let k = 0;
    for (let i = 1; i < count; i++) for (let j = 0; j < i; j++) out[k++] = l1Pair(times, values, offsets[i], offsets[i + 1], times, values, offsets[j], offsets[j + 1], upper);
  };
  for (let r = 0; r < 200; r++) once();
  const repeats = 2000;
  const t0 = performance.now();
  for (let r = 0; r < repeats; r++) once();
  return { calls: repeats, callsPerSec: sig(repeats / ((performance.now() - t0) / 1e3)), msPerCall: sig((performance.now() - t0) / repeats, 3) };
}

function inWorker() {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: { role: 'soak' } });
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the soak worker exited with code ${code} before it reported`)));
  });
}

if (!isMainThread && workerData?.role === 'soak') {
  parentPort.postMessage(await both());
} else {
  const report = { bench: 'soak', date: new Date().toISOString(), node: process.version, cpus: os.availableParallelism(), n: N, points: POINTS, warmup: WARMUP };
  report.baseline = { freshContextPerCall: await freshContextPerCall(), singleThreadLoop: singleThreadLoop() };
  report.mainThread = await both();
  report.workerThread = await inWorker();
  const runs = [report.mainThread.callerContext, report.mainThread.defaultContext, report.workerThread.callerContext, report.workerThread.defaultContext];
  report.speedupOverFreshContext = sig(report.mainThread.defaultContext.callsPerSec / report.baseline.freshContextPerCall.callsPerSec, 3);
  report.targets = {
    atLeast500CallsPerSec: runs.every((r) => r.callsPerSec >= 500),
    rssGrowthUnder20MB: runs.every((r) => r.rssGrowthMB < 20),
    externalGrowthUnder20MB: runs.every((r) => r.externalGrowthMB < 20),
    fdsFlat: runs.every((r) => r.fdGrowth === 0),
  };
  printJson(report);
}

// Memory of a program that allocates and frees device memory over and over: ITERATIONS rounds of
// memAlloc(64 KiB) / execute / synchronize / memFree on a 2-core Context, each round a fresh
// allocation bound by both cores. Prints RSS and external-memory growth over the rounds (after a
// warm-up, with the main thread's garbage collected when --expose-gc is given) as JSON.
//   npm run build && node --expose-gc bench/memFree.mjs
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createContext } from 'pxl';

const ITERATIONS = Number(process.env.PXL_BENCH_ITERATIONS ?? 3000);
const WARMUP = 300;
const BYTES = 64 * 1024;
const MB = 1024 * 1024;

const ctx = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } });
const job = ctx.createJob();
job.load(await ctx.createModule(new URL('./kernels.mjs', import.meta.url)));
const map = job.buildMap('drain_sink', 2).setBatchSize(1);

async function rounds(n) {
  for (let i = 0; i < n; i++) {
    const p = ctx.memAlloc(BYTES);
    await map.execute(p);
    await map.synchronize();
    ctx.memFree(p);
  }
}

async function settledMemory() {
  // Give idle cores a moment to drain their messages, then collect the main thread's garbage.
  await sleep(200);
  globalThis.gc?.();
  const m = process.memoryUsage();
  return { rss: m.rss, external: m.external + m.arrayBuffers };
}

await rounds(WARMUP);
const before = await settledMemory();
const t0 = performance.now();
await rounds(ITERATIONS);
const ms = performance.now() - t0;
const after = await settledMemory();
await ctx.destroy();

console.log(JSON.stringify({
  bench: 'memFree',
  iterations: ITERATIONS,
  bytesPerAllocation: BYTES,
  allocatedInAllMB: Math.round((ITERATIONS * BYTES) / MB),
  rssGrowthMB: Math.round(((after.rss - before.rss) / MB) * 10) / 10,
  externalGrowthMB: Math.round(((after.external - before.external) / MB) * 10) / 10,
  microsecondsPerRound: Math.round((ms * 1000) / ITERATIONS),
  gcExposed: typeof globalThis.gc === 'function',
}, null, 2));

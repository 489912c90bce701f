// pdist held in memory on the GPU alone against the GPU with CPU cores beside it, the two taking
// turns call by call in one process (so load from other work falls on both alike): N PCFs of P
// breakpoints, float32, p = 1. Prints one JSON document with every call's pairs/s, the medians and
// the combined run over the GPU alone. bench/gpu.mjs measures more sizes and the CPU cores alone;
// this one is for larger N on a hardware GPU, where the host's work per block shows.
//   npm run build && node bench/gpuCalls.mjs
//   PXL_BENCH_N=16000 PXL_BENCH_POINTS=100    sizes (the defaults)
//   PXL_BENCH_CALLS=3                          calls of each kind (default 3)
//   PXL_BENCH_CORES=16                         CPU cores beside the GPU (default: all)
//   PXL_BENCH_REQUIRE_HARDWARE=1               exit 1 instead of measuring a software renderer
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { createContext, pdist, randomPcfs } from 'pxl';
import { acquireGpuDevice } from '../dist/backends/webgpu/index.js';
import { median, printJson, sig } from './lib/stats.mjs';

const n = Number(process.env.PXL_BENCH_N ?? 16000);
const points = Number(process.env.PXL_BENCH_POINTS ?? 100);
const calls = Number(process.env.PXL_BENCH_CALLS ?? 3);
const cores = Number(process.env.PXL_BENCH_CORES ?? os.availableParallelism());

const probe = await acquireGpuDevice();
const adapter = { description: probe.description, route: probe.route, software: probe.software };
probe.device.destroy();
if (adapter.software && process.env.PXL_BENCH_REQUIRE_HARDWARE === '1') {
  console.error(`bench:gpuCalls: the adapter is a software renderer (${adapter.description}); PXL_BENCH_REQUIRE_HARDWARE=1 asks for a hardware GPU`);
  process.exit(1);
}
const gpu = await createContext({ backend: 'webgpu' });
const cpu = await createContext({ topology: { subs: cores, clustersPerSub: 1, coresPerCluster: 1 } });
try {
  const set = randomPcfs({ n, points, seed: 1, dtype: 'float32' });
  const pairs = (n * (n - 1)) / 2;
  const kinds = { gpu: { context: gpu }, gpuAndCores: { devices: [cpu, gpu] } };
  const warm = randomPcfs({ n: 800, points, seed: 2, dtype: 'float32' });
  for (const options of Object.values(kinds)) await pdist(warm, options);
  const rates = { gpu: [], gpuAndCores: [] };
  for (let c = 0; c < calls; c++) {
    for (const [kind, options] of Object.entries(kinds)) {
      const t0 = performance.now();
      await pdist(set, options);
      rates[kind].push(pairs / ((performance.now() - t0) / 1e3));
    }
  }
  printJson({
    bench: 'gpuCalls',
    date: new Date().toISOString(),
    node: process.version,
    host: { cpus: os.availableParallelism(), cpuModel: os.cpus()[0]?.model ?? 'unknown' },
    adapter,
    warning: adapter.software
      ? `software renderer (${adapter.description}): the "GPU" runs on the same CPU cores, so these figures say nothing about a hardware GPU`
      : undefined,
    n,
    points,
    cores,
    pairsPerSec: Object.fromEntries(Object.entries(rates).map(([k, v]) => [k, v.map((r) => sig(r))])),
    medianPairsPerSec: Object.fromEntries(Object.entries(rates).map(([k, v]) => [k, sig(median(v))])),
    gpuAndCoresOverGpu: sig(median(rates.gpuAndCores) / median(rates.gpu), 3),
  });
} finally {
  await Promise.all([cpu.destroy(), gpu.destroy()]);
}

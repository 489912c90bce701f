// GPU benchmark: pdist pairs/s on the webgpu backend against the CPU backend in the same run, and
// with both at once (the GPU and every CPU core pulling blocks from one queue). N PCFs of 100
// breakpoints (as bench/pdist.mjs makes them), float32 (WGSL has no float64), p = 1 and p = 2.
// Prints one JSON document that names the adapter and says whether it is a software renderer
// (Mesa's llvmpipe runs "GPU" kernels on the CPU cores: such figures say nothing of a real GPU).
//   npm run bench:gpu                  (builds first)
//   PXL_BENCH_SIZES=500,1000,2000      sizes (the default)
//   PXL_BENCH_P=1                      exponents (default 1,2)
//   PXL_BENCH_REQUIRE_HARDWARE=1       exit 1 instead of measuring a software renderer
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { createContext, pdist, randomPcfs } from 'pxl';
import { acquireGpuDevice } from '../dist/backends/webgpu/index.js';
import { median, printJson, sig } from './lib/stats.mjs';

const sizes = (process.env.PXL_BENCH_SIZES ?? '500,1000,2000').split(',').map(Number);
const exponents = (process.env.PXL_BENCH_P ?? '1,2').split(',').map(Number);
const POINTS = 100;

/** The adapter pxl's webgpu backend opens, described in full; its device is closed again. */
async function adapterReport() {
  const gpu = await acquireGpuDevice();
  const info = gpu.adapter.info;
  const limits = gpu.device.limits;
  const report = {
    description: gpu.description,
    route: gpu.route,
    software: gpu.software,
    vendor: info.vendor,
    architecture: info.architecture,
    device: info.device,
    driver: info.description,
    maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize,
    maxComputeWorkgroupSizeX: limits.maxComputeWorkgroupSizeX,
  };
  gpu.device.destroy();
  return report;
}

/** Largest |a - b| over the entries, relative to the largest |b| (at least 1). */
function maxRelDiff(a, b) {
  let scale = 1;
  let worst = 0;
  for (let k = 0; k < b.length; k++) scale = Math.max(scale, Math.abs(b[k]));
  for (let k = 0; k < b.length; k++) worst = Math.max(worst, Math.abs(a[k] - b[k]));
  return worst / scale;
}

/** Median pairs/s of `repeats` timed pdists, and the last result. */
async function rate(set, options, repeats) {
  const n = set.count;
  const pairs = (n * (n - 1)) / 2;
  const samples = [];
  let result;
  for (let r = 0; r < repeats; r++) {
    const t0 = performance.now();
    result = await pdist(set, options);
    samples.push(pairs / ((performance.now() - t0) / 1e3));
  }
  return { pairsPerSec: median(samples), result };
}

const adapter = await adapterReport();
if (adapter.software && process.env.PXL_BENCH_REQUIRE_HARDWARE === '1') {
  console.error(`bench:gpu: the adapter is a software renderer (${adapter.description}); PXL_BENCH_REQUIRE_HARDWARE=1 asks for a hardware GPU`);
  process.exit(1);
}

const cores = os.availableParallelism();
const cpu = await createContext({ topology: { subs: cores, clustersPerSub: 1, coresPerCluster: 1 } });
const gpu = await createContext({ backend: 'webgpu' });
const report = {
  bench: 'gpu',
  date: new Date().toISOString(),
  node: process.version,
  host: { cpus: cores, cpuModel: os.cpus()[0]?.model ?? 'unknown', platform: `${os.platform()} ${os.arch()}` },
  adapter,
  warning: adapter.software
    ? `software renderer (${adapter.description}): the "GPU" runs on the same ${cores} CPU cores as the CPU backend, so these figures say nothing about a hardware GPU`
    : undefined,
  dtype: 'float32',
  points: POINTS,
  results: [],
};
try {
  // Warm both backends: module loading, pipeline compilation, V8 tiers.
  const warm = randomPcfs({ n: 200, points: POINTS, seed: 2, dtype: 'float32' });
  for (const p of exponents) {
    await pdist(warm, { context: cpu, p });
    await pdist(warm, { context: gpu, p });
    await pdist(warm, { devices: [cpu, gpu], p });
  }
  for (const n of sizes) {
    const set = randomPcfs({ n, points: POINTS, seed: 1, dtype: 'float32' });
    const repeats = n <= 1000 ? 3 : n <= 2000 ? 2 : 1;
    const row = { n, pairs: (n * (n - 1)) / 2 };
    for (const p of exponents) {
      const onCpu = await rate(set, { context: cpu, p }, repeats);
      const onGpu = await rate(set, { context: gpu, p }, repeats);
      const blocks = new Map();
      const both = await rate(set, { devices: [cpu, gpu], p, onProgress: (e) => blocks.set(e.device, (blocks.get(e.device) ?? 0) + 1) }, 1);
      row[`p${p}`] = {
        cpuPairsPerSec: sig(onCpu.pairsPerSec),
        gpuPairsPerSec: sig(onGpu.pairsPerSec),
        gpuOverCpu: sig(onGpu.pairsPerSec / onCpu.pairsPerSec, 3),
        cpuAndGpuPairsPerSec: sig(both.pairsPerSec),
        // Blocks the GPU (the last device) took in the combined run, out of all.
        gpuShareOfBlocks: `${blocks.get(cores) ?? 0}/${[...blocks.values()].reduce((a, b) => a + b, 0)}`,
        maxRelDiffGpuVsCpu: sig(maxRelDiff(onGpu.result.condensed, onCpu.result.condensed), 2),
      };
    }
    report.results.push(row);
  }
  printJson(report);
} finally {
  await Promise.all([cpu.destroy(), gpu.destroy()]);
}

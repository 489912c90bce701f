// Command-buffer benchmark (src/mux): what batching work into command buffers saves against
// host-awaited calls, each figure beside a baseline measured in the same run, interleaved repeat
// by repeat so the machine's noise hits both sides alike. Prints one JSON document: medians and the
// median of per-repeat ratios.
//   chain:      10,000 command buffers of one small command each (a 4-byte fill, or a 1-item
//               launch), each waiting on the previous one's semaphore, against 10,000 awaited
//               ctx.copyToDevice calls (fills) or execute + synchronize round trips (launches).
//   dependent:  100 dependent kernels (x[i] += 1 over 64 int32, where launching dominates, and
//               over 4096, where the tasks do) as one command buffer with one dispatch, and as a
//               CommandQueue (100 enqueues, finish()), against 100 map.execute() calls with
//               await map.synchronize() between them.
//   npm run bench:mux        (builds first; PXL_BENCH_REPEATS to change the repeats, default 5)
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { CommandBuffer, CommandQueue, createContext, dispatch, Fence, Semaphore } from 'pxl';
import { median, printJson, sig } from './lib/stats.mjs';

const REPEATS = Number(process.env.PXL_BENCH_REPEATS ?? 5);
const CHAIN = 10_000;
const KERNELS = 100;
const SIZES = [64, 4096];

const ctx = await createContext();
// mux_count: counts[taskIdx] += 1 (atomically), the small dependent kernel of both cases. The cores
// load the TypeScript fixture through tsx, as the tests do.
const mod = await ctx.createModule(new URL('../test/fixtures/muxKernels.ts', import.meta.url));
const job = ctx.createJob();
job.load(mod);

/** Median of xs and of the per-repeat ratio a/b. */
function compare(ours, theirs) {
  return { pxl: sig(median(ours)), baseline: sig(median(theirs)), ratio: sig(median(ours.map((o, i) => o / theirs[i])), 3) };
}

function check(what, got, expected) {
  if (got !== expected) throw new Error(`${what}: got ${got}, expected ${expected}: the benchmark computed a wrong result`);
}

/** Checks every int32 of `ptr` equals `expected`, then zeroes them for the next run. */
function checkAll(what, ptr, expected) {
  const v = ctx.hostView(ptr, 'int32');
  for (let i = 0; i < v.length; i++) check(`${what}, element ${i}`, v[i], expected);
  v.fill(0);
}

/** Records `n` one-command buffers; `record(cb, i)` adds the command. */
function recordChain(n, record) {
  const buffers = [];
  for (let i = 0; i < n; i++) {
    const cb = new CommandBuffer(ctx, job);
    record(cb, i);
    buffers.push(cb.finalize());
  }
  return buffers;
}

/** Dispatches the buffers as one semaphore chain; resolves when the last completes. Returns ms. */
async function runChain(buffers) {
  const t0 = performance.now();
  const fence = new Fence();
  let wait = [];
  buffers.forEach((cb, i) => {
    const signal = new Semaphore();
    dispatch(cb, { wait, signal: [signal], ...(i === buffers.length - 1 ? { fence } : {}) });
    wait = [signal];
  });
  await fence.wait();
  return performance.now() - t0;
}

async function chain() {
  const cell = ctx.memAlloc(4);
  const counter = ctx.memAlloc(4);
  const one = job.buildMap('mux_count', 1);
  const word = new Int32Array(1);
  const fills = { ours: [], theirs: [], recordMs: [] };
  const launches = { ours: [], theirs: [], recordMs: [], fresh: [] };
  // Fills: buffer i writes i; the last write wins, as with the copies of the baseline.
  for (let r = -1; r < REPEATS; r++) {
    let t0 = performance.now();
    const buffers = recordChain(CHAIN, (cb, i) => cb.fill(cell, 0, 4, Int32Array.of(i)));
    const recordMs = performance.now() - t0;
    const ours = await runChain(buffers);
    check('fill chain, last value', ctx.hostView(cell, 'int32')[0], CHAIN - 1);
    t0 = performance.now();
    for (let i = 0; i < CHAIN; i++) {
      word[0] = i;
      await ctx.copyToDevice(cell, word);
    }
    const theirs = performance.now() - t0;
    check('awaited copies, last value', ctx.hostView(cell, 'int32')[0], CHAIN - 1);
    if (r < 0) continue; // warm-up
    fills.ours.push(ours);
    fills.theirs.push(theirs);
    fills.recordMs.push(recordMs);
  }
  // Launches: every buffer adds 1 to the counter. Fewer repeats, and a shorter warm-up chain:
  // each sample takes seconds.
  for (let r = -1; r < Math.min(REPEATS, 3); r++) {
    const n = r < 0 ? CHAIN / 10 : CHAIN;
    let t0 = performance.now();
    const buffers = recordChain(n, (cb) => cb.launch('mux_count', { global: [1] }, counter));
    const recordMs = performance.now() - t0;
    const ours = await runChain(buffers);
    checkAll('launch chain, counter', counter, n);
    t0 = performance.now();
    for (let i = 0; i < n; i++) {
      await one.execute(counter);
      await one.synchronize();
    }
    const theirs = performance.now() - t0;
    checkAll('awaited launches, counter', counter, n);
    // The chain's launches each have their own Map (CommandBuffer.launch builds one per recorded
    // launch): the same round trips with a fresh Map each separate what that costs.
    t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const fresh = job.buildMap('mux_count', 1);
      await fresh.execute(counter);
      await fresh.synchronize();
    }
    const fresh = performance.now() - t0;
    checkAll('awaited launches of fresh Maps, counter', counter, n);
    if (r < 0) continue;
    launches.ours.push(ours);
    launches.theirs.push(theirs);
    launches.recordMs.push(recordMs);
    launches.fresh.push(fresh);
  }
  ctx.memFree(cell);
  ctx.memFree(counter);
  const report = (s, baseline) => ({
    totalMs: compare(s.ours, s.theirs),
    perBufferMicroseconds: sig((median(s.ours) * 1e3) / CHAIN),
    baselinePerCallMicroseconds: sig((median(s.theirs) * 1e3) / CHAIN),
    recordMs: sig(median(s.recordMs)),
    baseline,
  });
  return {
    buffers: CHAIN,
    note: 'totalMs.pxl: dispatch of the recorded chain to the last fence (recording apart, in recordMs)',
    fill: report(fills, `${CHAIN} awaited ctx.copyToDevice of 4 bytes`),
    launch: {
      ...report(launches, `${CHAIN} awaited map.execute + map.synchronize of a 1-item kernel, one Map`),
      freshMapBaselineMs: { ...compare(launches.ours, launches.fresh), description: 'the same round trips, each with a fresh job.buildMap' },
    },
  };
}

async function dependent(ELEMENTS) {
  const x = ctx.memAlloc(ELEMENTS * 4);
  const range = { global: [ELEMENTS] };
  const buffer = new CommandBuffer(ctx, job);
  for (let k = 0; k < KERNELS; k++) buffer.launch('mux_count', range, x);
  buffer.finalize();
  const map = job.buildMap('mux_count', ELEMENTS);
  const oneBuffer = [];
  const queued = [];
  const separate = [];
  for (let r = -1; r < REPEATS; r++) {
    let t0 = performance.now();
    const fence = new Fence();
    dispatch(buffer, { fence });
    await fence.wait();
    const bufferMs = performance.now() - t0;
    checkAll('one command buffer', x, KERNELS);

    t0 = performance.now();
    const queue = new CommandQueue(ctx, job);
    for (let k = 0; k < KERNELS; k++) queue.enqueueLaunch('mux_count', range, x);
    await queue.finish();
    const queueMs = performance.now() - t0;
    checkAll('CommandQueue', x, KERNELS);

    t0 = performance.now();
    for (let k = 0; k < KERNELS; k++) {
      await map.execute(x);
      await map.synchronize();
    }
    const separateMs = performance.now() - t0;
    checkAll('separate executes', x, KERNELS);

    if (r < 0) continue;
    oneBuffer.push(bufferMs);
    queued.push(queueMs);
    separate.push(separateMs);
  }
  ctx.memFree(x);
  return {
    kernels: KERNELS,
    elements: ELEMENTS,
    baseline: `${KERNELS} × (await map.execute(); await map.synchronize())`,
    oneCommandBufferMs: compare(oneBuffer, separate),
    commandQueueMs: { ...compare(queued, separate), note: `includes recording: ${KERNELS} enqueueLaunch and finish()` },
    perKernelMicroseconds: {
      oneCommandBuffer: sig((median(oneBuffer) * 1e3) / KERNELS),
      commandQueue: sig((median(queued) * 1e3) / KERNELS),
      separate: sig((median(separate) * 1e3) / KERNELS),
    },
  };
}

try {
  const t0 = performance.now();
  const report = {
    bench: 'mux',
    date: new Date().toISOString(),
    node: process.version,
    cores: Number(ctx.getAttribute('coreCount')),
    cpus: os.availableParallelism(),
    note: 'medians over repeats after one warm-up; ratio = median of per-repeat pxl/baseline (interleaved in one process); every run checks its results',
    chain: await chain(),
    dependentKernels: [],
  };
  for (const n of SIZES) report.dependentKernels.push(await dependent(n));
  report.seconds = sig((performance.now() - t0) / 1e3, 3);
  printJson(report);
} finally {
  await ctx.destroy();
}

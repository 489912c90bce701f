// Task-graph benchmark: what building the graph costs per task, and the heat-diffusion stencil on
// the queue against a plain single-thread loop in the same run. Prints one JSON document.
//   npm run bench:graph   (builds first; PXL_BENCH_CHAIN=10000, PXL_BENCH_HEAT=512x512x200 to resize)
//
// chain: N small tasks, each reading and writing (oneToOne) one 64-element float64 buffer, so task k
// depends on task k-1. Three figures, medians of several repeats, in µs per task:
//   graphOnly   - TaskGraph.add alone (dependencies, regions, coherence bookkeeping), nothing runs;
//   submitOnly  - q.submit for all N tasks (graph + executor bookkeeping + launch setup), timed until
//                 the submit loop returns, before the tasks have run;
//   submitAndRun - q.submit for all N tasks and q.wait() until the last one finished.
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { access, createContext } from 'pxl';
import { TaskGraph } from '../dist/graph/taskGraph.js';
import { accessOf } from '../dist/graph/accessMode.js';
import { split } from '../dist/graph/split.js';
import { median, printJson, sig } from './lib/stats.mjs';

const CHAIN = Number(process.env.PXL_BENCH_CHAIN ?? 10000);
const [ROWS, COLS, STEPS] = (process.env.PXL_BENCH_HEAT ?? '512x512x200').split('x').map(Number);
const ALPHA = 0.2;
const REPEATS = 5;

const ctx = await createContext({ topology: { subs: os.availableParallelism(), clustersPerSub: 1, coresPerCluster: 1 } });
const report = { bench: 'graph', date: new Date().toISOString(), node: process.version, cores: ctx.getAttribute('coreCount'), repeats: REPEATS };
try {
  const mod = await ctx.createModule(new URL('./graphKernels.mjs', import.meta.url));

  // --- chain of small tasks ---------------------------------------------------------------------
  const graphOnly = [];
  const submitOnly = [];
  const submitAndRun = [];
  let chainChunks = 0;
  for (let r = 0; r < REPEATS + 1; r++) {
    // Graph alone: the buffer only needs an id, a label, a range, dims and a coherence table, which a
    // queue buffer has; the graph never touches its memory.
    {
      const q = ctx.createQueue({ uninitializedReads: 'ignore' });
      const b = q.buffer(Float64Array, [64], { name: 'chain' });
      const g = new TaskGraph({ uninitializedReads: 'ignore' });
      const chunks = split([64], q.chunkCount);
      const rw = accessOf('read_write');
      const mapper = access.oneToOne();
      const t0 = performance.now();
      for (let i = 0; i < CHAIN; i++) g.add({ kind: 'kernel', name: 'bump', range: [64], chunks, accesses: [{ buffer: b, access: rw, mapper }] });
      const us = ((performance.now() - t0) * 1e3) / CHAIN;
      if (r > 0) graphOnly.push(us);
      await q.destroy();
    }
    {
      const q = ctx.createQueue({ uninitializedReads: 'ignore' });
      q.load(mod);
      chainChunks = q.chunkCount;
      const b = q.buffer(Float64Array, [64], { init: new Float64Array(64), name: 'chain' });
      const mapper = access.oneToOne();
      const t0 = performance.now();
      for (let i = 0; i < CHAIN; i++) q.submit((cg) => cg.parallelFor([64], 'bump', cg.readWrite(b, mapper)));
      const t1 = performance.now();
      await q.wait();
      const t2 = performance.now();
      const out = await q.fence(b);
      if (out.some((x) => x !== CHAIN)) throw new Error(`chain: expected every point to be ${CHAIN}, got ${out[0]}`);
      if (r > 0) {
        submitOnly.push(((t1 - t0) * 1e3) / CHAIN);
        submitAndRun.push(((t2 - t0) * 1e3) / CHAIN);
      }
      await q.destroy();
    }
  }
  report.chain = {
    tasks: CHAIN,
    chunksPerTask: chainChunks,
    graphOnlyUsPerTask: sig(median(graphOnly)),
    submitOnlyUsPerTask: sig(median(submitOnly)),
    submitAndRunUsPerTask: sig(median(submitAndRun)),
  };

  // --- heat diffusion ---------------------------------------------------------------------------
  const initial = new Float32Array(ROWS * COLS);
  for (let j = 0; j < COLS; j++) initial[j] = 100;
  for (let i = ROWS >> 2; i < ROWS >> 1; i++) for (let j = COLS >> 2; j < COLS >> 1; j++) initial[i * COLS + j] = 50;

  const onQueue = async () => {
    const q = ctx.createQueue();
    q.load(mod);
    let u = q.buffer(Float32Array, [ROWS, COLS], { init: initial, name: 'u' });
    let v = q.buffer(Float32Array, [ROWS, COLS], { name: 'v' });
    const t0 = performance.now();
    for (let s = 0; s < STEPS; s++) {
      const [src, dst] = [u, v];
      q.submit((cg) => {
        const from = cg.read(src, access.neighborhood([1, 1], 'alongAxes'));
        const to = cg.write(dst, access.oneToOne(), { noInit: true });
        cg.parallelFor([ROWS, COLS], 'heat_step', from, to, ALPHA);
      });
      [u, v] = [v, u];
    }
    const result = await q.fence(u);
    const seconds = (performance.now() - t0) / 1e3;
    const chunks = q.chunkCount;
    await q.destroy();
    return { result, seconds, chunks };
  };
  const singleThread = () => {
    let a = Float32Array.from(initial);
    let b = new Float32Array(a.length);
    const t0 = performance.now();
    for (let s = 0; s < STEPS; s++) {
      for (let i = 0; i < ROWS; i++) {
        for (let j = 0; j < COLS; j++) {
          const p = i * COLS + j;
          const edge = i === 0 || j === 0 || i === ROWS - 1 || j === COLS - 1;
          b[p] = edge ? a[p] : a[p] + ALPHA * (a[p - COLS] + a[p + COLS] + a[p - 1] + a[p + 1] - 4 * a[p]);
        }
      }
      [a, b] = [b, a];
    }
    return { result: a, seconds: (performance.now() - t0) / 1e3 };
  };

  const cellUpdates = ROWS * COLS * STEPS;
  const ours = [];
  const base = [];
  let maxDiff = 0;
  let heatChunks = 0;
  await onQueue(); // warm-up: workers load and compile the kernel
  singleThread();
  for (let r = 0; r < REPEATS; r++) {
    const q = await onQueue();
    const s = singleThread();
    heatChunks = q.chunks;
    ours.push(cellUpdates / q.seconds);
    base.push(cellUpdates / s.seconds);
    for (let i = 0; i < s.result.length; i++) maxDiff = Math.max(maxDiff, Math.abs(q.result[i] - s.result[i]));
  }
  report.heat = {
    rows: ROWS,
    cols: COLS,
    steps: STEPS,
    chunksPerTask: heatChunks,
    queueCellsPerSec: sig(median(ours)),
    singleThreadCellsPerSec: sig(median(base)),
    speedup: sig(median(ours) / median(base), 3),
    maxAbsDiff: maxDiff,
  };
  printJson(report);
} finally {
  await ctx.destroy();
}

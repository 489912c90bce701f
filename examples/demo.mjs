// A tour of pxl on every CPU core: a task kernel with NDArray slices and messages, then a
// bandwidth-bound batch kernel. Run with `npm start` after `npm ci`.
import { createContext, NDArray } from 'pxl';

const ctx = await createContext();
console.log(`pxl: ${ctx.getAttribute('coreCount')} MU cores (${ctx.getAttribute('device')})`);
try {
  const mod = await ctx.createModule(new URL('./kernels.mjs', import.meta.url));
  const job = ctx.createJob();
  job.load(mod);

  // Monte Carlo pi: 4096 tasks, each writes its hit count into its own slot of an NDArray.
  const tasks = 4096;
  const samples = 20_000;
  const hitsPtr = ctx.memAlloc(tasks * 8);
  const pi = job.buildMap('monte_carlo_pi', tasks).setMessageCallback((m) => console.log(`  kernel says: ${m}`));
  let t0 = performance.now();
  await pi.execute(new NDArray(hitsPtr, 'float64', [tasks, 1]), samples, 42);
  await pi.synchronize();
  const hits = ctx.hostView(hitsPtr, 'float64').reduce((a, b) => a + b, 0);
  console.log(`pi ≈ ${((4 * hits) / (tasks * samples)).toFixed(5)} from ${(tasks * samples / 1e6).toFixed(0)} M samples in ${(performance.now() - t0).toFixed(0)} ms`);

  // Triad over 64 MiB arrays: shared memory means no copies between host and cores.
  const n = 8 << 20;
  const chunk = 1 << 14;
  const x = ctx.memAlloc(n * 8);
  const y = ctx.memAlloc(n * 8);
  ctx.hostView(x, 'float64').fill(1);
  ctx.hostView(y, 'float64').fill(2);
  const triad = job.buildMap('triad', n / chunk).setBatchSize(4);
  const args = [3, new NDArray(x, 'float64', [n]), new NDArray(y, 'float64', [n]), chunk];
  await triad.execute(...args);
  await triad.synchronize();
  const reps = 10;
  t0 = performance.now();
  for (let r = 0; r < reps; r++) await triad.execute(...args);
  await triad.synchronize();
  const seconds = (performance.now() - t0) / 1000;
  const ys = ctx.hostView(y, 'float64');
  console.log(`triad: y[0] = ${ys[0]} (expected ${2 + 3 * (reps + 1)}), ${((reps * n * 24) / seconds / 1e9).toFixed(1)} GB/s`);
} finally {
  await ctx.destroy();
}

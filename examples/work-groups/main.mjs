// Work-group kernels (docs/work-groups.md): a two-level sum of a million values in two chained
// launches of one command buffer, and a row smoothing that reads its tiles with DMA. Each result
// is checked against a plain loop.
//   npm run build && node examples/work-groups/main.mjs
import { CommandBuffer, createContext, dispatch, Fence, NDArray } from '../../dist/index.js';

const ctx = await createContext();
const job = ctx.createJob();
job.load(await ctx.createModule(new URL('./kernels.mjs', import.meta.url)));

const array = (n, shape = [n]) => new NDArray(ctx.memAlloc(n * 8), 'float64', shape);
const run = async (cb) => {
  const fence = new Fence();
  dispatch(cb.finalize(), { fence });
  await fence.wait();
};

// 1. Sum 2^20 values: 4096 groups of 256 → 4096 partial sums → 16 groups of 256 → 16 → on the host.
const n = 1 << 20, l = 256;
const values = array(n);
const data = ctx.hostView(values.ptr, 'float64');
for (let i = 0; i < n; i++) data[i] = Math.sin(i) * 0.5 + 0.5;
const partial = array(n / l);
const partial2 = array(n / l / l);
await run(
  new CommandBuffer(ctx, job)
    .launch('block_sum', { global: [n], local: [l] }, values, partial)
    .launch('block_sum', { global: [n / l], local: [l] }, partial, partial2),
);
const total = ctx.hostView(partial2.ptr, 'float64').reduce((a, v) => a + v, 0);
let expected = 0;
for (let i = 0; i < n; i++) expected += data[i];
console.log(`sum of ${n} values: ${total.toFixed(6)} (plain loop: ${expected.toFixed(6)})`);

// 2. Smooth a 96 × 64 image row-wise in 16 × 8 tiles read by DMA.
const rows = 96, width = 64;
const image = array(rows * width, [rows, width]);
const smooth = array(rows * width, [rows, width]);
const px = ctx.hostView(image.ptr, 'float64');
for (let i = 0; i < px.length; i++) px[i] = (i * 7919) % 101;
await run(new CommandBuffer(ctx, job).launch('smooth_rows', { global: [width, rows], local: [16, 8] }, image, smooth));
const got = ctx.hostView(smooth.ptr, 'float64');
let worst = 0;
for (let y = 0; y < rows; y++) {
  for (let x = 0; x < width; x++) {
    const c = px[y * width + x];
    const up = y === 0 ? c : px[(y - 1) * width + x];
    const down = y === rows - 1 ? c : px[(y + 1) * width + x];
    worst = Math.max(worst, Math.abs(got[y * width + x] - (up + c + down) / 3));
  }
}
console.log(`smoothed ${rows} × ${width}: largest difference from a plain loop ${worst}`);
await ctx.destroy();

// 2-D heat diffusion on the task graph, checked against a plain single-thread loop:
// `npx tsx examples/graph/heat.ts`.
import { access, createContext } from 'pxl';

const [rows, cols, steps, alpha] = [256, 256, 200, 0.2];
const initial = new Float32Array(rows * cols);
for (let j = 0; j < cols; j++) initial[j] = 100;                  // a hot top edge
for (let i = 120; i < 136; i++) for (let j = 60; j < 90; j++) initial[i * cols + j] = 50;

const ctx = await createContext();
const q = ctx.createQueue();                                        // a Job of every core
q.load(await ctx.createModule(new URL('./kernels.ts', import.meta.url)));

// Ping-pong: each step reads one buffer and writes the other. pxl orders the steps itself: step k
// reads what step k-1 wrote, and overwrites what step k-1 read.
let u = q.buffer(Float32Array, [rows, cols], { init: initial, name: 'u' });
let v = q.buffer(Float32Array, [rows, cols], { name: 'v' });
for (let s = 0; s < steps; s++) {
  const [src, dst] = [u, v];
  q.submit((cg) => {
    const from = cg.read(src, access.neighborhood([1, 1], 'alongAxes'));
    const to = cg.write(dst, access.oneToOne(), { noInit: true });
    cg.parallelFor([rows, cols], 'heat_step', from, to, alpha);
  });
  [u, v] = [v, u];
}
const result = await q.fence(u);                                    // a host copy once the last step is done

// The same computation, one point at a time on one thread.
let a = Float32Array.from(initial);
let b = new Float32Array(a.length);
for (let s = 0; s < steps; s++) {
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const p = i * cols + j;
      const edge = i === 0 || j === 0 || i === rows - 1 || j === cols - 1;
      b[p] = edge ? a[p]! : a[p]! + alpha * (a[p - cols]! + a[p + cols]! + a[p - 1]! + a[p + 1]! - 4 * a[p]!);
    }
  }
  [a, b] = [b, a];
}
const maxDiff = result.reduce((m, x, i) => Math.max(m, Math.abs(x - a[i]!)), 0);
console.log(`heat diffusion: ${rows}×${cols}, ${steps} steps on ${q.chunkCount} chunks; max |difference| from the single-thread loop: ${maxDiff}`);
await q.destroy();
await ctx.destroy();
if (maxDiff !== 0) process.exitCode = 1;

// Chunk kernels of the task-graph benchmark (bench/graph.mjs).
import { defineChunkKernel } from 'pxl/mu';

/** Adds 1 to every point of the chunk: the small task of the chain. */
export const bump = defineChunkKernel((c, buf) => {
  const d = buf.data;
  for (let i = c.offset[0]; i < c.end[0]; i++) d[i] += 1;
});

/** One step of 2-D heat diffusion, the same as examples/graph/kernels.ts. */
export const heat_step = defineChunkKernel({
  bind: (src, dst, alpha) => {
    const u = src.data;
    const v = dst.data;
    const rows = src.shape[0];
    const cols = src.shape[1];
    const row = (i, j0, j1) => {
      const at = i * cols;
      for (let j = j0; j < j1; j++) {
        const p = at + j;
        if (i === 0 || j === 0 || i === rows - 1 || j === cols - 1) v[p] = u[p];
        else v[p] = u[p] + alpha * (u[p - cols] + u[p + cols] + u[p - 1] + u[p + 1] - 4 * u[p]);
      }
    };
    return (c) => {
      for (let i = c.offset[0]; i < c.end[0]; i++) row(i, c.offset[1], c.end[1]);
    };
  },
});

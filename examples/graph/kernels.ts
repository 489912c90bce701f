// Chunk kernels of the task-graph examples. Each call runs one chunk of the kernel's range; every
// buffer arrives whole, indexed with global coordinates (row-major).
import { defineChunkKernel, type ChunkView, type NDView } from 'pxl/mu';

/**
 * One explicit step of 2-D heat diffusion: each interior point moves towards the mean of its four
 * neighbours by `alpha`; boundary points keep their value. Reads `u` at the chunk's points and their
 * neighbours along the axes (`access.neighborhood([1, 1], 'alongAxes')`), writes `v` at the chunk's
 * points (`access.oneToOne()`).
 */
export const heat_step = defineChunkKernel({
  bind: (src: NDView<Float32Array>, dst: NDView<Float32Array>, alpha: number) => {
    const u = src.data;
    const v = dst.data;
    const rows = src.shape[0]!;
    const cols = src.shape[1]!;
    const row = (i: number, j0: number, j1: number): void => {
      const at = i * cols;
      for (let j = j0; j < j1; j++) {
        const p = at + j;
        if (i === 0 || j === 0 || i === rows - 1 || j === cols - 1) v[p] = u[p]!;
        else v[p] = u[p]! + alpha * (u[p - cols]! + u[p + cols]! + u[p - 1]! + u[p + 1]! - 4 * u[p]!);
      }
    };
    return (c: ChunkView) => {
      for (let i = c.offset[0]!; i < c.end[0]!; i++) row(i, c.offset[1]!, c.end[1]!);
    };
  },
});

/**
 * `c = a · b` over the kernel range `[n, m]`: the chunk's rows of `a` (`access.slice(1)`), its
 * columns of `b` (`access.slice(0)`), its block of `c` (`access.oneToOne()`).
 */
export const matmul = defineChunkKernel({
  bind: (a: NDView<Float32Array>, b: NDView<Float32Array>, c: NDView<Float32Array>) => {
    const A = a.data;
    const B = b.data;
    const C = c.data;
    const k = a.shape[1]!;
    const m = b.shape[1]!;
    const dot = (i: number, j: number): number => {
      let s = 0;
      for (let x = 0; x < k; x++) s += A[i * k + x]! * B[x * m + j]!;
      return s;
    };
    return (ch: ChunkView) => {
      for (let i = ch.offset[0]!; i < ch.end[0]!; i++) for (let j = ch.offset[1]!; j < ch.end[1]!; j++) C[i * m + j] = dot(i, j);
    };
  },
});

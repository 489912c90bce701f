// Kernels for the demo. Every exported function is a task kernel; defineKernel({ bind }) makes a
// batch kernel that binds its arrays once per launch and loops over its tasks itself.
import { defineKernel, getTaskIdx, message } from 'pxl/mu';

/** Task kernel: each task estimates pi from its own slice of a Monte Carlo run. */
export function monte_carlo_pi(hits, samplesPerTask, seed) {
  const task = getTaskIdx();
  let s = (seed ^ (task * 0x9e3779b1)) >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  let inside = 0;
  for (let i = 0; i < samplesPerTask; i++) {
    const x = next();
    const y = next();
    if (x * x + y * y < 1) inside++;
  }
  hits.data[hits.offset] = inside;
  if (task === 0) message(`task 0 saw ${inside} of ${samplesPerTask} samples inside the circle`);
}

/**
 * Batch kernel: y = a * x + y over chunks of `chunk` elements, one chunk per task. `specialize`
 * recompiles `bind` for each binding so V8 treats the bound arrays as constants; the sweep runs once
 * per task, which V8 optimises better than one long loop per batch (see docs/kernels.md).
 */
export const triad = defineKernel({
  specialize: true,
  bind: (a, x, y, chunk) => {
    const xs = x.data;
    const ys = y.data;
    const sweep = (lo, hi) => {
      for (let i = lo; i < hi; i++) ys[i] = a * xs[i] + ys[i];
    };
    return (first, end) => {
      for (let t = first; t < end; t++) sweep(t * chunk, Math.min((t + 1) * chunk, ys.length));
    };
  },
});

// Kernels the dispatch benchmark runs on pxl's MU cores.
import { defineKernel, getTaskIdx } from 'pxl/mu';

let acc = 0;

/** The trivial per-task work of the baselines: i & 7, consumed into a per-core sink. */
export function trivial() {
  acc += getTaskIdx() & 7;
}

/** Publishes and resets this core's sink: out[core slot] += acc. Used to check exactly-once. */
export function drain_sink(out) {
  Atomics.add(out.i32, 0, acc);
  acc = 0;
}

/** Does nothing: the launch round trip alone. */
export function empty() {}

/**
 * y = a * x + y over `chunk` elements per task. `specialize` has pxl compile the sweep per binding,
 * so V8 specialises it to the bound arrays, as the raw baseline's loop is; the sweep runs once per
 * task so that V8 optimises it as a function instead of on-stack-replacing one long loop, whose
 * code it does not specialise (see docs/kernels.md).
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

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
 * so V8 specialises it to the bound arrays, as the raw baseline's loop is.
 */
export const triad = defineKernel({
  specialize: true,
  bind: (a, x, y, chunk) => {
    const xs = x.data;
    const ys = y.data;
    return (first, end) => {
      const hi = Math.min(end * chunk, ys.length);
      for (let i = first * chunk; i < hi; i++) ys[i] = a * xs[i] + ys[i];
    };
  },
});

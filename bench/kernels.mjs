// Kernels the dispatch benchmark runs on pxl's MU cores.
import { getTaskIdx } from 'pxl/mu';

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

// The streaming kernel is the example's: y = a * x + y, one chunk per task (examples/kernels.mjs).
export { triad } from '../examples/kernels.mjs';

/**
 * Whole-block copies and clears on the main thread, cut into steps with a turn of the event loop
 * between them. A block of a large run holds up to a hundred megabytes (N = 40,000 with the default
 * budget); one `set` or `fill` of that holds the event loop for tens of milliseconds, which a
 * progress bar and Ctrl-C would feel.
 */
import type { FloatArray } from './floatArray.js';

/** Elements per step: 8 MiB of float64, a few milliseconds. */
export const STEP_ELEMENTS = 1 << 20;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Sets `buf[0, length)` to 0, a step at a time. */
export async function clearInSteps(buf: FloatArray, length: number): Promise<void> {
  for (let at = 0; at < length; at += STEP_ELEMENTS) {
    if (at > 0) await nextTurn();
    buf.fill(0, at, Math.min(length, at + STEP_ELEMENTS));
  }
}

/** Copies `from[0, length)` into `to` from index 0, a step at a time. */
export async function copyInSteps(to: FloatArray, from: FloatArray, length: number): Promise<void> {
  for (let at = 0; at < length; at += STEP_ELEMENTS) {
    if (at > 0) await nextTurn();
    const end = Math.min(length, at + STEP_ELEMENTS);
    to.set(from.subarray(at, end), at);
  }
}

/**
 * Whole-block copies, clears and stagings on the main thread, cut into steps with a turn of the
 * event loop between them. A block of a large run holds up to a hundred megabytes (N = 40,000 with the default
 * budget); one `set` or `fill` of that holds the event loop for tens of milliseconds, which a
 * progress bar and Ctrl-C would feel.
 */
import type { BlockInfo } from './blockScheduler.js';
import { lineElements, stageLines, stagingLines } from './blockStaging.js';
import type { FloatArray } from './floatArray.js';
import type { NpyFileLayout } from './npyLayout.js';

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

/**
 * Elements of staging per step: with a square file's mirror (a transpose) about a millisecond, a
 * quarter of {@link STEP_ELEMENTS}, since staging costs several times a plain copy per element.
 */
export const STAGE_STEP_ELEMENTS = STEP_ELEMENTS / 4;

/** Stages `block` from `buf` into `staging` as stageBlock does (without the runs), a few lines a step. */
export async function stageInSteps(layout: NpyFileLayout, block: BlockInfo, buf: FloatArray, staging: FloatArray): Promise<void> {
  const lines = stagingLines(layout, block);
  const step = Math.max(1, Math.floor(STAGE_STEP_ELEMENTS / Math.max(1, lineElements(layout, block))));
  for (let first = 0; first < lines; first += step) {
    if (first > 0) await nextTurn();
    stageLines(layout, block, buf, staging, first, Math.min(lines, first + step));
  }
}

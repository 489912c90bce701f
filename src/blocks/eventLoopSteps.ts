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
 * Staging goes in pieces of about this many elements, and the event loop gets a turn once a step
 * has taken {@link STAGE_STEP_MS}: a step bounded by time, not by size, since the same piece costs
 * ten times more while its code is still cold (the first blocks of a run: 11 ms for one 256 x 256
 * block with its mirror, against 0.3-0.5 ms warm; 5-6 ms for a cold piece of 16,384 elements) or
 * while the cores hold both CPUs.
 */
const STAGE_PIECE_ELEMENTS = 1 << 13;

/** Milliseconds of staging per turn of the event loop. */
export const STAGE_STEP_MS = 2;

/**
 * Stages `block` from `buf` into `staging` as stageBlock does (without the runs), a few lines at a
 * time, the event loop turning after each {@link STAGE_STEP_MS}.
 *
 * @throws (rejects) LogicError as stageBlock does.
 * @example await stageInSteps(layout, block, buf, tile.data.subarray(from, from + stagedElements(layout, block)));
 */
export async function stageInSteps(layout: NpyFileLayout, block: BlockInfo, buf: FloatArray, staging: FloatArray): Promise<void> {
  const lines = stagingLines(layout, block);
  const piece = Math.max(1, Math.floor(STAGE_PIECE_ELEMENTS / Math.max(1, lineElements(layout, block))));
  let turn = performance.now();
  for (let first = 0; first < lines; first += piece) {
    if (first > 0 && performance.now() - turn > STAGE_STEP_MS) {
      await nextTurn();
      turn = performance.now();
    }
    stageLines(layout, block, buf, staging, first, Math.min(lines, first + piece));
  }
}

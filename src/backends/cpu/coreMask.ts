import type { CorePlan } from '../../pxl/launchPlan.js';
import * as L from './layout.js';

/**
 * Host side of a launch slot's core mask and REMAINING word (see the launch slot protocol in
 * layout.ts): which cores of a launch have not counted themselves off yet. A living core counts
 * itself off in worker.ts; the host does it here for a core that died.
 */

/**
 * Sets the mask of the launch in `slot` to the cores of its plan, and REMAINING to the mask words
 * that have a bit. Every word is zero before (a launch completes only once its mask is empty);
 * plain stores, published by the ring's HEAD stores that follow.
 */
export function setCoreMask(ctl: Int32Array, cores: number, slot: number, plans: readonly CorePlan[]): void {
  const mb = L.maskBase(cores, slot);
  let words = 0;
  for (const plan of plans) {
    const w = Math.floor(plan.core / L.MASK_BITS);
    ctl[mb + w]! |= 1 << (plan.core % L.MASK_BITS);
    words |= 1 << w;
  }
  Atomics.store(ctl, L.slotBase(cores, slot) + L.S_REMAINING, words);
}

/**
 * Counts a dead core off the launch in `slot`, as the core itself would have, but idempotently:
 * the core may have cleared its bit, and its mask word's bit in REMAINING, before it died. A mask
 * word is empty for good once empty, so clearing its REMAINING bit again is harmless. The host is
 * woken whenever REMAINING is empty: the core may have emptied it and died before its notify, and
 * a spare wake-up only makes the waiting loop look again. Call it only while the launch is in
 * flight: once it completes, its slot may carry another launch's mask.
 */
export function countOffDead(ctl: Int32Array, cores: number, slot: number, core: number): void {
  const word = L.maskBase(cores, slot) + Math.floor(core / L.MASK_BITS);
  Atomics.and(ctl, word, ~(1 << (core % L.MASK_BITS)));
  if (Atomics.load(ctl, word) !== 0) return;
  const remaining = L.slotBase(cores, slot) + L.S_REMAINING;
  Atomics.and(ctl, remaining, ~(1 << Math.floor(core / L.MASK_BITS)));
  if (Atomics.load(ctl, remaining) === 0) Atomics.notify(ctl, remaining);
}

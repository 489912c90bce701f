/**
 * Shared-memory layout of the CPU backend's dispatcher: one Int32Array (`ctl`) that the host and
 * every MU core (worker thread) map. All offsets are in 32-bit words.
 *
 * Protocol (one writer per word unless stated):
 *
 * - Each core owns a 64-byte line (so hot counters never share a cache line) and a ring of
 *   RING_SIZE entries. The host is the only producer: it writes an entry at position HEAD, then
 *   publishes it with `Atomics.store(HEAD, head + 1)`. The core is the only consumer: after running
 *   an entry it publishes `Atomics.store(TAIL, pos + 1)`. The host never has more than LAUNCH_SLOTS
 *   launches in flight, and LAUNCH_SLOTS <= RING_SIZE, so a ring never overflows.
 *
 * - Waking a core: the core sleeps in `Atomics.wait(DOORBELL, seen)` after checking HEAD and the
 *   message EPOCH. The host bumps DOORBELL after every HEAD store and every message it posts.
 *   Because the core reads DOORBELL *before* checking for work, a bump that lands between its
 *   check and its wait makes the wait return at once. Notifying is the expensive part (a futex
 *   wake that often preempts the host), so the host notifies only a core that announced SLEEPING.
 *   The core stores SLEEPING = 1 before its wait; the host bumps DOORBELL before it loads SLEEPING.
 *   With sequentially consistent atomics either the host sees SLEEPING = 1 and notifies, or the
 *   core's wait sees the new DOORBELL and returns: no wake-up is lost.
 *
 * - Messages that cannot travel as words (SharedArrayBuffers of new allocations, module URLs) go
 *   over a MessagePort. The host posts them, then increments the global EPOCH. A core compares
 *   EPOCH with the last value it drained before it runs any entry, and drains its port with
 *   `receiveMessageOnPort`, so a launch never sees a buffer its core does not know. Ordering
 *   hazard: the core loads HEAD *before* EPOCH. The host bumps EPOCH before it stores the HEAD of a
 *   launch that uses the new buffer, so a core that sees that HEAD then sees the bump; loaded the
 *   other way round, a core could see the old EPOCH, then the new HEAD, and run the launch without
 *   the buffer ("device buffer N is not allocated").
 *
 * - A launch lives in a slot. The host fills the slot and its core mask (one bit per core that
 *   takes part, in MASK words of 32 cores each), sets REMAINING to the set of mask words that have
 *   a bit (bit w for word w), then enqueues one ring entry per core. Each core, when done with its
 *   batches, stores TAIL, then counts itself off: it clears its bit in the mask; the core whose clear
 *   empties a mask word clears that word's bit in REMAINING, and the one that empties REMAINING
 *   notifies the host, which waits with `Atomics.waitAsync`. Then the core stores CURRENT = -1.
 *   Why bits and not a count: a core can die (a kernel exits, its worker is terminated from outside)
 *   between any two of these steps, and the host must then count it off exactly once. Clearing a bit
 *   is idempotent, so the host simply clears the dead core's bits again for every entry the core
 *   finished (pos < TAIL) whose launch is still in flight, and fails the entry it was running
 *   (CURRENT == TAIL). A count could not be repaired: after a death between the TAIL store and a
 *   decrement, the host cannot tell whether the decrement happened.
 *
 * - CANCEL is set by the host (cancel) or by a core whose kernel threw; cores read it before each
 *   batch, so unissued batches are skipped and batches in flight drain.
 *
 * - Ordering after another launch (command buffers chain dependent launches this way): the host
 *   stores the predecessor's slot and generation in AFTER_SLOT / AFTER_GEN (AFTER_SLOT = -1: none).
 *   Before its first batch a core waits until the predecessor's REMAINING is 0, then copies the
 *   predecessor's failure or cancel into its own CANCEL, so no batch runs after a failed one. Hazard:
 *   once the predecessor's REMAINING is 0 the host may complete it and reuse its slot for another
 *   launch. The core therefore re-reads the predecessor's GENERATION after every read of its
 *   counters, and waits with a short timeout (a reused slot's REMAINING may equal the value it waits
 *   on). A changed generation means the host already completed the predecessor, and the host stores
 *   the predecessor's failure into every dependent's CANCEL *before* it frees the slot. Deadlock is
 *   impossible because a launch only ever waits on an earlier one, and every ring runs its entries
 *   in launch order.
 *
 * - Tracing: when the host turns it on, it posts each core a trace buffer (TRACE_RECORD float64s
 *   per record, a ring of `capacity` records per core), then sets H_TRACE. A core that sees H_TRACE
 *   at the start of an entry runs that entry's batches with timestamps and appends one record per
 *   batch, then publishes the count with `Atomics.store(TRACE_COUNT)`. The host drains records
 *   from its last count up to TRACE_COUNT; a ring that wrapped in between lost the oldest ones.
 */

export const LINE = 16; // words per 64-byte line

// Header line.
export const H_EPOCH = 0;
export const H_SHUTDOWN = 1;
/** 1 while execution tracing is on. */
export const H_TRACE = 2;

// Per-core line: base = CORE_BASE + core * LINE.
export const CORE_BASE = LINE;
export const C_HEAD = 0;
export const C_TAIL = 1;
export const C_DOORBELL = 2;
/** Ring position the core is running, or -1. */
export const C_CURRENT = 3;
/** Batches of the current entry started / finished. Written by the core only. */
export const C_ISSUED = 4;
export const C_DONE = 5;
/** 1 while the core is (about to be) blocked in Atomics.wait. Written by the core only. */
export const C_SLEEPING = 6;
/** Batch records this core has written to its trace ring since tracing last started. */
export const C_TRACE_COUNT = 7;

/** Float64s per trace record: launch id, batch, start, end (ms since the epoch). */
export const TRACE_RECORD = 4;

export const RING_SIZE = 64;
export const ENTRY_WORDS = 6;
export const E_SLOT = 0;
export const E_FIRST_BATCH = 1;
export const E_BATCH_STRIDE = 2;
export const E_BATCH_COUNT = 3;
/**
 * Batches of the entry the core started / finished, stored by the core before its TAIL store (the
 * host zeroes them when it writes the entry and copies a dead core's live counts). A finished entry
 * thus reports what really ran, not its planned count, after a cancel or a failure skipped batches.
 */
export const E_ISSUED = 4;
export const E_DONE = 5;

export const LAUNCH_SLOTS = 64;
export const SLOT_WORDS = LINE;
export const S_GENERATION = 0;
export const S_MODULE = 1;
export const S_KERNEL = 2;
export const S_TASK_COUNT = 3;
export const S_BATCH_SIZE = 4;
export const S_MAP_ID = 5;
export const S_ARGS_VERSION = 6;
export const S_ARGS_LENGTH = 7;
export const S_LAUNCH_ID = 8;
/** Slot and generation of the launch this one runs after; AFTER_SLOT -1 for none. */
export const S_AFTER_SLOT = 9;
export const S_AFTER_GEN = 10;
// Hot words written by cores; kept on their own line.
/** Bit w set while mask word w of the slot has a core that has not counted itself off; 0 when done. */
export const S_REMAINING = LINE + 0;
export const S_CANCEL = LINE + 1;
export const S_FAILED = LINE + 2;
/** Messages (mu.message and kernel errors) cores posted for this launch; the host waits for all. */
export const S_MESSAGES = LINE + 3;
export const SLOT_STRIDE = 2 * LINE;

/** Distinct argument sets per Map whose bindings cores keep (and the host remembers versions of). */
export const ARGS_VERSIONS = 32;

/** Bytes of encoded arguments one launch may carry. */
export const ARGS_CAPACITY = 4096;

export function coreBase(core: number): number {
  return CORE_BASE + core * LINE;
}

export function ringBase(cores: number): number {
  return CORE_BASE + cores * LINE;
}

export function entryIndex(cores: number, core: number, pos: number): number {
  return ringBase(cores) + (core * RING_SIZE + (pos % RING_SIZE)) * ENTRY_WORDS;
}

export function slotBase(cores: number, slot: number): number {
  return ringBase(cores) + cores * RING_SIZE * ENTRY_WORDS + slot * SLOT_STRIDE;
}

/** Cores per word of a slot's core mask. */
export const MASK_BITS = 32;

/** Cores one pool may have: REMAINING has one bit per mask word. */
export const MAX_CORES = MASK_BITS * 32;

/** Words of one slot's core mask, padded to whole lines so slots' masks share no cache line. */
export function maskWords(cores: number): number {
  return Math.ceil(Math.ceil(cores / MASK_BITS) / LINE) * LINE;
}

/** First word of a slot's core mask: core c is bit `c % MASK_BITS` of word `c / MASK_BITS`. */
export function maskBase(cores: number, slot: number): number {
  return slotBase(cores, LAUNCH_SLOTS) + slot * maskWords(cores);
}

export function controlWords(cores: number): number {
  return maskBase(cores, LAUNCH_SLOTS);
}

/** Failure kinds stored in S_FAILED. */
export const FAILED_NONE = 0;
export const FAILED_KERNEL = 1;
export const FAILED_CORE_DIED = 2;

/** Longest a core sleeps at once while it waits for a predecessor launch (ms); see the ordering hazard above. */
export const AFTER_WAIT_MS = 1;

import type { DmaCopy, DmaEvent } from './dmaCopy.js';

/**
 * Per-thread kernel state read by `getTaskIdx()` and friends. It lives on `globalThis` under a
 * registered symbol, so a kernel module that imports a different copy of `pxl/mu` (the package
 * export versus a relative path to the sources) still sees the values its core sets.
 */
export interface MuState {
  taskIdx: number;
  taskCount: number;
  send: (value: unknown) => void;
  /**
   * @internal The launch whose batches the core is running, different for consecutive launches.
   * Cores keep a binding while a Map's arguments repeat, but the arrays may hold new data by the
   * next launch: a kernel that keeps a copy of array contents between batches keys it by this.
   */
  launch: number;
  /**
   * The work-group being run, while a group kernel runs on this core; undefined otherwise. Set and
   * cleared by the core's group runner (backends/cpu/groupRunner.ts), which runs on the same thread
   * as the kernel, so no synchronisation is needed.
   */
  group: GroupContext | undefined;
}

/**
 * What a work-item yields to its group's runner: the value of `mu.barrier()` or `mu.dmaWait()`.
 * Write `yield mu.barrier()`; the value itself carries nothing a kernel needs.
 */
export type SyncPoint = { readonly kind: 'barrier' } | { readonly kind: 'dmaWait'; readonly events: readonly DmaEvent[] };

/**
 * @internal The work-group a group kernel is running. The runner updates the id arrays before it
 * resumes each work-item (arrays of length 3, padded with id 0 / size 1 beyond the range's dims).
 */
export interface GroupContext {
  readonly dims: number;
  readonly localId: number[];
  readonly groupId: number[];
  readonly globalId: number[];
  readonly localSize: readonly number[];
  readonly globalSize: readonly number[];
  readonly numGroups: readonly number[];
  /** Flat local index of the running work-item. */
  item: number;
  /** The group's id for messages, `(3)` or `(1, 2)`. */
  label: string;
  /** A sync point the running work-item created and has not yielded yet. */
  pending: SyncPoint | undefined;
  /** DMA calls the running work-item has made in this group. */
  dmaCalls: number;
  /** DMA copies recorded in this group, in issue order. */
  readonly copies: DmaCopy[];
}

const KEY = Symbol.for('pxl.mu.state');

function outsideKernel(): never {
  throw new Error('mu.message() can only be called from a kernel running on an MU core');
}

export const muState: MuState = ((globalThis as Record<symbol, unknown>)[KEY] ??= {
  taskIdx: 0,
  taskCount: 0,
  send: outsideKernel,
  launch: 0,
  group: undefined,
}) as MuState;

/** @internal The error for a sync point created and not yielded by the running work-item. */
export function notYielded(g: GroupContext): Error {
  const how = g.pending?.kind === 'dmaWait' ? 'yield mu.dmaWait(...events)' : 'yield mu.barrier()';
  return new Error(`work-item ${g.item} of work-group ${g.label} called mu.${g.pending?.kind ?? 'barrier'}() without yielding its value: write \`${how}\`, so that the work-item waits there for the rest of its group`);
}

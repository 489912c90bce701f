/**
 * Runs the work-groups of a group kernel on one core. Each work-item is a coroutine (a generator);
 * the runner steps every work-item of a group to its next `yield` in local-id order, checks that
 * they all stopped at the same kind of sync point (`mu.barrier()` or `mu.dmaWait()`), performs the
 * DMA copies a wait names, and resumes them all. That is the barrier-separated phases a barrier
 * compiler pass produces, with V8 keeping each work-item's live variables in its generator.
 *
 * Threading: everything here runs on the core's own thread, between the kernel's resumptions; the
 * group context in `muState.group` is set for the duration of a batch and cleared after it, so mu
 * calls from task or batch kernels on this core see no group.
 */
import type { GroupGeometry } from '../backend.js';
import { DTYPES, type AnyTypedArray } from '../../core/dtype.js';
import { performCopy, type DmaCopy } from '../../mu/dmaCopy.js';
import type { GroupKernel } from '../../mu/groupKernel.js';
import { muState, notYielded, type GroupContext, type SyncPoint } from '../../mu/state.js';

/** Runs work-groups [first, end) of a launch on this core. */
type GroupBatchRunner = (first: number, end: number) => void;

function allocateLocal(kernel: GroupKernel, localSize: readonly number[]): Record<string, AnyTypedArray> {
  const out: Record<string, AnyTypedArray> = {};
  for (const [name, spec] of Object.entries(kernel.local)) {
    const n = typeof spec.length === 'function' ? spec.length(localSize) : spec.length;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
      throw new RangeError(`local array '${name}': its length function returned ${String(n)} for work-group size [${localSize.join(', ')}]; it must return an integer ≥ 0`);
    }
    out[name] = new DTYPES[spec.dtype](n);
  }
  return Object.freeze(out);
}

function describe(value: unknown): string {
  if (value === undefined) return 'undefined (a bare `yield`)';
  if (value === null || typeof value !== 'object') return typeof value === 'string' ? `'${value}'` : String(value);
  return `an object (${Object.prototype.toString.call(value)})`;
}

const RULE = 'every work-item of a group must reach the same sequence of `yield mu.barrier()` and `yield mu.dmaWait(...)` (uniform control flow)';

/**
 * Binds a group kernel to its decoded argument values (the geometry first) and returns the
 * function the core calls per batch of work-groups. Local memory is allocated here, once per
 * binding, and reused by every group this core runs.
 */
export function bindGroupKernel(kernel: GroupKernel, values: readonly unknown[]): GroupBatchRunner {
  const geo = values[0] as GroupGeometry;
  const l0 = geo.l0, l1 = geo.l1, l2 = geo.l2;
  const n0 = geo.g0 / l0, n1 = geo.g1 / l1;
  const items = l0 * l1 * l2;
  const localSize = [l0, l1, l2];
  const local = allocateLocal(kernel, localSize.slice(0, geo.dims));
  const callArgs: unknown[] = [local, ...values.slice(1)];
  const run = kernel.run as unknown as (...a: unknown[]) => Iterator<SyncPoint, void, unknown>;
  const g: GroupContext = {
    dims: geo.dims,
    localId: [0, 0, 0],
    groupId: [0, 0, 0],
    globalId: [0, 0, 0],
    localSize,
    globalSize: [geo.g0, geo.g1, geo.g2],
    numGroups: [n0, n1, geo.g2 / l2],
    item: 0,
    label: '',
    pending: undefined,
    dmaCalls: 0,
    copies: [],
  };
  const coroutines: (Iterator<SyncPoint, void, unknown> | undefined)[] = new Array(items);
  const at: (SyncPoint | null)[] = new Array<SyncPoint | null>(items).fill(null);
  const calls = new Int32Array(items);

  /** Makes work-item `i` the running one: its ids in `g`. */
  const enter = (i: number): void => {
    const x = i % l0, y = Math.floor(i / l0) % l1, z = Math.floor(i / (l0 * l1));
    g.item = i;
    g.localId[0] = x;
    g.localId[1] = y;
    g.localId[2] = z;
    g.globalId[0] = g.groupId[0]! * l0 + x;
    g.globalId[1] = g.groupId[1]! * l1 + y;
    g.globalId[2] = g.groupId[2]! * l2 + z;
    g.dmaCalls = calls[i]!;
    g.pending = undefined;
  };

  /** Checks that every work-item made as many DMA calls as work-item 0. */
  const checkDmaCalls = (where: string): void => {
    for (let i = 1; i < items; i++) {
      if (calls[i] !== calls[0]) {
        throw new Error(`work-group ${g.label} diverged ${where}: work-item 0 made ${calls[0]} DMA calls in this group but work-item ${i} made ${calls[i]}; DMA calls are collective, so every work-item makes the same ones in the same order`);
      }
    }
  };

  const diverged = (point: number, returned: number): Error => {
    let barriers = 0, waits = 0;
    for (let i = 0; i < items; i++) {
      const p = at[i];
      if (p?.kind === 'barrier') barriers++;
      else if (p?.kind === 'dmaWait') waits++;
    }
    const parts: string[] = [];
    if (barriers > 0) parts.push(`${barriers} wait at mu.barrier()`);
    if (waits > 0) parts.push(`${waits} wait at mu.dmaWait()`);
    if (returned > 0) parts.push(`${returned} returned`);
    const list = parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]!}` : parts[0]!;
    return new Error(`work-group ${g.label} diverged at barrier #${point}: of its ${items} work-items, ${list}; ${RULE}`);
  };

  /** Performs the copies of this group not yet done whose events `events` names (all when undefined), in issue order. */
  const complete = (events: readonly unknown[] | undefined): void => {
    for (const c of g.copies as DmaCopy[]) if (!c.done && (events === undefined || events.includes(c.event))) performCopy(c);
  };

  const runGroup = (group: number): void => {
    const gx = group % n0, gy = Math.floor(group / n0) % n1, gz = Math.floor(group / (n0 * n1));
    g.groupId[0] = gx;
    g.groupId[1] = gy;
    g.groupId[2] = gz;
    g.label = `(${[gx, gy, gz].slice(0, g.dims).join(', ')})`;
    g.copies.length = 0;
    calls.fill(0);
    for (let i = 0; i < items; i++) {
      enter(i);
      coroutines[i] = run(...callArgs);
    }
    for (let point = 1; ; point++) {
      let returned = 0;
      for (let i = 0; i < items; i++) {
        enter(i);
        const r = coroutines[i]!.next();
        calls[i] = g.dmaCalls;
        if (r.done === true) {
          if (g.pending !== undefined) throw notYielded(g);
          at[i] = null;
          returned++;
        } else {
          if (r.value !== g.pending || g.pending === undefined) {
            if (g.pending !== undefined) throw notYielded(g);
            throw new Error(`work-item ${i} of work-group ${g.label} yielded ${describe(r.value)}: a group kernel yields only the value of a fresh mu.barrier() or mu.dmaWait(...) call, as \`yield mu.barrier()\``);
          }
          at[i] = r.value;
        }
      }
      g.pending = undefined;
      if (returned === items) break;
      if (returned > 0) throw diverged(point, returned);
      const first = at[0]!;
      for (let i = 1; i < items; i++) if (at[i]!.kind !== first.kind) throw diverged(point, 0);
      checkDmaCalls(`at barrier #${point}`);
      if (first.kind === 'dmaWait') {
        for (let i = 1; i < items; i++) {
          const e = (at[i] as { events: readonly unknown[] }).events;
          if (e.length !== first.events.length || e.some((x, k) => x !== first.events[k])) {
            throw new Error(`work-group ${g.label} diverged at barrier #${point}: work-item ${i} waits for other DMA events than work-item 0; ${RULE}, with the same events`);
          }
        }
        complete(first.events);
      }
    }
    checkDmaCalls('at its end');
    // Copies never waited for are not lost: they complete with their group.
    complete(undefined);
  };

  return (first, end) => {
    muState.group = g;
    try {
      for (let t = first; t < end; t++) {
        muState.taskIdx = t;
        runGroup(t);
      }
    } finally {
      muState.group = undefined;
      coroutines.fill(undefined);
    }
  };
}

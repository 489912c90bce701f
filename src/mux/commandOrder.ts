import { DevicePtr } from '../pxl/devicePtr.js';
import { NDArray } from '../pxl/ndarray.js';
import type { Command } from './command.js';

/**
 * Which commands of a command buffer must wait for which: the "as if in order" rule of ComputeMux
 * turned into a dependency graph. Two commands depend when they touch overlapping bytes of the
 * same memory (a device allocation, or the host array a read fills) and at least one of them
 * writes there. Commands that share no such bytes may overlap.
 *
 * What each command touches:
 * - write, fill: the device region written; read: the device region read and the host bytes
 *   filled; copy: its source and destination regions.
 * - launch: every device pointer argument from its offset to the end of its allocation, and every
 *   NDArray's bytes, all as read-and-written: a kernel declares no access modes here.
 * - callback: anything, so it is a barrier: it waits for every earlier command and every later
 *   command waits for it.
 */

interface Touch {
  /** The memory: a device allocation's identity, or a host ArrayBuffer. */
  readonly memory: object;
  readonly start: number;
  readonly end: number;
  readonly writes: boolean;
}

interface Live extends Touch {
  readonly command: number;
}

/** A buffer's dependency graph, both ways. */
export interface CommandGraph {
  /** For each command, the earlier commands it waits for (ascending, no duplicates). */
  readonly before: readonly (readonly number[])[];
  /** For each command, the later commands that wait for it (ascending). */
  readonly after: readonly (readonly number[])[];
}

/** The dependency graph of a buffer's commands; computed once, when the buffer is finalized. */
export function commandGraph(commands: readonly Command[]): CommandGraph {
  const before = commandDependencies(commands);
  const after: number[][] = commands.map(() => []);
  before.forEach((list, i) => {
    for (const b of list) after[b]!.push(i);
  });
  return { before, after };
}

/** For each command, the indices of earlier commands it must wait for (ascending, no duplicates). */
export function commandDependencies(commands: readonly Command[]): readonly (readonly number[])[] {
  const live = new Map<object, Live[]>();
  const out: number[][] = [];
  let barrier = -1;
  commands.forEach((command, index) => {
    if (command.kind === 'callback') {
      const all: number[] = [];
      for (let i = barrier + 1; i < index; i++) all.push(i);
      if (barrier >= 0) all.unshift(barrier);
      out.push(all);
      live.clear();
      barrier = index;
      return;
    }
    const before = new Set<number>();
    if (barrier >= 0) before.add(barrier);
    const touches = touchesOf(command);
    for (const t of touches) {
      for (const other of live.get(t.memory) ?? []) {
        if ((t.writes || other.writes) && t.start < other.end && other.start < t.end) before.add(other.command);
      }
    }
    for (const t of touches) {
      let list = live.get(t.memory);
      if (list === undefined) live.set(t.memory, (list = []));
      // A write hides every earlier touch inside its range: a later command that overlaps one of
      // those overlaps this write too, and so waits for it, and through it for them.
      if (t.writes) list = list.filter((o) => o.start < t.start || o.end > t.end);
      list.push({ ...t, command: index });
      live.set(t.memory, list);
    }
    out.push([...before].sort((a, b) => a - b));
  });
  return out;
}

function touchesOf(c: Exclude<Command, { kind: 'callback' }>): Touch[] {
  switch (c.kind) {
    case 'write':
    case 'fill':
      return [device(c.dst, c.offset, c.size, true)];
    case 'read':
      return [device(c.src, c.offset, c.size, false), { memory: c.dst.buffer, start: c.dst.byteOffset, end: c.dst.byteOffset + c.dst.byteLength, writes: true }];
    case 'copy':
      return [device(c.src, c.srcOffset, c.size, false), device(c.dst, c.dstOffset, c.size, true)];
    case 'launch':
      return c.args.flatMap((a): Touch[] => {
        if (a instanceof DevicePtr) return [device(a, 0, a.byteLength, true)];
        if (a instanceof NDArray) return [device(a.ptr, 0, a.byteLength, true)];
        return [];
      });
  }
}

function device(ptr: DevicePtr, offset: number, size: number, writes: boolean): Touch {
  const start = ptr.byteOffset + offset;
  return { memory: ptr.allocation, start, end: start + size, writes };
}

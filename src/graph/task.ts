import type { Chunk } from '../core/chunk.js';
import type { Range } from '../core/range.js';
import { formatRegion, type Region } from '../core/region.js';
import { formatAccess, type Access } from './accessMode.js';
import { formatBufferId, type BufferId } from './buffer.js';
import type { Copy, MemorySpaceId } from './coherence.js';
import type { CheckedKernelLaunchShape } from './launchShape.js';
import { ArgumentError } from '../core/errors.js';
import { describe } from '../core/validate.js';

declare const taskBrand: unique symbol;

/** Identifies a task of a queue (`T1`, `T2`, ... in submission order); never a buffer id. */
export type TaskId = number & { readonly [taskBrand]: true };

/** Renders a task id as `T3`. */
export function formatTaskId(id: TaskId): string {
  if (!Number.isSafeInteger(id) || id < 0) throw new ArgumentError(`formatTaskId: id must be a task id (a TaskRecord's id, an integer >= 0), got ${describe(id)}`);
  return `T${id}`;
}

/**
 * What a task does: `'kernel'` runs a chunk kernel over a range (`submit` with `parallelFor`);
 * `'host'` runs a function on the main thread (`submit` with `hostTask`); `'fence'` copies a
 * buffer region to the host (`fence`); `'init'` copies a buffer's initial contents into it;
 * `'horizon'` does nothing but wait for every task before it, so that the graph can forget them (it
 * stands in for them as the last writer and reader of everything they touched).
 */
export type TaskKind = 'kernel' | 'host' | 'fence' | 'init' | 'horizon';

/**
 * Why one task waits for another:
 * - `'true'` (read after write): the task consumes what the other produced;
 * - `'anti'` (write after read): the task overwrites what the other reads;
 * - `'output'` (write after write): the task overwrites what the other wrote, and no task read it
 *   in between (otherwise it waits for those readers instead, which wait for the writer);
 * - `'order'`: a horizon waits for a task of the execution front; no buffer is involved.
 *
 * A `'true'` dependency on a task subsumes `'anti'` and `'output'` ones on the same task and buffer,
 * which are then not listed.
 */
export type DependencyKind = 'true' | 'anti' | 'output' | 'order';

/** A dependency through data: this task runs after `task` because of `region` of `buffer`. */
export interface DataDependency {
  readonly task: TaskId;
  readonly kind: 'true' | 'anti' | 'output';
  readonly buffer: BufferId;
  readonly region: Region;
}

/** A horizon's dependency on a task of the execution front: ordering only, no buffer or region. */
export interface OrderDependency {
  readonly task: TaskId;
  readonly kind: 'order';
  readonly buffer?: undefined;
  readonly region?: undefined;
}

/** One dependency edge of a task. */
export type Dependency = DataDependency | OrderDependency;

/** One buffer access of a task, as the graph resolved it. */
export interface BufferAccess {
  readonly buffer: BufferId;
  readonly access: Access;
  /** The range mapper's name, or `'fence'` / `'init'` for host accesses. */
  readonly mapper: string;
  /** The union over chunks: what the whole task touches. */
  readonly region: Region;
  /** What each chunk touches, in chunk order (one entry for fences and inits). */
  readonly chunkRegions: readonly Region[];
}

/** A copy a task needs before it runs: `copy` moves part of `buffer` into the task's memory space. */
export interface TaskCopy {
  readonly buffer: BufferId;
  readonly copy: Copy;
}

/**
 * A task as the graph built it: what it runs, what it touches, what it waits for, where it runs and
 * which copies it needs there. Immutable; what `QueueOptions.onTask` receives.
 */
export interface TaskRecord {
  readonly id: TaskId;
  readonly kind: TaskKind;
  /** The kernel's name; the host task's name (default `'host'`); `'fence'`, `'init'` or `'horizon'` for the others. */
  readonly name: string;
  /** The kernel's or host task's index space; undefined for fences, inits and horizons. */
  readonly range: Range | undefined;
  /**
   * A kernel's launch: its global size (`range`), offset, local size, split constraint and the
   * granularity its chunks were cut by. Undefined for every other kind of task.
   */
  readonly launch: CheckedKernelLaunchShape | undefined;
  /** The chunks the kernel runs as, one launch task each; one chunk of the whole range for a host task; empty for the others. */
  readonly chunks: readonly Chunk[];
  readonly accesses: readonly BufferAccess[];
  /** Sorted by task id, then kind (true, anti, output), then buffer id; a horizon's are all `'order'`. */
  readonly dependencies: readonly Dependency[];
  /**
   * For a horizon: the last writers (as `'true'` dependencies with their regions) it stands in for
   * once the next horizon applies it, so that readers through it learn of a failed write. Empty for
   * every other task.
   */
  readonly standsFor: readonly DataDependency[];
  /** The memory space the task runs in. */
  readonly space: MemorySpaceId;
  /** Copies into `space` that must run first; empty while every space is host shared memory. */
  readonly copies: readonly TaskCopy[];
}

/** How diagnostics name a task: `T3 'stencil'`. */
export function taskLabel(t: { id: TaskId; name: string }): string {
  if (typeof (t as Partial<TaskRecord> | null)?.name !== 'string') throw new ArgumentError(`taskLabel: t must be a task (a TaskRecord, or { id, name }), got ${describe(t)}`);
  return `${formatTaskId(t.id)} '${t.name}'`;
}

/** The distinct tasks a task depends on, ascending. */
export function dependencyTasks(t: TaskRecord): TaskId[] {
  if (!Array.isArray((t as Partial<TaskRecord> | null)?.dependencies)) {
    throw new ArgumentError(`dependencyTasks: t must be a TaskRecord (what Queue.submit returns, or onTask receives), got ${describe(t)}`);
  }
  return [...new Set(t.dependencies.map((d) => d.task))].sort((a, b) => a - b);
}

/** Renders a dependency as `true T1 B0 {[(0,0),(4,8))}`, or `order T1` for a horizon's, for logs and test messages. */
export function formatDependency(d: Dependency): string {
  if (typeof (d as Partial<Dependency> | null)?.kind !== 'string') throw new ArgumentError(`formatDependency: d must be a Dependency (an entry of a TaskRecord's dependencies), got ${describe(d)}`);
  if (d.kind === 'order') return `order ${formatTaskId(d.task)}`;
  return `${d.kind} ${formatTaskId(d.task)} ${formatBufferId(d.buffer)} ${formatRegion(d.region)}`;
}

/** Renders an access as `B0 read neighborhood([1,1]) {...}`. */
export function formatBufferAccess(a: BufferAccess): string {
  return `${formatBufferId(a.buffer)} ${formatAccess(a.access)} ${a.mapper} ${formatRegion(a.region)}`;
}

/** A condition the graph reports without failing: reading points no task or init ever wrote. */
export interface GraphWarning {
  readonly kind: 'uninitialized-read';
  readonly task: TaskId;
  readonly buffer: BufferId;
  /** The never-written points the task reads. */
  readonly region: Region;
  readonly message: string;
}

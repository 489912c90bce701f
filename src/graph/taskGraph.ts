import type { Chunk } from '../core/chunk.js';
import type { Dims } from '../core/dims.js';
import { RangeMapperError, TaskGraphError } from '../core/errors.js';
import type { Range } from '../core/range.js';
import { emptyRegion, formatRegion, intersection, isEmpty, region as makeRegion, union, type Region } from '../core/region.js';
import { formatSubrange } from '../core/subrange.js';
import { checkFunction, checkInteger, checkOneOf, checkOptionsObject } from '../core/validate.js';
import { isConsumer, isProducer, type Access } from './accessMode.js';
import type { BufferId, GraphBuffer } from './buffer.js';
import { HOST_MEMORY, type MemorySpaceId } from './coherence.js';
import type { CheckedKernelLaunchShape } from './launchShape.js';
import { applyRangeMapper, checkRangeMapper, mapperName, type AnyRangeMapper, type RangeMapper } from './rangeMapper.js';
import { RegionMap } from './regionMap.js';
import { taskLabel, type BufferAccess, type DataDependency, type Dependency, type GraphWarning, type TaskCopy, type TaskId, type TaskKind, type TaskRecord } from './task.js';

/** What to do when a task reads points that no task (or buffer init) ever wrote. */
export type UninitializedReadPolicy = 'ignore' | 'warn' | 'throw';

/** Options of {@link TaskGraph}. */
export interface TaskGraphOptions {
  /** The memory space each task runs in. Default: host shared memory for every task. */
  spaceFor?: (task: { readonly id: TaskId; readonly kind: TaskKind; readonly name: string }) => MemorySpaceId;
  /** Default `'warn'`: report through `onWarning`. `'throw'` refuses the task with a TaskGraphError. */
  uninitializedReads?: UninitializedReadPolicy;
  /** Receives warnings. Default: `process.emitWarning`. */
  onWarning?: (warning: GraphWarning) => void;
  /**
   * Critical-path length between horizons, in [1, 2^30]: once the longest dependency chain has grown
   * by this many tasks since the last horizon, {@link TaskGraph.horizonIfDue} makes a horizon (as
   * Celerity's horizon step). Default 4.
   */
  horizonStep?: number;
  /**
   * Largest execution front, in [1, 2^30]: once more tasks than this are in the front (tasks no later
   * task depends on yet), {@link TaskGraph.horizonIfDue} makes a horizon even before `horizonStep`,
   * so many independent tasks also keep the tracking state bounded. Default 64.
   */
  horizonMaxParallelism?: number;
}

const TASK_GRAPH_OPTIONS: readonly (keyof TaskGraphOptions)[] = ['spaceFor', 'uninitializedReads', 'onWarning', 'horizonStep', 'horizonMaxParallelism'];
const DEFAULT_HORIZON_STEP = 4;
const DEFAULT_HORIZON_MAX_PARALLELISM = 64;

/** One access of a task being added: a range mapper over the task's chunks, or a fixed region (host tasks). */
export type AccessSpec =
  | { readonly buffer: GraphBuffer; readonly access: Access; readonly mapper: AnyRangeMapper }
  | { readonly buffer: GraphBuffer; readonly access: Access; readonly region: Region; readonly source: string };

/** A task to add: what it is, its chunks (kernel tasks) and its accesses. */
export interface TaskSpec {
  readonly kind: TaskKind;
  readonly name: string;
  readonly range?: Range;
  /** A kernel's launch shape; its chunks were cut from it. */
  readonly launch?: CheckedKernelLaunchShape;
  readonly chunks: readonly Chunk[];
  readonly accesses: readonly AccessSpec[];
}

/** Never-written points a task consumes in one buffer; `read` when a reading access is among them, not only a write without noInit. */
interface Unwritten {
  readonly region: Region;
  readonly read: boolean;
}

/** Per buffer: the last writer of every point (null: never written) and its readers since. */
interface Tracking {
  readonly writers: RegionMap<Dims, TaskId | null>;
  readonly readers: RegionMap<Dims, readonly TaskId[]>;
}

const KIND_ORDER: Record<DataDependency['kind'], number> = { true: 0, anti: 1, output: 2 };

/**
 * The task graph of one queue, built on the main thread as tasks are submitted; it runs nothing
 * (the executor does). For each task it resolves the regions its range mappers touch over all its
 * chunks, refuses producer accesses whose chunks overlap, finds its true, anti and output
 * dependencies from per-buffer region maps of last writers and readers since, plans the copies its
 * memory space needs from each buffer's coherence table, and then records the task's effects.
 *
 * Validation happens before any state changes: a refused task leaves the graph as it was.
 */
export class TaskGraph {
  readonly #spaceFor: NonNullable<TaskGraphOptions['spaceFor']>;
  readonly #policy: UninitializedReadPolicy;
  readonly #onWarning: (warning: GraphWarning) => void;
  readonly #tracking = new Map<BufferId, Tracking>();
  readonly #horizonStep: number;
  readonly #horizonMaxParallelism: number;
  /** Tasks no later task depends on yet: what the next horizon waits for. */
  readonly #front = new Set<TaskId>();
  /** Each nameable task's critical-path length: 1 + the longest of its dependencies'. */
  readonly #pathLength = new Map<TaskId, number>();
  #maxPathLength = 0;
  #pathLengthAtHorizon = 0;
  #lastHorizon: TaskId | undefined;
  #next = 1;

  /**
   * @throws {OptionError} for options that are not an object, an unknown option (naming the nearest),
   *   an unknown `uninitializedReads` policy, or a `horizonStep` or `horizonMaxParallelism` out of range.
   */
  constructor(options?: TaskGraphOptions) {
    const o = checkOptionsObject('TaskGraph options', options, TASK_GRAPH_OPTIONS);
    this.#spaceFor = o.spaceFor === undefined ? () => HOST_MEMORY.id : checkFunction('spaceFor', o.spaceFor);
    this.#policy = checkOneOf('uninitializedReads', o.uninitializedReads ?? 'warn', ['ignore', 'warn', 'throw'] as const);
    this.#onWarning = o.onWarning === undefined ? (w) => process.emitWarning(w.message, 'PxlGraphWarning') : checkFunction('onWarning', o.onWarning);
    this.#horizonStep = checkInteger('horizonStep', o.horizonStep ?? DEFAULT_HORIZON_STEP, 1, 2 ** 30);
    this.#horizonMaxParallelism = checkInteger('horizonMaxParallelism', o.horizonMaxParallelism ?? DEFAULT_HORIZON_MAX_PARALLELISM, 1, 2 ** 30);
  }

  /** The latest horizon task, if there was one. */
  get lastHorizon(): TaskId | undefined {
    return this.#lastHorizon;
  }

  /**
   * The size of the tracking state, all buffers together: entries of the last-writer maps plus
   * entries and reader names of the readers-since maps. What horizons keep bounded.
   */
  get trackingSize(): number {
    let n = 0;
    for (const t of this.#tracking.values()) {
      n += t.writers.entries.length;
      for (const e of t.readers.entries) n += 1 + e.value.length;
    }
    return n;
  }

  /** The tasks no later task depends on yet, ascending: what a horizon made now would wait for. */
  get executionFront(): TaskId[] {
    return [...this.#front].sort((a, b) => a - b);
  }

  /**
   * Makes a horizon task and returns it when one is due, otherwise undefined. One is due once the
   * critical path has grown by `horizonStep` since the last horizon, or the execution front holds
   * more than `horizonMaxParallelism` tasks. As in Celerity, the horizon depends (kind `'order'`)
   * only on the execution front, which every earlier task precedes, and becomes the whole front.
   *
   * Then the previous horizon is applied: in the tracking maps it stands in for every task older than
   * itself, as last writer and as reader. Applying the previous horizon rather than the new one keeps
   * a later task that touches older data from waiting for the whole front; the maps still hold at
   * most the tasks of two horizon periods. The horizon's `standsFor` lists the last writers it may
   * stand in for once applied, so that the executor can pass on what a failed one did not write.
   */
  horizonIfDue(): TaskRecord | undefined {
    const due = this.#maxPathLength - this.#pathLengthAtHorizon >= this.#horizonStep || this.#front.size > this.#horizonMaxParallelism;
    if (!due) return undefined;
    const id = this.#next++ as TaskId;
    const front = this.executionFront;
    const dependencies = front.map((task): Dependency => Object.freeze({ task, kind: 'order' }));
    this.#pathLengthAtHorizon = this.#maxPathLength;
    this.#record(id, front);
    const previous = this.#lastHorizon;
    if (previous !== undefined) this.#apply(previous);
    const standsFor: DataDependency[] = [];
    for (const [buffer, t] of this.#tracking) {
      for (const w of t.writers.entries) if (w.value !== null) standsFor.push({ task: w.value, kind: 'true', buffer, region: w.region });
    }
    this.#lastHorizon = id;
    return Object.freeze({
      id,
      kind: 'horizon',
      name: 'horizon',
      range: undefined,
      launch: undefined,
      chunks: Object.freeze([]),
      accesses: Object.freeze([]),
      dependencies: Object.freeze(dependencies),
      standsFor: Object.freeze(finishDependencies(standsFor) as DataDependency[]),
      space: HOST_MEMORY.id,
      copies: Object.freeze([]),
    });
  }

  /** Records an accepted task's place in the front and its critical-path length. */
  #record(id: TaskId, dependsOn: readonly TaskId[]): void {
    let length = 0;
    for (const dep of dependsOn) {
      this.#front.delete(dep);
      length = Math.max(length, this.#pathLength.get(dep) ?? 0);
    }
    this.#front.add(id);
    this.#pathLength.set(id, length + 1);
    this.#maxPathLength = Math.max(this.#maxPathLength, length + 1);
  }

  /** Lets `horizon` stand in for every older task in the tracking maps; older tasks are never named again. */
  #apply(horizon: TaskId): void {
    const older = (task: TaskId): TaskId => (task < horizon ? horizon : task);
    for (const t of this.#tracking.values()) {
      t.writers.map((w) => (w === null ? null : older(w)));
      t.readers.map((r) => (r.some((x) => x < horizon) ? [...new Set(r.map(older))] : r));
    }
    for (const task of this.#pathLength.keys()) if (task < horizon) this.#pathLength.delete(task);
  }

  /** Tasks added so far. */
  get taskCount(): number {
    return this.#next - 1;
  }

  /**
   * Adds a task and returns its record.
   * @throws {RangeMapperError} naming the task and buffer when a mapper does not fit the kernel and
   *   buffer dimensionalities or fails; {@link TaskGraphError} when producer accesses of different
   *   chunks overlap, or for a read of never-written points under the 'throw' policy.
   */
  add(spec: TaskSpec): TaskRecord {
    const id = this.#next as TaskId;
    const label = taskLabel({ id, name: spec.name });
    const accesses = spec.accesses.map((a) => resolveAccess(label, spec, a));
    checkOverlaps(label, spec, accesses);
    const { dependencies, unwritten } = this.#dependencies(spec, accesses);
    const warnings = [...unwritten].map(([buffer, { region: r, read }]): GraphWarning => ({
      kind: 'uninitialized-read',
      task: id,
      buffer: buffer.id,
      region: r,
      message: read
        ? `task ${label} reads ${formatRegion(r)} of buffer ${buffer.label}, which no task has written: the kernel sees the buffer's initial zeros; give the buffer init data or write it first`
        : `task ${label} writes ${formatRegion(r)} of buffer ${buffer.label} without noInit, so it keeps what it does not overwrite there, but no task has written it: ` +
          "the kernel sees the buffer's initial zeros; declare the write with { noInit: true } if the kernel overwrites every point, or give the buffer init data",
    }));
    if (this.#policy === 'throw' && warnings.length > 0) {
      const [buffer, { region: r }] = [...unwritten][0]!;
      throw new TaskGraphError(warnings[0]!.message, { task: label, buffer: buffer.label, region: r });
    }

    // From here on the task is accepted: record its effects.
    this.#next++;
    this.#record(id, [...new Set(dependencies.map((d) => d.task))]);
    const space = this.#spaceFor({ id, kind: spec.kind, name: spec.name });
    const copies = planCopies(space, spec, accesses);
    spec.accesses.forEach((a, i) => {
      if (a.access.mode === 'read') this.#track(a.buffer).readers.update(accesses[i]!.region, (r) => (r.includes(id) ? r : [...r, id]));
    });
    spec.accesses.forEach((a, i) => {
      if (!isProducer(a.access)) return;
      const t = this.#track(a.buffer);
      t.writers.assign(accesses[i]!.region, id);
      t.readers.assign(accesses[i]!.region, []);
    });
    const record: TaskRecord = Object.freeze({
      id,
      kind: spec.kind,
      name: spec.name,
      range: spec.range,
      launch: spec.launch,
      chunks: Object.freeze([...spec.chunks]),
      accesses: Object.freeze(accesses),
      dependencies: Object.freeze(dependencies),
      standsFor: Object.freeze([]),
      space,
      copies: Object.freeze(copies),
    });
    if (this.#policy === 'warn') for (const w of warnings) this.#onWarning(w);
    return record;
  }

  #track(buffer: GraphBuffer): Tracking {
    let t = this.#tracking.get(buffer.id);
    if (t === undefined) {
      t = {
        writers: new RegionMap<Dims, TaskId | null>(buffer.range, null, String),
        readers: new RegionMap<Dims, readonly TaskId[]>(buffer.range, [], (r) => r.join(',')),
      };
      this.#tracking.set(buffer.id, t);
    }
    return t;
  }

  /**
   * The task's dependencies, recorded as Celerity records them: a consumer truly depends on the last
   * writer of each point it reads. A producer depends, for each last writer of what it writes, on
   * the readers since that write (anti), and only when there are none on the writer itself (output):
   * every such reader already waits for the writer. Points never written have no writer; their
   * readers are waited for all the same.
   */
  #dependencies(spec: TaskSpec, accesses: readonly BufferAccess[]): { dependencies: Dependency[]; unwritten: Map<GraphBuffer, Unwritten> } {
    const edges = new Map<string, DataDependency>();
    const unwritten = new Map<GraphBuffer, Unwritten>();
    const edge = (task: TaskId, kind: DataDependency['kind'], buffer: BufferId, r: Region): void => {
      const key = `${task}/${kind}/${buffer}`;
      const e = edges.get(key);
      edges.set(key, { task, kind, buffer, region: e === undefined ? r : union(e.region, r) });
    };
    spec.accesses.forEach(({ buffer, access }, i) => {
      const r = accesses[i]!.region;
      const t = this.#track(buffer);
      if (isConsumer(access)) {
        for (const w of t.writers.query(r)) {
          if (w.value !== null) edge(w.value, 'true', buffer.id, w.region);
          else {
            // A write without noInit keeps what it does not overwrite: it consumes the old contents too.
            const before = unwritten.get(buffer);
            unwritten.set(buffer, { region: union(before?.region ?? emptyRegion(buffer.dims), w.region), read: (before?.read ?? false) || access.mode !== 'write' });
          }
        }
      }
      if (isProducer(access)) {
        for (const w of t.writers.query(r)) {
          // A horizon applied as writer is also the reader it stands for; later readers wait for it.
          const readers = t.readers.query(w.region).flatMap((rd) => rd.value.filter((x) => x !== w.value).map((x) => [x, rd.region] as const));
          if (readers.length > 0) for (const [reader, part] of readers) edge(reader, 'anti', buffer.id, part);
          else if (w.value !== null) edge(w.value, 'output', buffer.id, w.region);
        }
      }
    });
    return { dependencies: finishDependencies([...edges.values()]), unwritten };
  }
}

/** Drops anti and output edges hidden by a true edge on the same task and buffer, sorts, and freezes. */
function finishDependencies(all: readonly DataDependency[]): Dependency[] {
  const hasTrue = new Set<string>();
  for (const d of all) if (d.kind === 'true') hasTrue.add(`${d.task}/${d.buffer}`);
  return all
    .filter((d) => d.kind === 'true' || !hasTrue.has(`${d.task}/${d.buffer}`))
    .sort((a, b) => a.task - b.task || KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || a.buffer - b.buffer)
    .map((d) => Object.freeze({ ...d }));
}

/** The regions one access touches, per chunk and in all. */
function resolveAccess(label: string, spec: TaskSpec, a: AccessSpec): BufferAccess {
  const { buffer, access } = a;
  if (!('mapper' in a)) {
    const r = intersection(a.region, makeRegion(buffer.dims, [buffer.coherence.everything]));
    return Object.freeze({ buffer: buffer.id, access, mapper: a.source, region: r, chunkRegions: Object.freeze([r]) });
  }
  const kernelDims = (spec.range?.length ?? 1) as Dims;
  let chunkRegions: Region[];
  try {
    checkRangeMapper(a.mapper, kernelDims, buffer.dims);
    const mapper = a.mapper as unknown as RangeMapper;
    chunkRegions = spec.chunks.map((c) => applyRangeMapper(mapper, c, buffer.range));
  } catch (err) {
    if (!(err instanceof RangeMapperError)) throw err;
    throw new RangeMapperError(err.mapper, err.kernelDims, err.bufferDims, `task ${label}, buffer ${buffer.label}: ${err.message}`, { cause: err, task: label, buffer: buffer.label });
  }
  const r = chunkRegions.reduce<Region>((acc, c) => union(acc, c), emptyRegion(buffer.dims));
  return Object.freeze({ buffer: buffer.id, access, mapper: mapperName(a.mapper), region: r, chunkRegions: Object.freeze(chunkRegions) });
}

/**
 * Refuses a task whose producer accesses of one buffer give two chunks overlapping regions: both
 * chunks would write the same points at the same time.
 */
function checkOverlaps(label: string, spec: TaskSpec, accesses: readonly BufferAccess[]): void {
  const byBuffer = new Map<GraphBuffer, Region[]>();
  spec.accesses.forEach((a, i) => {
    if (!isProducer(a.access)) return;
    const perChunk = byBuffer.get(a.buffer) ?? accesses[i]!.chunkRegions.map(() => emptyRegion(a.buffer.dims));
    byBuffer.set(a.buffer, perChunk.map((r, c) => union(r, accesses[i]!.chunkRegions[c]!)));
  });
  for (const [buffer, perChunk] of byBuffer) {
    for (let i = 0; i < perChunk.length; i++) {
      for (let j = i + 1; j < perChunk.length; j++) {
        const overlap = intersection(perChunk[i]!, perChunk[j]!);
        if (isEmpty(overlap)) continue;
        const [ci, cj] = [spec.chunks[i]!, spec.chunks[j]!];
        throw new TaskGraphError(
          `task ${label} writes the region ${formatRegion(overlap)} of buffer ${buffer.label} from two chunks at once ` +
            `(chunk ${i}: ${formatSubrange(ci)}, chunk ${j}: ${formatSubrange(cj)}); ` +
            'a write access needs a range mapper that gives different chunks disjoint regions, such as oneToOne()',
          { task: label, buffer: buffer.label, region: overlap },
        );
      }
    }
  }
}

/** The copies into `space` the task's consumer accesses need; records them and the task's writes in the coherence tables. */
function planCopies(space: MemorySpaceId, spec: TaskSpec, accesses: readonly BufferAccess[]): TaskCopy[] {
  const consumed = new Map<GraphBuffer, Region>();
  const produced = new Map<GraphBuffer, Region>();
  spec.accesses.forEach((a, i) => {
    const r = accesses[i]!.region;
    if (isConsumer(a.access)) consumed.set(a.buffer, union(consumed.get(a.buffer) ?? emptyRegion(a.buffer.dims), r));
    if (isProducer(a.access)) produced.set(a.buffer, union(produced.get(a.buffer) ?? emptyRegion(a.buffer.dims), r));
  });
  const copies: TaskCopy[] = [];
  for (const [buffer, r] of consumed) {
    const needed = buffer.coherence.copiesFor(space, r);
    buffer.coherence.applyCopies(needed);
    for (const copy of needed) copies.push(Object.freeze({ buffer: buffer.id, copy }));
  }
  for (const [buffer, r] of produced) buffer.coherence.written(space, r);
  return copies;
}

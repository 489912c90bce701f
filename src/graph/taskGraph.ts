import type { Chunk } from '../core/chunk.js';
import type { Dims } from '../core/dims.js';
import { RangeMapperError, TaskGraphError } from '../core/errors.js';
import type { Range } from '../core/range.js';
import { emptyRegion, formatRegion, intersection, isEmpty, region as makeRegion, union, type Region } from '../core/region.js';
import { formatSubrange } from '../core/subrange.js';
import { checkInteger, checkOneOf } from '../core/validate.js';
import { isConsumer, isProducer, type Access } from './accessMode.js';
import type { BufferId, GraphBuffer } from './buffer.js';
import { HOST_MEMORY, type MemorySpaceId } from './coherence.js';
import { applyRangeMapper, checkRangeMapper, mapperName, type AnyRangeMapper, type RangeMapper } from './rangeMapper.js';
import { RegionMap } from './regionMap.js';
import { taskLabel, type BufferAccess, type Dependency, type DependencyKind, type GraphWarning, type TaskCopy, type TaskId, type TaskKind, type TaskRecord } from './task.js';

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
   * Tasks between horizons, in [1, 2^30]: after this many tasks {@link TaskGraph.horizonIfDue} makes a
   * horizon task that depends on every task still named in the tracking state, and then stands in
   * for all of them. Default 32.
   */
  horizonStep?: number;
}

const DEFAULT_HORIZON_STEP = 32;

/** One access of a task being added: a range mapper over the task's chunks, or a fixed region (host tasks). */
export type AccessSpec =
  | { readonly buffer: GraphBuffer; readonly access: Access; readonly mapper: AnyRangeMapper }
  | { readonly buffer: GraphBuffer; readonly access: Access; readonly region: Region; readonly source: string };

/** A task to add: what it is, its chunks (kernel tasks) and its accesses. */
export interface TaskSpec {
  readonly kind: TaskKind;
  readonly name: string;
  readonly range?: Range;
  readonly chunks: readonly Chunk[];
  readonly accesses: readonly AccessSpec[];
}

/** Per buffer: the last writer of every point (null: never written) and its readers since. */
interface Tracking {
  readonly writers: RegionMap<Dims, TaskId | null>;
  readonly readers: RegionMap<Dims, readonly TaskId[]>;
}

const KIND_ORDER: Record<DependencyKind, number> = { true: 0, anti: 1, output: 2 };

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
  #sinceHorizon = 0;
  #lastHorizon: TaskId | undefined;
  #next = 1;

  /** @throws {OptionError} for an unknown `uninitializedReads` policy. */
  constructor(options: TaskGraphOptions = {}) {
    this.#spaceFor = options.spaceFor ?? (() => HOST_MEMORY.id);
    this.#policy = checkOneOf('uninitializedReads', options.uninitializedReads ?? 'warn', ['ignore', 'warn', 'throw'] as const);
    this.#onWarning = options.onWarning ?? ((w) => process.emitWarning(w.message, 'PxlGraphWarning'));
    this.#horizonStep = checkInteger('horizonStep', options.horizonStep ?? DEFAULT_HORIZON_STEP, 1, 2 ** 30);
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

  /**
   * After `horizonStep` tasks since the last horizon, makes a horizon task and returns it; otherwise
   * undefined. The horizon depends on every task the tracking maps still name: truly on the last
   * writer of each written point, anti on the readers since. Then every such name is replaced by the
   * horizon, so the maps hold at most two values per buffer from here on (the horizon and never
   * written, or the horizon and no reader) plus what later tasks add. A later task that reads what
   * an older task wrote depends on the horizon instead, which runs only after that task.
   */
  horizonIfDue(): TaskRecord | undefined {
    if (this.#sinceHorizon < this.#horizonStep) return undefined;
    this.#sinceHorizon = 0;
    const id = this.#next++ as TaskId;
    const edges: { task: TaskId; kind: DependencyKind; buffer: BufferId; region: Region }[] = [];
    for (const [buffer, t] of this.#tracking) {
      const byTask = new Map<string, (typeof edges)[number]>();
      const edge = (task: TaskId, kind: DependencyKind, r: Region): void => {
        const key = `${task}/${kind}`;
        const e = byTask.get(key);
        if (e === undefined) byTask.set(key, { task, kind, buffer, region: r });
        else e.region = union(e.region, r);
      };
      for (const w of t.writers.entries) if (w.value !== null) edge(w.value, 'true', w.region);
      for (const rd of t.readers.entries) for (const reader of rd.value) edge(reader, 'anti', rd.region);
      edges.push(...byTask.values());
      t.writers.map((w) => (w === null ? null : id));
      t.readers.map((r) => (r.length === 0 ? r : [id]));
    }
    this.#lastHorizon = id;
    return Object.freeze({
      id,
      kind: 'horizon',
      name: 'horizon',
      range: undefined,
      chunks: Object.freeze([]),
      accesses: Object.freeze([]),
      dependencies: Object.freeze(finishDependencies(edges)),
      space: HOST_MEMORY.id,
      copies: Object.freeze([]),
    });
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
    const warnings = [...unwritten].map(([buffer, r]): GraphWarning => ({
      kind: 'uninitialized-read',
      task: id,
      buffer: buffer.id,
      region: r,
      message: `task ${label} reads ${formatRegion(r)} of buffer ${buffer.label}, which no task has written: the kernel sees the buffer's initial zeros; give the buffer init data or write it first`,
    }));
    if (this.#policy === 'throw' && warnings.length > 0) throw new TaskGraphError(warnings[0]!.message, { task: label, buffer: [...unwritten.keys()][0]!.label });

    // From here on the task is accepted: record its effects.
    this.#next++;
    this.#sinceHorizon++;
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
      chunks: Object.freeze([...spec.chunks]),
      accesses: Object.freeze(accesses),
      dependencies: Object.freeze(dependencies),
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

  #dependencies(spec: TaskSpec, accesses: readonly BufferAccess[]): { dependencies: Dependency[]; unwritten: Map<GraphBuffer, Region> } {
    const edges = new Map<string, { task: TaskId; kind: DependencyKind; buffer: BufferId; region: Region }>();
    const unwritten = new Map<GraphBuffer, Region>();
    const edge = (task: TaskId, kind: DependencyKind, buffer: BufferId, r: Region): void => {
      const key = `${task}/${kind}/${buffer}`;
      const e = edges.get(key);
      if (e === undefined) edges.set(key, { task, kind, buffer, region: r });
      else e.region = union(e.region, r);
    };
    spec.accesses.forEach(({ buffer, access }, i) => {
      const r = accesses[i]!.region;
      const t = this.#track(buffer);
      if (isConsumer(access)) {
        for (const w of t.writers.query(r)) {
          if (w.value !== null) edge(w.value, 'true', buffer.id, w.region);
          else if (access.mode !== 'write') unwritten.set(buffer, union(unwritten.get(buffer) ?? emptyRegion(buffer.dims), w.region));
        }
      }
      if (isProducer(access)) {
        for (const w of t.writers.query(r)) if (w.value !== null) edge(w.value, 'output', buffer.id, w.region);
        for (const rd of t.readers.query(r)) for (const reader of rd.value) edge(reader, 'anti', buffer.id, rd.region);
      }
    });
    return { dependencies: finishDependencies([...edges.values()]), unwritten };
  }
}

/** Drops anti and output edges hidden by a true edge on the same task and buffer, sorts, and freezes. */
function finishDependencies(all: readonly Dependency[]): Dependency[] {
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
    throw new RangeMapperError(err.mapper, err.kernelDims, err.bufferDims, `task ${label}, buffer ${buffer.label}: ${err.message}`, { cause: err });
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
          { task: label, buffer: buffer.label },
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

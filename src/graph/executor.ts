import { PxlError, TaskGraphError } from '../core/errors.js';
import { intersection, isEmpty, union, type Region } from '../core/region.js';
import { formatBufferId, type BufferId } from './buffer.js';
import { dependencyTasks, taskLabel, type Dependency, type TaskId, type TaskRecord } from './task.js';

/** A buffer region a true dependency carries. */
interface Part {
  readonly buffer: BufferId;
  readonly region: Region;
}

/** Part of what a horizon stands for that a failed task should have written, with the first failure. */
interface FailedPart extends Part {
  readonly error: PxlError;
}

/** What running a task means; resolves when the task's work is done, rejects when it failed. */
export type TaskRun = () => Promise<void>;

/** Where a task is on its way through the executor. */
type NodeState = 'waiting' | 'ready' | 'running' | 'done' | 'failed' | 'aborted';

interface Node {
  readonly task: TaskRecord;
  readonly run: TaskRun;
  readonly onSettled: ((error: PxlError | undefined) => void) | undefined;
  /**
   * Tasks waiting for this one; `data` when one of them reads what this one writes (a true
   * dependency), on the regions `parts`.
   */
  readonly dependents: { readonly node: Node; readonly data: boolean; readonly parts: readonly Part[] }[];
  /** A horizon's regions whose last writer failed; a horizon itself never fails. */
  readonly failedParts: FailedPart[];
  /** Horizons that stand for what this task writes (`standsFor`), on the regions `parts`. */
  readonly watchers: { readonly node: Node; readonly parts: readonly Part[] }[];
  /** Dependencies not yet finished. */
  waiting: number;
  state: NodeState;
}

/**
 * Runs the tasks of one queue in dependency order, on the main thread's event loop. A task starts
 * once every task it depends on has finished, so independent tasks are in flight together (up to
 * `maxInFlight`), and dependent ones wait. Ready tasks start in submission order.
 *
 * A task that fails (its run rejects) fails every task that reads what it wrote (a true
 * dependency), transitively, without running them: they would read what it did not write. Tasks that
 * only had to wait for it (anti and output dependencies) run. Each failure is kept until `wait()`
 * reports the first one.
 *
 * A horizon task (see `TaskGraph.horizonIfDue`) never fails: when a task it stands for (its
 * `standsFor`) fails, it records the regions that task should have written, and a later task that
 * reads any of them through the horizon fails as it would have through the failed task. Adding a
 * horizon forgets the failures of every task older than the previous horizon, which the graph has
 * just applied: it names none of them any more.
 *
 * State stays bounded by the tasks not yet finished plus the failures since the latest horizon: a
 * finished task is forgotten, and a later task that names it as a dependency does not wait for it.
 */
export class Executor {
  readonly #maxInFlight: number;
  readonly #nodes = new Map<TaskId, Node>();
  readonly #failed = new Map<TaskId, PxlError>();
  /** Horizons that finished with failed parts, since the latest horizon. */
  readonly #horizonFailures = new Map<TaskId, readonly FailedPart[]>();
  readonly #ready: Node[] = [];
  /** The latest horizon added: the one the graph applies when it makes the next. */
  #lastHorizon: TaskId | undefined;
  readonly #idle: (() => void)[] = [];
  #unreported: PxlError[] = [];
  #running = 0;

  constructor(maxInFlight: number) {
    this.#maxInFlight = maxInFlight;
  }

  /** Tasks submitted and not finished (waiting, ready or running). */
  get pending(): number {
    return this.#nodes.size;
  }

  /** Failure records kept (failed tasks and horizons standing for failed writes): bounded by horizons. */
  get failureRecords(): number {
    return this.#failed.size + this.#horizonFailures.size;
  }

  /** Tasks running now. */
  get running(): number {
    return this.#running;
  }

  /**
   * Adds a task whose dependencies were all added before. `onSettled` is called once, with the
   * task's failure or undefined, after its run settled (or when it fails without running).
   */
  add(task: TaskRecord, run: TaskRun, onSettled?: (error: PxlError | undefined) => void): void {
    const horizon = task.kind === 'horizon';
    const node: Node = { task, run, onSettled, dependents: [], failedParts: [], watchers: [], waiting: 0, state: 'waiting' };
    this.#nodes.set(task.id, node);
    let failure: FailedPart | undefined;
    for (const dep of dependencyTasks(task)) {
      const parts = partsOf(task.dependencies, dep);
      const data = parts.length > 0;
      const on = this.#nodes.get(dep);
      if (on !== undefined) {
        node.waiting++;
        on.dependents.push({ node, data, parts });
      } else if (data) {
        failure ??= this.#failureThrough(node, dep, parts);
      }
    }
    if (horizon) {
      for (const dep of new Set(task.standsFor.map((d) => d.task))) {
        const parts = partsOf(task.standsFor, dep);
        const on = this.#nodes.get(dep);
        if (on !== undefined) on.watchers.push({ node, parts });
        else this.#failureThrough(node, dep, parts);
      }
      const applied = this.#lastHorizon;
      if (applied !== undefined) {
        for (const id of this.#failed.keys()) if (id < applied) this.#failed.delete(id);
        for (const id of this.#horizonFailures.keys()) if (id < applied) this.#horizonFailures.delete(id);
      }
      this.#lastHorizon = task.id;
    }
    if (failure !== undefined) this.#fail(node, this.#dependencyFailed(node, failure), false);
    else if (node.waiting === 0) this.#makeReady(node);
  }

  /**
   * The first failure `node` inherits by reading `parts` of what finished task `dep` wrote, or
   * undefined. A horizon inherits none: it records the failed parts instead.
   */
  #failureThrough(node: Node, dep: TaskId, parts: readonly Part[]): FailedPart | undefined {
    const failed = this.#failed.get(dep);
    let found: FailedPart | undefined;
    const hit = (part: Part, error: PxlError): void => {
      if (node.task.kind !== 'horizon') found ??= { ...part, error };
      else {
        // One part per buffer and failure, so a horizon's record stays as small as the regions it names.
        const i = node.failedParts.findIndex((f) => f.buffer === part.buffer && f.error === error);
        if (i < 0) node.failedParts.push({ ...part, error });
        else node.failedParts[i] = { ...part, region: union(node.failedParts[i]!.region, part.region), error };
      }
    };
    if (failed !== undefined) {
      const root = rootFailure(failed);
      for (const p of parts) hit(p, root);
      return found;
    }
    for (const f of this.#horizonFailures.get(dep) ?? []) {
      for (const p of parts) {
        if (p.buffer !== f.buffer) continue;
        const shared = intersection(f.region, p.region);
        if (!isEmpty(shared)) hit({ buffer: p.buffer, region: shared }, f.error);
      }
    }
    return found;
  }

  /**
   * Resolves once every task added so far has finished.
   * @throws (rejects) the first task failure not yet reported by an earlier `wait()`.
   */
  async wait(): Promise<void> {
    if (this.#nodes.size > 0) await new Promise<void>((resolve) => this.#idle.push(resolve));
    const [first, ...rest] = this.#unreported;
    this.#unreported = [];
    if (first !== undefined) {
      if (rest.length > 0) first.message += ` (and ${rest.length} more task failure${rest.length === 1 ? '' : 's'})`;
      throw first;
    }
  }

  /**
   * Settles every task not yet finished with `error` (the Context was destroyed): waiting and ready
   * tasks never run, running ones are no longer awaited (what they do later is ignored), and
   * `wait()` rejects with `error`. Nothing runs after this.
   */
  abort(error: PxlError): void {
    const nodes = [...this.#nodes.values()];
    this.#nodes.clear();
    this.#ready.length = 0;
    this.#running = 0;
    for (const node of nodes) node.state = 'aborted';
    for (const node of nodes) this.#settle(node, error);
    if (nodes.length > 0) this.#unreported.push(error);
    for (const resolve of this.#idle.splice(0)) resolve();
  }

  #makeReady(node: Node): void {
    node.state = 'ready';
    this.#ready.push(node);
    this.#pump();
  }

  #pump(): void {
    while (this.#running < this.#maxInFlight && this.#ready.length > 0) {
      const node = this.#ready.shift()!;
      node.state = 'running';
      this.#running++;
      let started: Promise<void>;
      try {
        started = node.run();
      } catch (err) {
        started = Promise.reject(err);
      }
      started.then(
        () => this.#finish(node),
        (err: unknown) => this.#fail(node, asTaskError(node.task, err), true),
      );
    }
  }

  #finish(node: Node): void {
    if (node.state === 'aborted') return;
    this.#running--;
    node.state = 'done';
    this.#nodes.delete(node.task.id);
    this.#settle(node, undefined);
    if (node.failedParts.length > 0) {
      this.#horizonFailures.set(node.task.id, node.failedParts);
      this.#failReaders(node);
      this.#failWatchers(node);
    }
    this.#release(node);
    this.#afterChange();
  }

  /** One dependency of each waiting dependent is done; those with none left become ready. */
  #release(node: Node): void {
    for (const { node: d } of node.dependents) {
      if (d.state === 'waiting' && --d.waiting === 0) this.#makeReady(d);
    }
  }

  #fail(node: Node, error: PxlError, root: boolean): void {
    if (node.state === 'aborted') return;
    if (node.state === 'running') this.#running--;
    node.state = 'failed';
    this.#nodes.delete(node.task.id);
    this.#failed.set(node.task.id, error);
    if (root) this.#unreported.push(error);
    this.#settle(node, error);
    this.#failReaders(node);
    this.#failWatchers(node);
    // Tasks that only had to wait (anti and output dependencies) may go: the failed task touches nothing any more.
    this.#release(node);
    this.#afterChange();
  }

  /**
   * Fails the waiting tasks that read data `node` failed to produce: its own failure, or the parts
   * a horizon recorded. A horizon records the parts (and goes on waiting); any other reader fails.
   */
  #failReaders(node: Node): void {
    for (const { node: d, data, parts } of node.dependents) {
      if (!data || d.state !== 'waiting') continue;
      const failure = this.#failureThrough(d, node.task.id, parts);
      if (failure !== undefined) this.#fail(d, this.#dependencyFailed(d, failure), false);
    }
  }

  /** Passes what `node` failed to write (its own failure, or a horizon's failed parts) to the horizons that stand for it. */
  #failWatchers(node: Node): void {
    for (const { node: h, parts } of node.watchers) {
      if (h.state === 'waiting' || h.state === 'ready') this.#failureThrough(h, node.task.id, parts);
    }
  }

  /**
   * The failure of a task that cannot run because of the failure `failed.error`: it names it, has it
   * as its cause, and carries the buffer and region through which the task inherited it (part of
   * what the task reads that the failed task did not write).
   */
  #dependencyFailed(node: Node, failed: FailedPart): TaskGraphError {
    const label = taskLabel(node.task);
    const root = failed.error;
    return new DependencyFailed(`task ${label} did not run because a task it depends on failed: ${root.message}`, { task: label, buffer: formatBufferId(failed.buffer), region: failed.region }, { cause: root });
  }

  #settle(node: Node, error: PxlError | undefined): void {
    try {
      node.onSettled?.(error);
    } catch {
      // A settle callback belongs to the queue; it must not break the executor's bookkeeping.
    }
  }

  #afterChange(): void {
    this.#pump();
    if (this.#nodes.size === 0) for (const resolve of this.#idle.splice(0)) resolve();
  }
}

/** The true dependencies on `task` among `deps`, as buffer parts. */
function partsOf(deps: readonly Dependency[], task: TaskId): Part[] {
  const out: Part[] = [];
  for (const d of deps) if (d.task === task && d.kind === 'true') out.push({ buffer: d.buffer, region: d.region });
  return out;
}

/** A task that did not run because of another's failure; its cause is the first failure of the chain. */
class DependencyFailed extends TaskGraphError {}

/** The first failure of a chain of failures. */
function rootFailure(failed: PxlError): PxlError {
  return failed instanceof DependencyFailed ? (failed.cause as PxlError) : failed;
}

/** A task's failure as the error `wait()` and fences report: a TaskGraphError naming the task, the original as cause. */
function asTaskError(task: TaskRecord, err: unknown): PxlError {
  if (err instanceof TaskGraphError) return err;
  const label = taskLabel(task);
  const message = err instanceof Error ? err.message : String(err);
  return new TaskGraphError(`task ${label} failed: ${message}`, { task: label }, { cause: err });
}

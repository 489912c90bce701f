import { PxlError, TaskGraphError } from '../core/errors.js';
import { dependencyTasks, taskLabel, type TaskId, type TaskRecord } from './task.js';

/** What running a task means; resolves when the task's work is done, rejects when it failed. */
export type TaskRun = () => Promise<void>;

/** Where a task is on its way through the executor. */
type NodeState = 'waiting' | 'ready' | 'running' | 'done' | 'failed';

interface Node {
  readonly task: TaskRecord;
  readonly run: TaskRun;
  readonly onSettled: ((error: PxlError | undefined) => void) | undefined;
  /** Tasks waiting for this one; `data` when one of them reads what this one writes (a true dependency). */
  readonly dependents: { readonly node: Node; readonly data: boolean }[];
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
 * State stays bounded by the tasks not yet finished plus the failed ones: a finished task is
 * forgotten, and a later task that names it as a dependency does not wait for it.
 */
export class Executor {
  readonly #maxInFlight: number;
  readonly #nodes = new Map<TaskId, Node>();
  readonly #failed = new Map<TaskId, PxlError>();
  readonly #ready: Node[] = [];
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

  /** Tasks running now. */
  get running(): number {
    return this.#running;
  }

  /**
   * Adds a task whose dependencies were all added before. `onSettled` is called once, with the
   * task's failure or undefined, after its run settled (or when it fails without running).
   */
  add(task: TaskRecord, run: TaskRun, onSettled?: (error: PxlError | undefined) => void): void {
    const node: Node = { task, run, onSettled, dependents: [], waiting: 0, state: 'waiting' };
    this.#nodes.set(task.id, node);
    let failedDependency: TaskId | undefined;
    for (const dep of dependencyTasks(task)) {
      const data = task.dependencies.some((d) => d.task === dep && d.kind === 'true');
      const on = this.#nodes.get(dep);
      if (on !== undefined) {
        node.waiting++;
        on.dependents.push({ node, data });
      } else if (data && this.#failed.has(dep)) {
        failedDependency ??= dep;
      }
    }
    if (failedDependency !== undefined) this.#fail(node, this.#dependencyFailed(node, failedDependency), false);
    else if (node.waiting === 0) this.#makeReady(node);
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
    this.#running--;
    node.state = 'done';
    this.#nodes.delete(node.task.id);
    this.#settle(node, undefined);
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
    if (node.state === 'running') this.#running--;
    node.state = 'failed';
    this.#nodes.delete(node.task.id);
    this.#failed.set(node.task.id, error);
    if (root) this.#unreported.push(error);
    this.#settle(node, error);
    for (const { node: d, data } of node.dependents) {
      if (data && d.state === 'waiting') this.#fail(d, this.#dependencyFailed(d, node.task.id), false);
    }
    // Tasks that only had to wait (anti and output dependencies) may go: the failed task touches nothing any more.
    this.#release(node);
    this.#afterChange();
  }

  /** The failure of a task that cannot run because `dep` failed: it names the first failure of the chain, its cause. */
  #dependencyFailed(node: Node, dep: TaskId): TaskGraphError {
    const failed = this.#failed.get(dep)!;
    const root = failed instanceof DependencyFailed ? (failed.cause as PxlError) : failed;
    const label = taskLabel(node.task);
    return new DependencyFailed(`task ${label} did not run because a task it depends on failed: ${root.message}`, { task: label }, { cause: root });
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

/** A task that did not run because of another's failure; its cause is the first failure of the chain. */
class DependencyFailed extends TaskGraphError {}

/** A task's failure as the error `wait()` and fences report: a TaskGraphError naming the task, the original as cause. */
function asTaskError(task: TaskRecord, err: unknown): PxlError {
  if (err instanceof TaskGraphError) return err;
  const label = taskLabel(task);
  const message = err instanceof Error ? err.message : String(err);
  return new TaskGraphError(`task ${label} failed: ${message}`, { task: label }, { cause: err });
}

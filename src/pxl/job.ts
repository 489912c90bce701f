import type { Backend } from '../backends/backend.js';
import { ArgumentError, KernelNotFoundError, OptionError, StateError } from '../core/errors.js';
import type { NDRange } from '../core/ndRange.js';
import { checkInteger, describe } from '../core/validate.js';
import { MaxTaskCount } from './launchPlan.js';
import type { Topology } from '../core/topology.js';
import { KernelMap } from './kernelMap.js';
import { KernelModule } from './kernelModule.js';
import { Stream } from './stream.js';
import type { Tracer } from './trace.js';

let nextJobId = 1;

/** @internal What a Job needs from its Context. */
export interface JobSite {
  readonly owner: object;
  readonly backend: Backend;
  readonly topology: Topology;
  takeSubs(count: number): number[];
  returnSubs(subs: readonly number[]): void;
  tracer(): Tracer | undefined;
  alive(): void;
}

/**
 * A Job owns a set of Subs (and so their MU cores) and the kernel modules loaded into it. Maps
 * built from a Job run on its cores, through its default stream unless they bind another.
 */
export class Job {
  readonly #site: JobSite;
  readonly #subs: number[];
  readonly #modules: KernelModule[] = [];
  readonly #stream: Stream;
  #destroyed = false;

  /** @internal */
  constructor(site: JobSite, subs: number[]) {
    this.#site = site;
    this.#subs = subs;
    this.#stream = new Stream(site.owner, undefined, `default stream of Job ${nextJobId++}`, true);
  }

  /** @internal The Context that created this Job. */
  get owner(): object {
    return this.#site.owner;
  }

  /** Sub ids this Job owns, in the order it acquired them. */
  get subs(): readonly number[] {
    return [...this.#subs];
  }

  get subCount(): number {
    return this.#subs.length;
  }

  /** MU cores available to this Job's Maps. */
  get coreCount(): number {
    return this.#subs.length * this.#site.topology.clustersPerSub * this.#site.topology.coresPerCluster;
  }

  /** The Job's private default stream. */
  get defaultStream(): Stream {
    return this.#stream;
  }

  /** Kernels every loaded module exports, sorted. */
  get kernelNames(): readonly string[] {
    return this.#modules.flatMap((m) => m.kernelNames).sort();
  }

  /**
   * Makes a module's kernels available to `buildMap`.
   * @throws OptionError when the module comes from another Context or a kernel name is already
   *   taken; ArgumentError when `module` is not a KernelModule.
   */
  load(module: KernelModule): void {
    this.#alive();
    if (!(module instanceof KernelModule)) {
      throw new ArgumentError(`load: module must be a KernelModule from await ctx.createModule(url), got ${describe(module)}${(module as unknown) instanceof Promise ? '; await it first' : ''}`);
    }
    if (module.owner !== this.#site.owner) throw new OptionError('load: the module was created by another Context');
    if (this.#modules.includes(module)) return;
    for (const name of module.kernelNames) {
      const other = this.#modules.find((m) => m.kernel(name) !== undefined);
      if (other !== undefined) throw new OptionError(`load: kernel '${name}' is exported by both ${other.url} and ${module.url}; rename one of them`);
    }
    this.#modules.push(module);
  }

  /**
   * Builds a Map of kernel `name` over `taskCount` tasks (at most MaxTaskCount), or over an
   * ND-range. Over a range, a task or batch kernel runs one task per work-item (taskCount = the
   * product of `global`; `local` is recorded only), and a work-group kernel (`defineGroupKernel`)
   * runs one task per work-group (taskCount = the number of groups), each calling the kernel once
   * per work-item. The Map's `range` reports the range.
   *
   * @example
   * ```ts
   * const scale = job.buildMap('scale', 1024);
   * const sums = job.buildMap('block_sum', { global: [4096], local: [64] }); // 64 tasks (groups)
   * ```
   * @throws KernelNotFoundError listing the kernels the loaded modules have; OptionError for a
   *   taskCount outside [0, MaxTaskCount], a malformed range (see `checkNDRange`), or a work-group
   *   kernel given a plain taskCount.
   */
  buildMap(name: string, taskCount: number | NDRange): KernelMap {
    this.#alive();
    checkBuildMapArgs(name, taskCount);
    for (const m of this.#modules) {
      const k = m.kernel(name);
      if (k !== undefined) {
        return new KernelMap(
          {
            owner: this.#site.owner,
            backend: this.#site.backend,
            topology: this.#site.topology,
            subs: () => this.#subs,
            defaultStream: () => this.#stream,
            tracer: () => this.#site.tracer(),
            alive: () => this.#alive(),
          },
          name,
          m.info.id,
          k.index,
          k.info,
          taskCount,
        );
      }
    }
    throw new KernelNotFoundError(name, this.kernelNames);
  }

  /** Takes `count` more Subs from the Context. @throws NoSubAvailableError when too few are free. */
  subAlloc(count = 1): void {
    this.#alive();
    checkInteger('subAlloc count', count, 1, this.#site.topology.subs);
    this.#subs.push(...this.#site.takeSubs(count));
  }

  /** Returns `count` Subs to the Context; a Job keeps at least one. */
  subFree(count = 1): void {
    this.#alive();
    checkInteger('subFree count', count, 1, this.#site.topology.subs);
    if (count >= this.#subs.length) throw new OptionError(`subFree: a Job keeps at least one Sub; it owns ${this.#subs.length}, so it can free at most ${this.#subs.length - 1}`);
    this.#site.returnSubs(this.#subs.splice(this.#subs.length - count, count));
  }

  /** @internal Called by Context.destroyJob. */
  release(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#stream.destroy();
    this.#site.returnSubs(this.#subs.splice(0));
  }

  #alive(): void {
    this.#site.alive();
    if (this.#destroyed) throw new StateError('this Job was destroyed; create a new one with ctx.createJob()');
  }
}

/**
 * The argument types of `buildMap`, checked before any kernel lookup: a kernel name, and a task
 * count of at least 1 (a Map runs its kernel taskCount times; with no work, skip the launch) or an
 * ND-range object, whose shape `checkNDRange` checks.
 */
function checkBuildMapArgs(name: unknown, taskCount: unknown): void {
  if (typeof name !== 'string' || name === '') {
    throw new OptionError(`buildMap: name must be the name of a kernel of a loaded module (a non-empty string), got ${describe(name)}`);
  }
  if (typeof taskCount === 'number') {
    checkInteger('taskCount', taskCount, 1, MaxTaskCount);
  } else if (taskCount === null || typeof taskCount !== 'object') {
    throw new OptionError(`buildMap: taskCount must be an integer in [1, ${MaxTaskCount}] or an ND-range { global, local }, got ${describe(taskCount)}`);
  }
}

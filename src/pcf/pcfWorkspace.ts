/**
 * What pairwise operations keep per Context from call to call: the kernel module, reusable device
 * buffers, reusable Maps, and the Jobs that calls without `jobs` run on.
 *
 * Jobs are shared, not taken per call: the first call on a Context takes every free Sub (one Job
 * of one Sub each) and calls that start while it runs join it on the same Jobs. Calls on one Job
 * go through its default stream block by block, so concurrent calls share the cores fairly. When
 * the last call ends, the Jobs stay for the next one, their Subs lent to the Context: they count as
 * available, and whoever creates a Job that needs them destroys ours on the spot (see SubPool). A
 * kept Job keeps its Maps, and every core its bound arguments, so a small call costs its computing.
 * When no Sub is free and no call holds any, a call waits until a Job gives Subs back instead of
 * failing; its `signal` ends the wait.
 */
import { ModuleLoadError } from '../core/errors.js';
import { BUNDLE_FILES_ADVICE } from '../platform/bundleFiles.js';
import type { Context } from '../pxl/context.js';
import type { Job } from '../pxl/job.js';
import type { KernelMap } from '../pxl/kernelMap.js';
import type { KernelModule } from '../pxl/kernelModule.js';
import { untilAborted } from '../core/untilAborted.js';
import { isDestroyed } from './contextState.js';
import { DeviceBufferPool, retainBudget } from './deviceBufferPool.js';

/** Jobs shared by the calls on a Context, how many calls use them now, and their loan while none does. */
interface Lease {
  readonly jobs: Promise<Job[]>;
  /** Whether `jobs` has resolved: a call that joins the lease then waits for no Sub. */
  ready: boolean;
  users: number;
  withdraw: (() => boolean) | undefined;
}

const workspaces = new WeakMap<Context, PcfWorkspace>();

/** Who holds the Jobs of a Context's pairwise calls, as a refused Sub names them. */
const HOLDER = 'pdist, cdist or l2Kernel calls running on this Context, which give them back when they end';

/** @internal The pairwise-operation state of one Context; see the file comment. */
export class PcfWorkspace {
  readonly buffers: DeviceBufferPool;
  readonly #ctx: Context;
  readonly #modules = new Map<string, Promise<KernelModule>>();
  /** Idle Maps per Job, by kernel and task count: a reused Map keeps its bound arguments on every core. */
  readonly #maps = new WeakMap<Job, Map<string, KernelMap[]>>();
  #lease: Lease | undefined;

  private constructor(ctx: Context) {
    this.#ctx = ctx;
    this.buffers = new DeviceBufferPool(ctx, retainBudget(Number(ctx.getAttribute('memorySize'))));
  }

  /** The workspace of `ctx`, made on first use. */
  static of(ctx: Context): PcfWorkspace {
    let ws = workspaces.get(ctx);
    if (ws === undefined) workspaces.set(ctx, (ws = new PcfWorkspace(ctx)));
    return ws;
  }

  /** The kernel module at `url`, loaded into the Context once. */
  module(url: URL): Promise<KernelModule> {
    let mod = this.#modules.get(url.href);
    if (mod === undefined) {
      // pxl's own modules: in a page whose bundler left them behind, the advice says where they go.
      mod = this.#ctx.createModule(url).catch((error: unknown) => {
        throw error instanceof ModuleLoadError && BUNDLE_FILES_ADVICE !== undefined ? new ModuleLoadError(`${error.message}; ${BUNDLE_FILES_ADVICE}`, { cause: error }) : error;
      });
      this.#modules.set(url.href, mod);
      mod.catch(() => this.#modules.delete(url.href));
    }
    return mod;
  }

  /**
   * The shared Jobs, each of one Sub and with `url`'s kernels loaded. A call that gets them gives
   * them back with one `releaseJobs()`; a call for which this rejects holds nothing.
   * @throws (rejects) CancelledError when `signal` aborts while the call waits for a Sub; the
   *   Context's error when it is destroyed first.
   */
  async acquireJobs(url: URL, signal: AbortSignal | undefined): Promise<Job[]> {
    let lease = this.#lease;
    if (lease === undefined) {
      const opened: Lease = { jobs: this.#open(url), ready: false, users: 0, withdraw: undefined };
      this.#lease = lease = opened;
      opened.jobs.then(
        () => void (opened.ready = true),
        () => {
          if (this.#lease === opened) this.#lease = undefined;
        },
      );
    }
    lease.users++;
    // Withdrawn synchronously, before any await, so no createJob can reclaim the Jobs once this
    // call has decided to use them. A loan is only ever made on a lease that is still current.
    lease.withdraw?.();
    lease.withdraw = undefined;
    try {
      return await untilAborted(lease.jobs, signal, 'the pairwise computation was cancelled while it waited for a free Sub');
    } catch (err) {
      this.#leave(lease);
      throw err;
    }
  }

  /** Whether `acquireJobs` would wait for a Sub now: no Sub is free or lent, and no call shares Jobs here yet. */
  get mustWait(): boolean {
    return this.#lease?.ready !== true && this.#ctx.availableSubCount === 0;
  }

  /** Ends one call's use of the shared Jobs; the last call out gives their Subs back. */
  releaseJobs(): void {
    if (this.#lease !== undefined) this.#leave(this.#lease);
  }

  /** An idle Map of `kernel` over `taskCount` on `job`, or a new one from `build`; the caller has it alone until `giveMap`. */
  takeMap(job: Job, kernel: string, taskCount: number, build: () => KernelMap): KernelMap {
    return this.#maps.get(job)?.get(`${kernel}/${taskCount}`)?.pop() ?? build();
  }

  /** Gives a Map back for reuse, unless it did not end Idle (a failed or cancelled Map is dropped). */
  giveMap(job: Job, map: KernelMap): void {
    if (map.getExecuteStatus() !== 'Idle') return;
    let byKey = this.#maps.get(job);
    if (byKey === undefined) this.#maps.set(job, (byKey = new Map()));
    const key = `${map.kernelName}/${map.taskCount}`;
    let list = byKey.get(key);
    if (list === undefined) byKey.set(key, (list = []));
    list.push(map);
  }

  #leave(lease: Lease): void {
    if (--lease.users > 0 || lease !== this.#lease) return;
    void lease.jobs.then(
      (jobs) => {
        // A call may have joined, or the Context gone, while the Jobs were being made.
        if (lease.users > 0 || lease !== this.#lease || isDestroyed(this.#ctx)) return;
        lease.withdraw = this.#ctx.lendSubs({
          count: jobs.length,
          reclaim: () => {
            lease.withdraw = undefined;
            if (this.#lease === lease) this.#lease = undefined;
            for (const job of jobs) this.#ctx.destroyJob(job);
          },
        });
      },
      () => undefined,
    );
  }

  /** One Job per free Sub, once at least one is free. */
  async #open(url: URL): Promise<Job[]> {
    const mod = await this.module(url);
    while (this.#ctx.availableSubCount === 0) await this.#ctx.subsReturned();
    const jobs: Job[] = [];
    try {
      for (let k = this.#ctx.availableSubCount; k > 0; k--) {
        const job = this.#ctx.createJob(1);
        this.#ctx.markHeldJob(job, HOLDER);
        jobs.push(job);
        job.load(mod);
      }
    } catch (err) {
      if (!isDestroyed(this.#ctx)) for (const job of jobs) this.#ctx.destroyJob(job);
      throw err;
    }
    return jobs;
  }
}

/**
 * The devices of one kind that a `pxl worker` computes on: CPU cores (a Job of one Sub each) or
 * the GPU (one Job), with their Context and the runs opened on them. A worker started with
 * `--device all` has one group of each kind; every device of either pulls items from the same
 * runs, so the faster kind takes more blocks.
 */
import { BLOCK_KERNELS_URL, WGSL_BLOCK_KERNELS_URL } from '../pcf/blockKernelUrls.js';
import { MaxTaskCount } from '../pxl/launchPlan.js';
import { PcfWorkspace } from '../pcf/pcfWorkspace.js';
import { createContext, type Context } from '../pxl/context.js';
import type { Job } from '../pxl/job.js';
import type { WorkItem } from './protocol.js';
import type { WorkerRun } from './workerRun.js';


export class WorkerDevices {
  readonly ctx: Context;
  readonly workspace: PcfWorkspace;
  readonly jobs: readonly Job[];
  /** Whether these are the GPU (PCF blocks run as float32 WGSL kernels there). */
  readonly gpu: boolean;
  readonly runs = new Map<string, Promise<WorkerRun>>();
  /** Runs this group leaves to the worker's CPU cores: those a GPU cannot compute, when it shares the worker with cores. */
  readonly passed = new Set<string>();

  private constructor(ctx: Context, jobs: readonly Job[], gpu: boolean) {
    this.ctx = ctx;
    this.workspace = PcfWorkspace.of(ctx);
    this.jobs = jobs;
    this.gpu = gpu;
  }

  /** Opens `cores` CPU cores, or the GPU. @throws (rejects) DeviceUnavailableError when no GPU adapter opens. */
  static async open(kind: 'cpu' | 'gpu', cores: number): Promise<WorkerDevices> {
    const gpu = kind === 'gpu';
    const ctx = gpu ? await createContext({ backend: 'webgpu' }) : await createContext({ topology: { subs: cores, clustersPerSub: 1, coresPerCluster: 1 } });
    try {
      const jobs = await PcfWorkspace.of(ctx).acquireJobs(gpu ? WGSL_BLOCK_KERNELS_URL : BLOCK_KERNELS_URL, undefined);
      return new WorkerDevices(ctx, jobs, gpu);
    } catch (error) {
      await ctx.destroy();
      throw error;
    }
  }

  /**
   * Whether these devices can compute `item`: CPU cores run every item; a GPU runs the built-in
   * operations in float32, a block being one launch of at most MaxTaskCount pairs.
   */
  canRun(item: WorkItem): boolean {
    if (!this.gpu) return true;
    return item.op.name !== 'module' && item.op.dtype === 'float32' && item.blockSide * item.blockSide <= MaxTaskCount;
  }

  /** What a worker prints of them. */
  describe(): string {
    return this.gpu ? 'the GPU' : `${this.jobs.length} ${this.jobs.length === 1 ? 'core' : 'cores'}`;
  }

  async close(): Promise<void> {
    this.workspace.releaseJobs();
    await this.ctx.destroy();
  }
}

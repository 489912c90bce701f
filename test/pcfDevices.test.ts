import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cdist, createContext, l2Kernel, OptionError, pdist, randomPcfs, UnsupportedError, type BlockProgress, type Context } from '../src/index.js';
import { retainBudget } from '../src/pcf/deviceBufferPool.js';
import { decodeNpy } from '../src/pcf/npy.js';
import { gpu } from './fixtures/wgslGpu.js';
import { expectAllClose } from './helpers/closeTo.js';

/**
 * Multi-device pairwise operations: blocks of one matrix spread over CPU core Jobs of several
 * Contexts and over the GPU, each device pulling from one shared queue.
 */

/** Blocks each device computed, from onProgress. */
function blockCounter(): { onProgress: (p: BlockProgress) => void; perDevice: Map<number, number> } {
  const perDevice = new Map<number, number>();
  return { onProgress: (p) => perDevice.set(p.device, (perDevice.get(p.device) ?? 0) + 1), perDevice };
}

/** Worst difference relative to the largest entry (float32 accumulation error, as in webgpuPcf.test.ts). */
function expectClose(actual: ArrayLike<number>, expected: ArrayLike<number>, tolerance = 5e-6): void {
  let scale = 1;
  for (let k = 0; k < expected.length; k++) scale = Math.max(scale, Math.abs(expected[k]!));
  expectAllClose(actual, expected, { atol: tolerance * scale });
}

// Small blocks, so every device gets several, with partial and diagonal ones among them.
const blocks = { maxOutputElements: 2000, minBlockSide: 16 };

describe('pairwise operations over several CPU Contexts', () => {
  let a: Context;
  let b: Context;
  const set = randomPcfs({ n: 120, points: 15, seed: 11 });

  beforeAll(async () => {
    [a, b] = await Promise.all([
      createContext({ topology: { subs: 2, clustersPerSub: 1, coresPerCluster: 1 } }),
      createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([a?.destroy(), b?.destroy()]);
  });

  it('spreads the blocks of one pdist over Jobs of two Contexts and gives the same matrix, exactly', async () => {
    const jobs = [a.createJob(1), b.createJob(1), a.createJob(1)];
    try {
      const { onProgress, perDevice } = blockCounter();
      const d = await pdist(set, { devices: jobs, p: 2, onProgress, ...blocks });
      const alone = await pdist(set, { context: a, jobs: [jobs[0]!], p: 2, ...blocks });
      expect(d.dtype).toBe('float64');
      expect(Array.from(d.condensed)).toEqual(Array.from(alone.condensed));
      expect([...perDevice.keys()].sort()).toEqual([0, 1, 2]);
    } finally {
      a.destroyJob(jobs[0]!);
      b.destroyJob(jobs[1]!);
      a.destroyJob(jobs[2]!);
    }
  });

  it('expands a Context entry into one device per free Sub, in place', async () => {
    const { onProgress, perDevice } = blockCounter();
    const job = b.createJob();
    try {
      // a has 2 free Subs: devices 0 and 1; b's Job is device 2.
      const k = await l2Kernel(set, { devices: [a, job], onProgress, ...blocks });
      expectClose(k.packed, (await l2Kernel(set, { context: b, jobs: [job] })).packed, 1e-15);
      expect([...perDevice.keys()].sort()).toEqual([0, 1, 2]);
    } finally {
      b.destroyJob(job);
    }
    expect(a.availableSubCount).toBe(2);
  });

  it('runs cdist on Jobs passed without their Context', async () => {
    const ys = randomPcfs({ n: 40, points: 9, seed: 12 });
    const jobs = [a.createJob(1), b.createJob(1)];
    try {
      const t = await cdist(set, ys, { jobs, ...blocks });
      expect(Array.from(t.data)).toEqual(Array.from((await cdist(set, ys, { context: a, ...blocks })).data));
    } finally {
      a.destroyJob(jobs[0]!);
      b.destroyJob(jobs[1]!);
    }
  });

  it('returns the Subs it took, keeps at most its workspace budget of memory, and a repeat call allocates nothing more', async () => {
    await pdist(set, { devices: [a, b], ...blocks });
    const before = [a.availableMemSize, b.availableMemSize];
    await pdist(set, { devices: [a, b], ...blocks });
    expect([a.availableMemSize, b.availableMemSize]).toEqual(before);
    for (const ctx of [a, b]) {
      const total = Number(ctx.getAttribute('memorySize'));
      expect(total - ctx.availableMemSize).toBeLessThanOrEqual(retainBudget(total));
    }
    expect([a.availableSubCount, b.availableSubCount]).toEqual([2, 1]);
  });

  it('refuses devices it cannot run on with messages that say what to pass', async () => {
    const job = a.createJob(1);
    try {
      await expect(pdist(set, { devices: [], ...blocks })).rejects.toThrow(new OptionError("devices must be a non-empty array of Jobs, Contexts, 'cpu' or 'gpu', got an array of length 0"));
      await expect(pdist(set, { devices: [job, job] })).rejects.toThrow(
        new OptionError("devices[1] is listed twice; list each Job, Context, 'cpu' and 'gpu' once (a Context already runs on all its free Subs)"),
      );
      await expect(pdist(set, { devices: [a], context: a })).rejects.toThrow(new OptionError('devices replaces context: list every Job or Context in devices instead'));
      await expect(pdist(set, { devices: ['tpu' as 'cpu'] })).rejects.toThrow(new OptionError("devices[0] must be a Job, a Context, 'cpu' or 'gpu', got 'tpu'"));
      await expect(pdist(set, { context: b, jobs: [job] })).rejects.toThrow(
        new OptionError('jobs[0] is a Job of another Context than context; pass Jobs of context, or list Jobs of several Contexts in devices'),
      );
    } finally {
      a.destroyJob(job);
    }
  });
});

describe.runIf(gpu.run)('pairwise operations over CPU cores and the GPU at once', () => {
  let cpu: Context;
  let gpuCtx: Context;
  const xs = randomPcfs({ n: 150, points: 20, seed: 7, dtype: 'float32' });

  beforeAll(async () => {
    [cpu, gpuCtx] = await Promise.all([createContext({ topology: { subs: 2, clustersPerSub: 1, coresPerCluster: 1 } }), createContext({ backend: 'webgpu' })]);
  });

  afterAll(async () => {
    await Promise.all([cpu?.destroy(), gpuCtx?.destroy()]);
  });

  it.each([1, 2.5])('pdist (p = %s) split between two CPU core Jobs and the GPU equals CPU alone and GPU alone', async (p) => {
    const cpuJobs = [cpu.createJob(1), cpu.createJob(1)];
    const gpuJob = gpuCtx.createJob();
    try {
      const { onProgress, perDevice } = blockCounter();
      const mixed = await pdist(xs, { devices: [cpuJobs[0]!, gpuJob, cpuJobs[1]!], p, onProgress, ...blocks });
      expect(mixed.dtype).toBe('float32');
      // Every device computed blocks: two CPU Jobs (devices 0 and 2) and the GPU (device 1).
      expect([...perDevice.keys()].sort()).toEqual([0, 1, 2]);
      const onCpu = await pdist(xs, { context: cpu, jobs: cpuJobs, p, ...blocks });
      const onGpu = await pdist(xs, { context: gpuCtx, jobs: [gpuJob], p, ...blocks });
      expectClose(mixed.condensed, onCpu.condensed);
      expectClose(mixed.condensed, onGpu.condensed);
    } finally {
      for (const job of cpuJobs) cpu.destroyJob(job);
      gpuCtx.destroyJob(gpuJob);
    }
  });

  it('takes Contexts and device names, for l2Kernel and cdist', async () => {
    const ys = randomPcfs({ n: 60, points: 11, seed: 8, dtype: 'float32' });
    const { onProgress, perDevice } = blockCounter();
    const k = await l2Kernel(xs, { devices: [gpuCtx, cpu], onProgress, ...blocks });
    expect([...perDevice.keys()].sort()).toEqual([0, 1, 2]);
    expectClose(k.packed, (await l2Kernel(xs, { context: cpu, ...blocks })).packed);
    const t = await cdist(xs, ys, { devices: ['cpu', gpuCtx], op: 'distance', p: 2, ...blocks });
    expectClose(t.data, (await cdist(xs, ys, { context: gpuCtx, p: 2, ...blocks })).data);
    expect([cpu.availableSubCount, gpuCtx.availableSubCount]).toEqual([2, 1]);
  });

  it('streams the blocks of CPU cores and the GPU into one result file, equal to the in-memory result', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pxl-devices-'));
    try {
      const ys = randomPcfs({ n: 40, points: 9, seed: 9, dtype: 'float32' });
      const { onProgress, perDevice } = blockCounter();
      const square = await pdist(xs, { devices: [cpu, gpuCtx], out: join(dir, 'd.npy'), onProgress, ...blocks });
      // Both CPU Subs (devices 0 and 1) and the GPU (device 2) wrote blocks into the same file.
      expect([...perDevice.keys()].sort()).toEqual([0, 1, 2]);
      expect(square).toMatchObject({ shape: [150, 150], dtype: 'float32' });
      const file = decodeNpy(await readFile(join(dir, 'd.npy')));
      expectClose(file.data, (await pdist(xs, { context: cpu, dtype: 'float32', ...blocks })).toSquare().data);
      await cdist(xs, ys, { devices: [gpuCtx, cpu], out: join(dir, 't.npy'), ...blocks });
      const dense = decodeNpy(await readFile(join(dir, 't.npy')));
      expect(dense.shape).toEqual([150, 40]);
      expectClose(dense.data, (await cdist(xs, ys, { context: cpu, dtype: 'float32', ...blocks })).data);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('cuts a file run with the GPU into blocks that one launch holds, with no options given', async () => {
    // Without options a file run asks for blocks of side 1024 once N >= 4 x 1024: one pair more than a GPU launch holds.
    const dir = await mkdtemp(join(tmpdir(), 'pxl-devices-'));
    try {
      const many = randomPcfs({ n: 4100, points: 2, seed: 4, dtype: 'float32' });
      const few = randomPcfs({ n: 1030, points: 2, seed: 5, dtype: 'float32' });
      const blockPairs: number[] = [];
      let done = 0;
      const onProgress = (p: BlockProgress): void => {
        blockPairs.push(p.pairsDone - done);
        done = p.pairsDone;
      };
      await cdist(many, few, { context: gpuCtx, out: join(dir, 't.npy'), onProgress });
      expect(Math.max(...blockPairs)).toBe(1023 * 1023);
      const file = decodeNpy(await readFile(join(dir, 't.npy')));
      expect(file.shape).toEqual([4100, 1030]);
      // Rows 1020..1029 straddle the first band's end.
      const head = randomPcfs({ n: 1030, points: 2, seed: 4, dtype: 'float32' });
      const onCpu = await cdist(head, few, { context: cpu, dtype: 'float32' });
      expectClose(file.data.subarray(1020 * 1030, 1030 * 1030), onCpu.data.subarray(1020 * 1030, 1030 * 1030));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('converts float64 input to float32 and refuses dtype float64 when a GPU takes part', async () => {
    const set = randomPcfs({ n: 80, points: 10, seed: 3 });
    const mixed = await pdist(set, { devices: [cpu, gpuCtx], ...blocks });
    expect(mixed.dtype).toBe('float32');
    expectClose(mixed.condensed, (await pdist(set, { context: cpu, dtype: 'float32', ...blocks })).condensed);
    await expect(pdist(set, { devices: [cpu, gpuCtx], dtype: 'float64' })).rejects.toThrow(
      new UnsupportedError(
        "dtype 'float64' cannot run when a GPU is one of the devices: WGSL has no 64-bit floats, so a run with a GPU computes in float32; pass dtype: 'float32', or only CPU devices for float64",
      ),
    );
    await expect(pdist(set, { devices: [gpuCtx], dtype: 'float64' })).rejects.toBeInstanceOf(UnsupportedError);
  });

  it("allocates nothing more on the callers' Contexts when a call repeats", async () => {
    await pdist(xs, { devices: [cpu, gpuCtx], ...blocks });
    const before = [cpu.availableMemSize, gpuCtx.availableMemSize];
    await pdist(xs, { devices: [cpu, gpuCtx], ...blocks });
    expect([cpu.availableMemSize, gpuCtx.availableMemSize]).toEqual(before);
  });
});

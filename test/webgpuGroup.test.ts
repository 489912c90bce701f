import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext, KernelError, MaxTaskCount, ModuleLoadError, NDArray, OptionError, type Context, type DevicePtr, type Job } from '../src/index.js';
import { defineGroupKernel } from '../src/mu/index.js';
import { WebGpuBackend } from '../src/backends/webgpu/index.js';
import type { GroupGeometry } from '../src/backends/backend.js';
import { groupConstants, type GroupLimits } from '../src/backends/webgpu/groupLaunch.js';
import { gpu } from './fixtures/wgslGpu.js';
import { expectAllClose } from './helpers/closeTo.js';

const both = new URL('./fixtures/wgslGroupBoth.ts', import.meta.url);

/** Deterministic float32 inputs in [-1, 1). */
function inputs(n: number, seed: number): Float32Array {
  let s = seed >>> 0;
  return Float32Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 31 - 1;
  });
}

async function upload(ctx: Context, data: Float32Array | Uint32Array): Promise<DevicePtr> {
  const ptr = ctx.memAlloc(Math.max(4, data.byteLength));
  await ctx.copyToDevice(ptr, data);
  return ptr;
}

async function download<T extends Float32Array | Uint32Array>(ctx: Context, ptr: DevicePtr, out: T): Promise<T> {
  await ctx.copyFromDevice(out, ptr);
  return out;
}

/** Tree sums of 4096 inputs in groups of 64, on one Context. */
async function treeSums(ctx: Context, job: Job, src: Float32Array): Promise<Float32Array> {
  const a = await upload(ctx, src);
  const sums = ctx.memAlloc(4 * 64);
  const map = job.buildMap('tree_sum', { global: [4096], local: [64] }).setBatchSize(3);
  await map.execute(new NDArray(a, 'float32', [4096]), new NDArray(sums, 'float32', [64]));
  await map.synchronize();
  const out = await download(ctx, sums, new Float32Array(64));
  ctx.memFree(a);
  ctx.memFree(sums);
  return out;
}

/** c = a · b for a [24, 40], b [40, 16] in 8 × 8 tiles, on one Context. */
async function matmul(ctx: Context, job: Job, a: Float32Array, b: Float32Array): Promise<Float32Array> {
  const pa = await upload(ctx, a);
  const pb = await upload(ctx, b);
  const pc = ctx.memAlloc(4 * 24 * 16);
  const map = job.buildMap('tiled_matmul', { global: [16, 24], local: [8, 8] });
  await map.execute(new NDArray(pa, 'float32', [24, 40]), new NDArray(pb, 'float32', [40, 16]), new NDArray(pc, 'float32', [24, 16]));
  await map.synchronize();
  const out = await download(ctx, pc, new Float32Array(24 * 16));
  for (const p of [pa, pb, pc]) ctx.memFree(p);
  return out;
}

/** Each work-item's 20 figures (see ids_3d), on one Context. */
async function ids(ctx: Context, job: Job, global: number[], local: number[], batchSize: number): Promise<Uint32Array> {
  const items = global.reduce((x, y) => x * y, 1);
  const out = ctx.memAlloc(4 * 20 * items);
  const map = job.buildMap('ids_3d', { global, local }).setBatchSize(batchSize);
  await map.execute(new NDArray(out, 'uint32', [items * 20]));
  await map.synchronize();
  const got = await download(ctx, out, new Uint32Array(20 * items));
  ctx.memFree(out);
  return got;
}

describe.runIf(gpu.run)('work-group kernels with a WGSL body on the webgpu backend', () => {
  let gpuCtx: Context;
  let cpuCtx: Context;
  let gpuJob: Job;
  let cpuJob: Job;

  beforeAll(async () => {
    gpuCtx = await createContext({ backend: 'webgpu' });
    cpuCtx = await createContext({ topology: { coresPerCluster: 2 } });
    gpuJob = gpuCtx.createJob();
    cpuJob = cpuCtx.createJob();
    gpuJob.load(await gpuCtx.createModule(both));
    cpuJob.load(await cpuCtx.createModule(both));
  });

  afterAll(async () => {
    await gpuCtx?.destroy();
    await cpuCtx?.destroy();
  });

  it('reduces 4096 floats in work-groups of 64 as a float64 reference and CPU cores do', async () => {
    const src = inputs(4096, 1);
    const onGpu = await treeSums(gpuCtx, gpuJob, src);
    const onCpu = await treeSums(cpuCtx, cpuJob, src);
    for (let g = 0; g < 64; g++) {
      let sum = 0, abs = 0;
      for (let i = 0; i < 64; i++) {
        sum += src[g * 64 + i]!;
        abs += Math.abs(src[g * 64 + i]!);
      }
      // float32 tree sum of 64 terms: error at most 6 roundings of eps = 2^-24 relative to Σ|x|.
      expect(Math.abs(onGpu[g]! - sum), `group ${g}`).toBeLessThanOrEqual(1e-6 * abs);
      // Same tree, same float32 roundings (JavaScript rounds each add to float32 in the Float32Array).
      expect(onGpu[g], `group ${g}`).toBe(onCpu[g]);
    }
  });

  it('multiplies 24×40 by 40×16 in 8×8 tiles as a float64 reference and CPU cores do', async () => {
    const a = inputs(24 * 40, 2), b = inputs(40 * 16, 3);
    const onGpu = await matmul(gpuCtx, gpuJob, a, b);
    const onCpu = await matmul(cpuCtx, cpuJob, a, b);
    for (let r = 0; r < 24; r++) {
      for (let c = 0; c < 16; c++) {
        let ref = 0, abs = 0;
        for (let k = 0; k < 40; k++) {
          ref += a[r * 40 + k]! * b[k * 16 + c]!;
          abs += Math.abs(a[r * 40 + k]! * b[k * 16 + c]!);
        }
        // float32 accumulation of 40 products (the GPU may fuse multiply-adds): 1e-5 relative to Σ|a·b|.
        expect(Math.abs(onGpu[r * 16 + c]! - ref), `c[${r}][${c}]`).toBeLessThanOrEqual(1e-5 * abs);
        expect(Math.abs(onGpu[r * 16 + c]! - onCpu[r * 16 + c]!), `c[${r}][${c}]`).toBeLessThanOrEqual(1e-5 * abs);
      }
    }
  });

  it('gives every work-item of a 3-D range the ids, sizes and task figures CPU cores give', async () => {
    const global = [4, 6, 4], local = [2, 3, 2];
    const onGpu = await ids(gpuCtx, gpuJob, global, local, 3);
    const onCpu = await ids(cpuCtx, cpuJob, global, local, 3);
    expect(Array.from(onGpu)).toEqual(Array.from(onCpu));
    // Item (3, 4, 1): local (1, 1, 1), group (1, 1, 0), flat group 1 + 2 · 1 = 3 of 8.
    const at = (3 + 4 * (4 + 6 * 1)) * 20;
    expect(Array.from(onGpu.subarray(at, at + 20))).toEqual([1, 1, 1, 1, 1, 0, 3, 4, 1, 2, 3, 2, 4, 6, 4, 2, 2, 2, 3, 8]);
  });

  it('reports id 0 and size 1 for the dimensions a 1-D range does not have, as CPU cores do', async () => {
    const onGpu = await ids(gpuCtx, gpuJob, [6], [3], 1);
    expect(Array.from(onGpu.subarray(4 * 20, 5 * 20))).toEqual([1, 0, 0, 1, 0, 0, 4, 0, 0, 3, 1, 1, 6, 1, 1, 2, 1, 1, 1, 2]);
    expect(Array.from(onGpu)).toEqual(Array.from(await ids(cpuCtx, cpuJob, [6], [3], 1)));
  });

  it('runs every work-group exactly once over several dispatches, for several batch sizes', async () => {
    const groups = 4096;
    const hits = gpuCtx.memAlloc(4 * groups);
    for (const batchSize of [1, 7, 5000]) {
      await gpuCtx.copyToDevice(hits, new Uint32Array(groups));
      const map = gpuJob.buildMap('count_groups', { global: [groups * 32], local: [32] }).setBatchSize(batchSize);
      await map.execute(new NDArray(hits, 'uint32', [groups]));
      await map.synchronize();
      const counts = await download(gpuCtx, hits, new Uint32Array(groups));
      expect(counts.every((c) => c === 1), `batchSize ${batchSize}`).toBe(true);
      const batches = Math.ceil(groups / batchSize);
      expect(map.getProgress()).toEqual({ target: batches, issued: batches, done: batches });
    }
    gpuCtx.memFree(hits);
  });

  it('builds a pipeline per work-group size: one kernel over two local sizes in turn', async () => {
    const src = inputs(4096, 4);
    const a = await upload(gpuCtx, src);
    const sums = gpuCtx.memAlloc(4 * 128);
    for (const l of [64, 32, 64]) {
      const map = gpuJob.buildMap('tree_sum', { global: [4096], local: [l] });
      await map.execute(new NDArray(a, 'float32', [4096]), new NDArray(sums, 'float32', [4096 / l]));
      await map.synchronize();
      const got = await download(gpuCtx, sums, new Float32Array(4096 / l));
      const expected = Array.from({ length: 4096 / l }, (_, g) => src.subarray(g * l, (g + 1) * l).reduce((x, y) => x + y, 0));
      expectAllClose(got, expected, { atol: 1e-5 * l, what: `local ${l}, group sums` });
    }
    gpuCtx.memFree(a);
    gpuCtx.memFree(sums);
  });

  it('runs a WGSL-only group kernel', async () => {
    const out = gpuCtx.memAlloc(4 * 8);
    const map = gpuJob.buildMap('gpu_only_group', { global: [8], local: [4] });
    await map.execute(new NDArray(out, 'uint32', [8]));
    await map.synchronize();
    expect(Array.from(await download(gpuCtx, out, new Uint32Array(8)))).toEqual([1, 1, 1, 1, 2, 2, 2, 2]);
    gpuCtx.memFree(out);
  });

  it('rejects at execute() a work-group with more work-items than the GPU runs, and leaves the Map usable', async () => {
    const out = gpuCtx.memAlloc(4 * 2048);
    const max = (await limits()).maxComputeInvocationsPerWorkgroup;
    const map = gpuJob.buildMap('ids_3d', { global: [2 * max], local: [2 * max] });
    const err = await map.execute(new NDArray(out, 'uint32', [2048])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OptionError);
    expect((err as OptionError).message).toBe(
      `kernel 'ids_3d': work-group size [${2 * max}] has ${2 * max} work-items, but this GPU runs at most ${max} per workgroup (maxComputeInvocationsPerWorkgroup): build the Map with a smaller local size`,
    );
    expect(map.getExecuteStatus()).toBe('Idle');
    gpuCtx.memFree(out);
  });

  it('rejects at execute() local arrays larger than the GPU gives a workgroup', async () => {
    const out = gpuCtx.memAlloc(4 * 8);
    const max = (await limits()).maxComputeWorkgroupStorageSize;
    const map = gpuJob.buildMap('huge_local', { global: [8], local: [8] });
    const err = await map.execute(new NDArray(out, 'float32', [8])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OptionError);
    expect((err as OptionError).message).toBe(
      `kernel 'huge_local': its local arrays take 131072 bytes for work-group size [8] (big: 32768 × 4 bytes), but this GPU gives a workgroup at most ${max} bytes (maxComputeWorkgroupStorageSize): build the Map with a smaller local size`,
    );
    gpuCtx.memFree(out);
  });
});

describe.runIf(gpu.run)('loading a group kernel whose barrier WGSL cannot prove uniform', () => {
  it('rejects createModule with the compiler\'s explanation at the body\'s lines', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pxl-group-'));
    const file = join(dir, 'nonUniform.ts');
    const mu = pathToFileURL(new URL('../src/mu/index.ts', import.meta.url).pathname).href;
    writeFileSync(
      file,
      `import { defineGroupKernel } from '${mu}';\n` +
        "export const early = defineGroupKernel({ wgsl: { params: { out: 'array<u32, read_write>' }, body: 'if (local_id(0u) == 0u) {\\n  barrier();\\n}' } });\n",
    );
    const ctx = await createContext({ backend: 'webgpu' });
    try {
      const err = await ctx.createModule(pathToFileURL(file)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ModuleLoadError);
      const message = (err as ModuleLoadError).message;
      expect(message).toContain("its WGSL does not compile: barrier() (generated line");
      expect(message).toContain('must only be called from uniform control flow');
      expect(message).toContain("(body line 2:3: called by 'barrier' from 'pxl_group')");
      expect(message).toContain("(body line 1:5: return value of 'local_id' may be non-uniform)");
    } finally {
      await ctx.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** The GPU's workgroup limits, as the backend reports them. */
async function limits(): Promise<GroupLimits> {
  const backend = await WebGpuBackend.create({ maxBatches: MaxTaskCount });
  try {
    return backend.describe() as unknown as GroupLimits;
  } finally {
    await backend.destroy();
  }
}

describe('checking a work-group against GPU limits', () => {
  const spec = { params: {}, body: '', local: { tile: { type: 'f32' as const, length: (l: readonly number[]) => l[0]! * l[1]! } } };
  const limits: GroupLimits = { maxComputeInvocationsPerWorkgroup: 256, maxComputeWorkgroupSizeX: 256, maxComputeWorkgroupSizeY: 256, maxComputeWorkgroupSizeZ: 64, maxComputeWorkgroupStorageSize: 16384 };
  const geo = (l: [number, number, number], dims = 3): GroupGeometry => ({ dims, g0: l[0], g1: l[1], g2: l[2], l0: l[0], l1: l[1], l2: l[2] });

  it('gives the pipeline the work-group size and each local array\'s length', () => {
    expect(groupConstants('k', spec, geo([8, 4, 1], 2), limits)).toEqual({ pxl_l0: 8, pxl_l1: 4, pxl_l2: 1, pxl_len_tile: 32 });
  });

  it('names the limit and the value for a size above maxComputeWorkgroupSizeZ', () => {
    expect(() => groupConstants('k', spec, geo([1, 1, 128]), limits)).toThrow(
      new OptionError("kernel 'k': work-group size [1, 1, 128] is 128 along dimension 2, but this GPU allows at most 64 (maxComputeWorkgroupSizeZ): build the Map with a smaller local size"),
    );
  });

  it('names the limit and the value for too many work-items', () => {
    expect(() => groupConstants('k', spec, geo([32, 16, 1], 2), limits)).toThrow(
      new OptionError("kernel 'k': work-group size [32, 16] has 512 work-items, but this GPU runs at most 256 per workgroup (maxComputeInvocationsPerWorkgroup): build the Map with a smaller local size"),
    );
  });

  it('counts local memory as WebGPU does, each array rounded up to 16 bytes', () => {
    // 4092 + 1 elements: 16368 + 16 bytes, exactly the limit.
    const two = { ...spec, local: { a: { type: 'u32' as const, length: 4092 }, b: { type: 'i32' as const, length: 1 } } };
    expect(() => groupConstants('k', two, geo([1, 1, 1]), limits)).not.toThrow();
    // 4093 + 1 elements: 16376 bytes of data, but 16384 + 16 once each array is rounded up.
    const over = { ...spec, local: { a: { type: 'u32' as const, length: 4093 }, b: { type: 'i32' as const, length: 1 } } };
    expect(() => groupConstants('k', over, geo([1, 1, 1]), limits)).toThrow(
      new OptionError("kernel 'k': its local arrays take 16400 bytes for work-group size [1, 1, 1] (a: 4093 × 4 bytes, b: 1 × 4 bytes), but this GPU gives a workgroup at most 16384 bytes (maxComputeWorkgroupStorageSize): build the Map with a smaller local size"),
    );
  });
});

describe('a group kernel with only a WGSL body on CPU cores', () => {
  it('fails its Map with a message that says it runs on the webgpu backend only', async () => {
    const ctx = await createContext({ topology: { coresPerCluster: 2 } });
    try {
      const job = ctx.createJob();
      job.load(await ctx.createModule(both));
      const out = ctx.memAlloc(4 * 8);
      const map = job.buildMap('gpu_only_group', { global: [8], local: [4] });
      const err = await map
        .execute(new NDArray(out, 'uint32', [8]))
        .then(() => map.synchronize())
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(KernelError);
      expect((err as KernelError).message).toContain(
        'this kernel has only a WGSL body, so it runs on the webgpu backend only: give its defineGroupKernel a run generator function (`function* (local, ...args) { ... }`) to run it on CPU cores',
      );
    } finally {
      await ctx.destroy();
    }
  });
});

describe('defineGroupKernel with a wgsl body', () => {
  const body = { params: { out: 'array<u32, read_write>' as const }, body: '' };
  it.each([
    [{}, 'defineGroupKernel needs run (a generator function, for CPU cores), wgsl ({ params, body }, for the GPU), or both'],
    [{ wgsl: { body: '' } }, 'defineGroupKernel: wgsl must be { params: { name: type, ... }, body: string, declarations?: string, local?: { name: type } }'],
    [
      { wgsl: { params: { barrier: 'u32' }, body: '' } },
      "defineGroupKernel: wgsl parameter 'barrier' must be a WGSL identifier (a letter, then letters, digits or _) that does not start with 'pxl_' and is not task_idx, task_count, barrier, local_id, group_id, global_id, local_size, global_size or num_groups",
    ],
    [{ wgsl: { ...body, local: { out: { type: 'f32', length: 4 } } } }, "defineGroupKernel: wgsl local array 'out' has the name of a parameter; give it another"],
    [{ wgsl: { ...body, local: { tile: 'f64' } } }, "defineGroupKernel: wgsl local array 'tile' needs an element type 'f32', 'i32' or 'u32' (or { type, length }), got 'f64'"],
    [
      { wgsl: { ...body, local: { tile: 'f32' } } },
      "defineGroupKernel: wgsl local array 'tile' takes its length from the kernel's local spec, which has no array 'tile': declare it in local, or write { type: 'f32', length }",
    ],
    [{ wgsl: { ...body, local: { tile: { type: 'f32', length: -1 } } } }, "defineGroupKernel: wgsl local array 'tile' needs a length: an integer ≥ 0 or a function of the work-group size, got -1"],
  ])('rejects %j with a TypeError that says what is wrong', (spec, message) => {
    expect(() => defineGroupKernel(spec as never)).toThrow(new TypeError(message));
  });

  it('takes a local array\'s length from the kernel\'s local spec', () => {
    const length = (l: readonly number[]): number => 2 * l[0]!;
    const k = defineGroupKernel({ local: { tile: { dtype: 'float32', length } }, run: function* () {}, wgsl: { ...body, local: { tile: 'f32' } } });
    expect(k.wgsl?.local).toEqual({ tile: { type: 'f32', length } });
  });
});

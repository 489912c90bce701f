import { describe, expect, it } from 'vitest';
import { createContext, NDArray, type Context } from '../src/index.js';
import { gpu } from './fixtures/wgslGpu.js';

/**
 * One kernel module, one program, two backends: the program below uses only what both backends
 * offer (copies, NDArrays, pointers, constants) and must produce the same bytes on each.
 */
async function program(ctx: Context): Promise<Record<string, number[]>> {
  const job = ctx.createJob();
  job.load(await ctx.createModule(new URL('./fixtures/wgslKernels.ts', import.meta.url)));
  const results: Record<string, number[]> = {};
  const run = async (name: string, taskCount: number, batchSize: number, ...args: Parameters<ReturnType<typeof job.buildMap>['execute']>): Promise<void> => {
    const map = job.buildMap(name, taskCount).setBatchSize(batchSize);
    await map.execute(...args);
    await map.synchronize();
  };

  const hits = ctx.memAlloc(4 * 1000);
  await run('count_hits', 1000, 7, hits);
  await run('count_hits', 999, 16, hits);
  results.hits = Array.from(await copyOut(ctx, hits, new Uint32Array(1000)));

  const info = ctx.memAlloc(4 * 2 * 77);
  await run('task_info', 77, 5, info);
  results.taskInfo = Array.from(await copyOut(ctx, info, new Uint32Array(2 * 77)));

  const rows = ctx.memAlloc(4 * 33 * 6);
  await run('fill_rows', 33, 4, new NDArray(rows, 'float32', [33, 6]), 0.25);
  const x = ctx.memAlloc(4 * 33 * 6);
  await ctx.copyToDevice(x, Float32Array.from({ length: 33 * 6 }, (_, k) => k % 11));
  await run('axpy_rows', 33, 2, new NDArray(x, 'float32', [33, 6]), new NDArray(rows, 'float32', [33, 6]), -2);
  results.rows = Array.from(await copyOut(ctx, rows, new Float32Array(33 * 6)));

  const cube = ctx.memAlloc(4 * (2 + 5 * 12));
  await ctx.copyToDevice(cube, Int32Array.from({ length: 2 + 5 * 12 }, (_, k) => k * k));
  const views = ctx.memAlloc(4 * 5 * 5);
  await run('view_info', 5, 2, new NDArray(cube.add(8), 'int32', [5, 3, 4]), views);
  results.views = Array.from(await copyOut(ctx, views, new Int32Array(25)));

  const constants = ctx.memAlloc(4 * 7);
  await run('echo_constants', 4, 16, -0.125, 123456, 77, false, { x: 3.5, k: 0, on: true }, constants);
  results.constants = Array.from(await copyOut(ctx, constants, new Float32Array(7)));

  const sizes = ctx.memAlloc(4 * 50);
  await run('whole_sizes', 50, 8, new NDArray(sizes, 'uint32', [50]));
  results.sizes = Array.from(await copyOut(ctx, sizes, new Uint32Array(50)));
  return results;
}

async function copyOut<T extends Uint32Array | Int32Array | Float32Array>(ctx: Context, ptr: Parameters<Context['memFree']>[0], out: T): Promise<T> {
  await ctx.copyFromDevice(out, ptr);
  return out;
}

describe.runIf(gpu.run)('one kernel module on both backends', () => {
  it('gives the same results from CPU cores and from the GPU', async () => {
    const cpu = await createContext({ topology: { coresPerCluster: 2 } });
    const gpuCtx = await createContext({ backend: 'webgpu' });
    try {
      const [onCpu, onGpu] = [await program(cpu), await program(gpuCtx)];
      expect(onGpu).toEqual(onCpu);
      // And they are the right results, not the same wrong ones.
      expect(onCpu.hits!.slice(0, 3)).toEqual([2, 2, 2]);
      expect(onCpu.hits![999]).toBe(1);
      expect(onCpu.constants).toEqual([-0.125, 123456, 77, 0, 3.5, 0, 1]);
      expect(onCpu.views!.slice(0, 5)).toEqual([4, 12, 3, 4, 1]);
    } finally {
      await Promise.all([cpu.destroy(), gpuCtx.destroy()]);
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext, KernelError, NDArray, type Context, type Job, type KernelMap } from '../src/index.js';
import { DmaEvent, dmaRead, dmaWait, dmaWrite, mu } from '../src/mu/index.js';
import { kernelFailure, randomFloats } from './fixtures/testData.js';
import { expectAllClose } from './helpers/closeTo.js';

let ctx: Context;
let job: Job;

beforeAll(async () => {
  ctx = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } });
  job = ctx.createJob();
  job.load(await ctx.createModule(new URL('./fixtures/groupKernels.ts', import.meta.url)));
});

afterAll(async () => {
  await ctx?.destroy();
});



describe('DMA in work-group kernels', () => {
  it('runs a tiled 5-point stencil with 2-D strided DMA reads of tile plus halo and DMA writes of the result tile', async () => {
    const w = 48, h = 40, pw = w + 2, ph = h + 2;
    const padded = randomFloats(pw * ph, 7);
    const srcPtr = ctx.memAlloc(pw * ph * 4);
    const dstPtr = ctx.memAlloc(w * h * 4);
    ctx.hostView(srcPtr, 'float32').set(padded);
    ctx.hostView(dstPtr, 'float32').fill(Number.NaN);
    const map = job.buildMap('stencil_dma', { global: [w, h], local: [16, 8] }).setBatchSize(2);
    expect(map.taskCount).toBe(15);
    await map.execute(new NDArray(srcPtr, 'float32', [ph, pw]), new NDArray(dstPtr, 'float32', [h, w]));
    await map.synchronize();
    const got = ctx.hostView(dstPtr, 'float32');
    // Reference: the same five float32 inputs summed in the same order in float64, divided by 5
    // and rounded to float32, one point at a time: tolerance 1e-6 absolute (values in [0, 1)).
    const p = (y: number, x: number): number => padded[y * pw + x]!;
    const ref = Array.from({ length: h }, (_, y) => Array.from({ length: w }, (_, x) => (p(y + 1, x + 1) + p(y, x + 1) + p(y + 2, x + 1) + p(y + 1, x) + p(y + 1, x + 2)) / 5));
    expectAllClose(Array.from({ length: h }, (_, y) => got.subarray(y * w, (y + 1) * w)), ref, { atol: 1e-6, what: 'smoothed rows' });
    ctx.memFree(srcPtr);
    ctx.memFree(dstPtr);
  });

  it('copies a 3-D box with plane strides both ways, visible after the wait and not before', async () => {
    const [d, h, w] = [6, 10, 12];
    const volPtr = ctx.memAlloc(d * h * w * 8);
    const outPtr = ctx.memAlloc(d * h * w * 8);
    const seenPtr = ctx.memAlloc(6 * 8);
    const vol = ctx.hostView(volPtr, 'float64');
    for (let i = 0; i < vol.length; i++) vol[i] = i + 0.5;
    ctx.hostView(outPtr, 'float64').fill(-1);
    const box = { x: 5, y: 2, z: 1, w: 4, h: 3, d: 2 };
    const map = job.buildMap('dma_box', { global: [8], local: [8] });
    await map.execute(new NDArray(volPtr, 'float64', [d, h, w]), new NDArray(outPtr, 'float64', [d, h, w]), seenPtr, box);
    await map.synchronize();
    const expected = new Float64Array(d * h * w).fill(-1);
    for (let z = box.z; z < box.z + box.d; z++) {
      for (let y = box.y; y < box.y + box.h; y++) {
        for (let x = box.x; x < box.x + box.w; x++) expected[(z * h + y) * w + x] = vol[(z * h + y) * w + x]!;
      }
    }
    expect([...ctx.hostView(outPtr, 'float64')]).toEqual([...expected]);
    const first = (box.z * h + box.y) * w + box.x + 0.5;
    expect([...ctx.hostView(seenPtr, 'float64')]).toEqual([0, 1, -1, first, 0, 1]);
    for (const ptr of [volPtr, outPtr, seenPtr]) ctx.memFree(ptr);
  });

  it('copies 1-D chunks, and performs a DMA write never waited for when its group finishes', async () => {
    const n = 32;
    const srcPtr = ctx.memAlloc(n * 4);
    const dstPtr = ctx.memAlloc(n * 4);
    const src = ctx.hostView(srcPtr, 'int32');
    for (let i = 0; i < n; i++) src[i] = 3 * i - 40;
    const map = job.buildMap('dma_double', { global: [n], local: [8] }).setBatchSize(1);
    await map.execute(new NDArray(srcPtr, 'int32', [n]), new NDArray(dstPtr, 'int32', [n]));
    await map.synchronize();
    expect([...ctx.hostView(dstPtr, 'int32')]).toEqual([...src].map((v) => 2 * v));
    ctx.memFree(srcPtr);
    ctx.memFree(dstPtr);
  });
});

describe('mu.dmaWait', () => {
  it('accepts events already waited for and events of another group', async () => {
    const n = 48;
    const srcPtr = ctx.memAlloc(n * 8);
    const dstPtr = ctx.memAlloc(n * 8);
    const src = ctx.hostView(srcPtr, 'float64');
    for (let i = 0; i < n; i++) src[i] = i * 1.5;
    const map = job.buildMap('dma_rewait', { global: [n], local: [4] }).setBatchSize(4);
    await map.execute(new NDArray(srcPtr, 'float64', [n]), new NDArray(dstPtr, 'float64', [n]));
    await map.synchronize();
    expect([...ctx.hostView(dstPtr, 'float64')]).toEqual([...src]);
    ctx.memFree(srcPtr);
    ctx.memFree(dstPtr);
  });
});

describe('DMA errors', () => {
  const src = (): NDArray<'float32'> => new NDArray(ctx.memAlloc(16 * 4), 'float32', [16]);

  it('fail a region that reaches past the end of an array, naming the side, the index and the length', async () => {
    const err = await kernelFailure(job.buildMap('dma_out_of_bounds', { global: [2], local: [2] }), src());
    expect(err.kernelMessage).toBe('mu.dmaRead(): the src region reaches index 19, past the end of src (length 16)');
  });

  it('fail a DMA call whose arguments differ between the work-items of a group', async () => {
    const err = await kernelFailure(job.buildMap('dma_mismatch', { global: [2], local: [2] }), src());
    expect(err.kernelMessage).toBe(
      'mu.dmaRead() call #1 of work-item 1 in work-group (0) does not match the same call of the work-item that issued it (mu.dmaRead() of extent [4] at dstOffset 0, srcOffset 0): DMA calls are collective, so every work-item of a group makes the same calls, in the same order, with the same arrays, offsets and extent',
    );
  });

  it('fail a group whose work-items made different numbers of DMA calls before a barrier', async () => {
    const err = await kernelFailure(job.buildMap('dma_only_first', { global: [4], local: [4] }), src());
    expect(err.kernelMessage).toBe('work-group (0) diverged at barrier #1: work-item 0 made 1 DMA calls in this group but work-item 1 made 0; DMA calls are collective, so every work-item makes the same ones in the same order');
  });

  it('fail a copy between arrays of different element types', async () => {
    const err = await kernelFailure(job.buildMap('dma_wrong_type', { global: [1], local: [1] }), src());
    expect(err.kernelMessage).toBe('mu.dmaRead(): dst is an Int32Array but src is a Float32Array; a DMA copies between arrays of one element type');
  });

  it('fail a DMA outside a group kernel', async () => {
    const err = await kernelFailure(job.buildMap('dma_in_task', 16), src());
    expect(err.kernelMessage).toBe('mu.dmaRead() works only in a kernel defined with defineGroupKernel');
  });

  it('throw from the DMA builtins on the main thread', () => {
    const a = new Float32Array(4);
    expect(() => dmaRead(a, 0, a, 0, [1])).toThrow('mu.dmaRead() works only in a kernel defined with defineGroupKernel');
    expect(() => dmaWrite(a, 0, a, 0, [1])).toThrow('mu.dmaWrite() works only in a kernel defined with defineGroupKernel');
    expect(() => dmaWait()).toThrow('mu.dmaWait() works only in a kernel defined with defineGroupKernel, as `yield mu.dmaWait(...events)`');
  });

  it('are on the mu namespace', () => {
    expect([mu.dmaRead, mu.dmaWrite, mu.dmaWait]).toEqual([dmaRead, dmaWrite, dmaWait]);
    expect(typeof DmaEvent).toBe('function');
  });
});

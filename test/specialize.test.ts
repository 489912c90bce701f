import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { transform, type TransformOptions } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext, NDArray, type Context, type Job } from '../src/index.js';

// The README's batch kernel, as a user saves it in kernels.ts. `sweep` is a named arrow function,
// which esbuild's keepNames (on in tsx) wraps in `__name(...)`, a helper defined at module scope.
const TRIAD = `
import { defineKernel, type NDView } from 'pxl/mu';

export const triad = defineKernel({
  specialize: true,
  bind: (a: number, x: NDView<Float64Array>, y: NDView<Float64Array>, chunk: number) => {
    const xs = x.data, ys = y.data;
    const sweep = (lo: number, hi: number) => {
      for (let i = lo; i < hi; i++) ys[i] = a * xs[i]! + ys[i]!;
    };
    return (firstTask: number, endTask: number) => {
      for (let t = firstTask; t < endTask; t++) sweep(t * chunk, Math.min((t + 1) * chunk, ys.length));
    };
  },
});

// A class field inside bind: compiled for ES2020, esbuild moves it into a __publicField() call,
// a helper pxl does not supply.
export const with_class = defineKernel({
  specialize: true,
  bind: (y: NDView<Float64Array>) => {
    class Scale { k = 2; }
    const s = new Scale();
    return (first: number, end: number) => { for (let t = first; t < end; t++) y.data[t] = s.k * t; };
  },
});
`;

const mu = pathToFileURL(new URL('../src/mu/index.ts', import.meta.url).pathname).href;
let dir: string;
let ctx: Context;

/** Compiles TRIAD as tsx does (esbuild, names kept) and returns the module's URL. */
async function compiled(name: string, options: TransformOptions): Promise<URL> {
  const { code } = await transform(TRIAD, { loader: 'ts', format: 'esm', keepNames: true, ...options });
  const file = join(dir, name);
  await writeFile(file, code.replace(`from "pxl/mu"`, `from ${JSON.stringify(mu)}`));
  return pathToFileURL(file);
}

async function loadedJob(url: URL): Promise<Job> {
  const job = ctx.createJob();
  job.load(await ctx.createModule(url));
  return job;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pxl-specialize-'));
  ctx = await createContext({ topology: { subs: 2, clustersPerSub: 1, coresPerCluster: 1 } });
});

afterAll(async () => {
  await ctx?.destroy();
  await rm(dir, { recursive: true, force: true });
});

describe('batch kernels with specialize: true compiled by esbuild', () => {
  it('run on the cores when the compiler wrapped their functions in __name()', async () => {
    const url = await compiled('triad.mjs', { target: 'node20' });
    const job = await loadedJob(url);
    try {
      const n = 4096, chunk = 256;
      const xPtr = ctx.memAlloc(n * 8), yPtr = ctx.memAlloc(n * 8);
      ctx.hostView(xPtr, 'float64').forEach((_, i, a) => { a[i] = i; });
      ctx.hostView(yPtr, 'float64').fill(1);
      const map = job.buildMap('triad', n / chunk).setBatchSize(2);
      await map.execute(3, new NDArray(xPtr, 'float64', [n]), new NDArray(yPtr, 'float64', [n]), chunk);
      await map.synchronize();
      // 3 * i + 1 is exact in float64 for these i.
      expect(Array.from(ctx.hostView(yPtr, 'float64'))).toEqual(Array.from({ length: n }, (_, i) => 3 * i + 1));
    } finally {
      ctx.destroyJob(job);
    }
  });

  it('name the compiler, not the module, when it inserted a helper pxl does not supply', async () => {
    const url = await compiled('classes.mjs', { target: 'es2020' });
    const job = await loadedJob(url);
    try {
      const ptr = ctx.memAlloc(4 * 8);
      const map = job.buildMap('with_class', 4);
      await map.execute(new NDArray(ptr, 'float64', [4]));
      await expect(map.synchronize()).rejects.toThrow(
        '__publicField is not defined: this batch kernel is declared with specialize: true, so its bind() is recompiled from its source text, '
        + 'and __publicField is a helper that the compiler of its module (esbuild, tsx) inserted there; pxl supplies __defProp, __name only: '
        + 'compile the module for a newer target (ES2022 or later) or drop specialize',
      );
    } finally {
      ctx.destroyJob(job);
    }
  });
});

import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { access, createContext, type Context, type Job, type KernelModule, type TaskRecord } from '../src/index.js';

/**
 * The task graph's two examples, checked exactly against plain single-thread loops that compute the
 * same float32 values in the same order: a 2-D heat-diffusion stencil over many steps (neighborhood
 * reads, ping-pong buffers) and a dense matrix multiply (slice reads), with chunk grids that cut
 * both dimensions so halos and slices cross chunk boundaries.
 */
let ctx: Context;
let job: Job;
let mod: KernelModule;

beforeAll(async () => {
  ctx = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } });
  mod = await ctx.createModule(new URL('./fixtures/graphKernels.ts', import.meta.url));
  job = ctx.createJob();
});
afterAll(async () => {
  await ctx.destroy();
});

/** A deterministic pseudo-random float in [0, 1). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function heatInitial(rows: number, cols: number): Float32Array {
  const u = new Float32Array(rows * cols);
  const next = random(7);
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) u[i * cols + j] = (i === 0 ? 100 : 0) + (Math.abs(i - rows / 2) < 4 && Math.abs(j - cols / 3) < 6 ? 50 : 0) + next();
  return u;
}

/** The reference: the same 5-point update, one point at a time on one thread. */
function heatReference(u0: Float32Array, rows: number, cols: number, steps: number, alpha: number): Float32Array {
  let u = Float32Array.from(u0);
  let v = new Float32Array(u.length);
  for (let s = 0; s < steps; s++) {
    for (let i = 0; i < rows; i++) {
      for (let j = 0; j < cols; j++) {
        const p = i * cols + j;
        v[p] = i === 0 || j === 0 || i === rows - 1 || j === cols - 1 ? u[p]! : u[p]! + alpha * (u[p - cols]! + u[p + cols]! + u[p - 1]! + u[p + 1]! - 4 * u[p]!);
      }
    }
    [u, v] = [v, u];
  }
  return u;
}

function matmulReference(a: Float32Array, b: Float32Array, n: number, k: number, m: number): Float32Array {
  const c = new Float32Array(n * m);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < m; j++) {
      let s = 0;
      for (let x = 0; x < k; x++) s += a[i * k + x]! * b[x * m + j]!;
      c[i * m + j] = s;
    }
  }
  return c;
}

describe('heat diffusion (2-D stencil, neighborhood, ping-pong buffers)', () => {
  for (const chunks of [2, 4, 6]) {
    it(`matches the single-thread reference exactly after 100 steps on ${chunks} chunks`, async () => {
      const [rows, cols, steps, alpha] = [96, 128, 100, 0.2];
      const u0 = heatInitial(rows, cols);
      const q = ctx.createQueue({ job, chunks, uninitializedReads: 'throw' });
      q.load(mod);
      let src = q.buffer(Float32Array, [rows, cols], { init: u0, name: 'u' });
      let dst = q.buffer(Float32Array, [rows, cols], { name: 'v' });
      const tasks: TaskRecord[] = [];
      for (let s = 0; s < steps; s++) {
        const [from, to] = [src, dst];
        tasks.push(
          q.submit((cg) => {
            const u = cg.read(from, access.neighborhood([1, 1], 'alongAxes'));
            const v = cg.write(to, access.oneToOne(), { noInit: true });
            cg.parallelFor([rows, cols], 'heat_step', u, v, alpha);
          }),
        );
        [src, dst] = [dst, src];
      }
      // Step k reads what step k-1 wrote and overwrites what step k-1 read (which step k-2 wrote).
      // Step 5 reads B1, which step 4 wrote; it overwrites B0, which step 4 read, so it waits for
      // step 4 only: step 4 already waits for step 3, the writer of B0.
      expect(tasks[5]!.dependencies.map((d) => `${d.kind} T${d.task} B${d.buffer}`)).toEqual([`true T${tasks[4]!.id} B1`, `anti T${tasks[4]!.id} B0`]);
      const result = await q.fence(src);
      expect(result).toEqual(heatReference(u0, rows, cols, steps, alpha));
      await q.destroy();
    });
  }
});

describe('dense matrix multiply (slice)', () => {
  for (const chunks of [1, 4, 6]) {
    it(`matches the single-thread reference exactly on ${chunks} chunks`, async () => {
      const [n, k, m] = [48, 40, 56];
      const next = random(11);
      const a = Float32Array.from({ length: n * k }, () => next() * 2 - 1);
      const b = Float32Array.from({ length: k * m }, () => next() * 2 - 1);
      const q = ctx.createQueue({ job, chunks, uninitializedReads: 'throw' });
      q.load(mod);
      const A = q.buffer(Float32Array, [n, k], { init: a });
      const B = q.buffer(Float32Array, [k, m], { init: b });
      const C = q.buffer(Float32Array, [n, m]);
      const t = q.submit((cg) => {
        cg.parallelFor([n, m], 'matmul', cg.read(A, access.slice(1)), cg.read(B, access.slice(0)), cg.write(C, access.oneToOne(), { noInit: true }));
      });
      // Each chunk reads whole rows of A and whole columns of B.
      t.accesses[0]!.chunkRegions.forEach((r) => expect(r.boxes.map((x) => [x.min[1], x.max[1]])).toEqual([[0, k]]));
      t.accesses[1]!.chunkRegions.forEach((r) => expect(r.boxes.map((x) => [x.min[0], x.max[0]])).toEqual([[0, k]]));
      expect(await q.fence(C)).toEqual(matmulReference(a, b, n, k, m));
      await q.destroy();
    });
  }
});

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;

describe('examples/graph, run as a user runs them (against the built package)', () => {
  it('runs the heat-diffusion example and matches its reference', async () => {
    const { stdout } = await run(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'examples/graph/heat.ts'], { cwd: root, timeout: 60_000 });
    expect(stdout).toMatch(/^heat diffusion: 256×256, 200 steps on \d+ chunks; max \|difference\| from the single-thread loop: 0$/m);
  });

  it('keeps the first queue of docs/task-graph.md identical to the example', async () => {
    const read = (path: string): Promise<string> => readFile(new URL(`../${path}`, import.meta.url), 'utf8');
    const [doc, kernels, heat] = await Promise.all([read('docs/task-graph.md'), read('examples/graph/kernels.ts'), read('examples/graph/heat.ts')]);
    const kernel = kernels.slice(kernels.indexOf('export const heat_step'), kernels.indexOf('\n});\n', kernels.indexOf('export const heat_step')) + 4);
    const loop = heat.slice(heat.indexOf('// Ping-pong'), heat.indexOf('\n', heat.indexOf('const result')));
    expect(kernel.length).toBeGreaterThan(100);
    expect(doc).toContain(kernel);
    expect(doc).toContain(loop);
  });

  it('runs the matrix-multiply example and matches its reference', async () => {
    const { stdout } = await run(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'examples/graph/matmul.ts'], { cwd: root, timeout: 60_000 });
    expect(stdout).toMatch(/^matmul: \[128×96\] · \[96×112\] on \d+ chunks; max \|difference\| from the single-thread loop: 0$/m);
  });
});

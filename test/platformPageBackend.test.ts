/**
 * The CPU backend of a browser page without shared memory (backends/page/pageBackend.ts), run here
 * in Node by making the platform report no shared memory, as a page that is not cross-origin
 * isolated does: kernels run on the calling thread in slices that yield to the event loop, with
 * results equal bit for bit to those of worker cores over shared memory. test/browser.test.ts runs
 * the same backend in Chromium.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CancelledError, cdist, createContext, KernelError, l2Kernel, pdist, randomPcfs, type Context } from '../src/index.js';

const machine = vi.hoisted(() => ({ shared: true }));
vi.mock('../src/platform/machine.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../src/platform/machine.js')>();
  return {
    ...actual,
    sharedMemoryAvailable: () => machine.shared,
    isolationAdvice: () => (machine.shared ? undefined : 'no shared memory here: set Cross-Origin-Opener-Policy and Cross-Origin-Embedder-Policy'),
  };
});

/** Creates a Context as a page without shared memory would. */
async function pageContext(): Promise<Context> {
  machine.shared = false;
  try {
    return await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 1 } });
  } finally {
    machine.shared = true;
  }
}

describe("the page's own thread as the CPU backend", () => {
  let page: Context;
  let cores: Context;
  let warn: { mock: { calls: unknown[][] }; mockRestore(): void };

  beforeAll(async () => {
    warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    // One after the other: the platform reports no shared memory only while the page Context is made.
    cores = await createContext({ topology: { subs: 2, clustersPerSub: 1, coresPerCluster: 1 } });
    page = await pageContext();
  });

  afterAll(async () => {
    warn.mockRestore();
    await Promise.all([page?.destroy(), cores?.destroy()]);
  });

  it("is chosen without shared memory, says so, and warns once however many Contexts", async () => {
    expect(page.getAttribute('backend')).toBe('cpu');
    expect(page.getAttribute('device')).toBe("the page's own thread (no shared memory: the page is not cross-origin isolated)");
    expect(cores.getAttribute('device')).toBe('2 worker threads over shared memory');
    const second = await pageContext();
    await second.destroy();
    const said = warn.mock.calls.map((c) => String(c[0]));
    expect(said).toEqual(['pxl: no shared memory here: set Cross-Origin-Opener-Policy and Cross-Origin-Embedder-Policy']);
  });

  it('computes pdist, cdist and l2Kernel equal bit for bit to worker cores, in float64 and float32', async () => {
    for (const dtype of ['float64', 'float32'] as const) {
      const x = randomPcfs({ n: 90, points: 11, seed: 5, dtype });
      const y = randomPcfs({ n: 40, points: 7, seed: 6, dtype });
      // Small blocks: many launches, partial and diagonal blocks.
      const blocks = { maxOutputElements: 500, minBlockSide: 8 };
      for (const p of [1, 2, 3.5]) {
        const onPage = await pdist(x, { p, context: page, ...blocks });
        const onCores = await pdist(x, { p, context: cores });
        expect(Buffer.from(onPage.condensed.buffer).equals(Buffer.from(onCores.condensed.buffer)), `${dtype} pdist p=${p}`).toBe(true);
      }
      const c = [await cdist(x, y, { context: page, ...blocks }), await cdist(x, y, { context: cores })];
      expect(Buffer.from(c[0]!.data.buffer).equals(Buffer.from(c[1]!.data.buffer)), `${dtype} cdist`).toBe(true);
      const k = [await l2Kernel(x, { context: page, ...blocks }), await l2Kernel(x, { context: cores })];
      expect(Buffer.from(k[0]!.packed.buffer).equals(Buffer.from(k[1]!.packed.buffer)), `${dtype} l2Kernel`).toBe(true);
      expect(onlyFinite(c[0]!.data)).toBe(true);
    }
  });

  it('lets the event loop turn while a computation runs', async () => {
    const x = randomPcfs({ n: 700, points: 30, seed: 9 });
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      await pdist(x, { context: page, maxOutputElements: 2048 });
    } finally {
      clearInterval(timer);
    }
    expect(ticks).toBeGreaterThan(1);
  });

  it('yields to the event loop between the batches of one launch', async () => {
    // Each task keeps the thread for 2 ms; a launch of 40 tasks, one per batch, would hold it for
    // 80 ms in one piece without the slices.
    const job = page.createJob();
    job.load(await page.createModule('data:text/javascript,export function spin(ms) { const t = performance.now(); while (performance.now() - t < ms); }'));
    const map = job.buildMap('spin', 40).setBatchSize(1);
    let turns = 0;
    let running = true;
    const turn = (): void => {
      turns++;
      if (running) setImmediate(turn);
    };
    await map.execute(2);
    setImmediate(turn);
    await map.synchronize();
    running = false;
    page.destroyJob(job);
    expect(turns).toBeGreaterThanOrEqual(5);
  });

  it('rejects with CancelledError when the signal aborts, and computes again after', async () => {
    const x = randomPcfs({ n: 400, points: 10, seed: 2 });
    const controller = new AbortController();
    let blocks = 0;
    const run = pdist(x, { context: page, signal: controller.signal, maxOutputElements: 1024, onProgress: () => (++blocks === 2 ? controller.abort() : undefined) });
    await expect(run).rejects.toBeInstanceOf(CancelledError);
    expect(blocks).toBeLessThan(10);
    expect((await pdist([[[0, 10], [2, 5], [3, 0]], [[0, 5], [6, 0]]], { context: page })).get(1, 0)).toBe(25);
  });

  it('fails a Map with KernelError when its kernel throws, and runs the next one', async () => {
    const job = page.createJob();
    job.load(await page.createModule(new URL('./fixtures/faultKernels.ts', import.meta.url)));
    job.load(await page.createModule(new URL('./fixtures/kernels.ts', import.meta.url)));
    const map = job.buildMap('throw_value', 2).setBatchSize(1);
    await map.execute(5);
    const failure = await map.synchronize().then(() => undefined, (e: unknown) => e);
    expect(failure).toBeInstanceOf(KernelError);
    expect((failure as Error).message).toBe("kernel 'throw_value' threw at task 0: 5");
    const next = job.buildMap('count_tasks', 4);
    const counts = page.memAlloc(16);
    await next.execute(counts);
    await next.synchronize();
    expect([...page.hostView(counts, 'int32')]).toEqual([1, 1, 1, 1]);
    page.destroyJob(job);
  });

  it('refuses a module it cannot import with ModuleLoadError naming it', async () => {
    const url = new URL('./fixtures/does-not-exist.mjs', import.meta.url);
    await expect(page.createModule(url)).rejects.toThrow(`cannot load kernel module ${url.href}`);
  });

  it('refuses an allocation beyond its memory with OutOfMemoryError', async () => {
    const small = await (async () => {
      machine.shared = false;
      try {
        return await createContext({ topology: { coresPerCluster: 1 }, memorySize: 1024 });
      } finally {
        machine.shared = true;
      }
    })();
    try {
      expect(() => small.memAlloc(2048)).toThrow(/2048/);
    } finally {
      await small.destroy();
    }
  });
});

function onlyFinite(a: ArrayLike<number>): boolean {
  for (let k = 0; k < a.length; k++) if (!Number.isFinite(a[k]!)) return false;
  return true;
}

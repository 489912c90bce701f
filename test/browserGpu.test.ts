/**
 * The browser bundle's GPU path in Debian's headless Chromium, started with its software WebGPU
 * adapter (`--enable-unsafe-webgpu`): pdist (p = 1, 2), cdist and l2Kernel with `device: 'gpu'` and
 * on a `backend: 'webgpu'` Context, against Node's float32 results on CPU cores. Tolerance as in
 * test/webgpuPcf.test.ts: the CPU integrates float32 inputs in float64 and rounds once, the GPU sums
 * in float32, so entries agree within 5e-6 of the largest entry (about 40 float32 ulps).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cdist, destroyDefaultContext, l2Kernel, pdist, randomPcfs } from '../src/index.js';
import { chromiumMissing, launchChromium, serveStatic, type StaticServer } from './helpers/chromium.js';
import { expectAllClose } from './helpers/closeTo.js';

const bundle = join(import.meta.dirname, '..', 'dist/browser');
const missing = chromiumMissing();
// Under CI a missing browser fails (.ci/run installs it); elsewhere the file is skipped with the reason.
const run = missing === undefined || process.env.CI === 'true';
if (!run) console.warn(`browser GPU tests skipped: ${missing}`);

const PAGE = `<!doctype html><meta charset="utf-8"><title>pxl GPU test</title>
<script type="module">
import * as pxl from '/pxl/pxl.js';
window.pxl = pxl;
window.ready = true;
</script>`;

const SETS = { x: { n: 150, points: 20, seed: 7, dtype: 'float32' }, y: { n: 70, points: 13, seed: 8, dtype: 'float32' } } as const;

function expectClose(actual: ArrayLike<number>, expected: ArrayLike<number>, what: string): void {
  let scale = 1;
  for (let k = 0; k < expected.length; k++) scale = Math.max(scale, Math.abs(expected[k]!));
  expectAllClose(actual, expected, { atol: 5e-6 * scale, what });
}

// A browser shares the machine with the rest of the suite: generous limits, not speed checks.
describe.runIf(run)('the browser bundle on WebGPU in Chromium', { timeout: 90_000 }, () => {
  let browser: Browser;
  let server: StaticServer;
  let page: Page;
  const log: string[] = [];

  beforeAll(async () => {
    if (!existsSync(join(bundle, 'pxl.js'))) throw new Error(`no browser bundle at ${bundle}: run npm run build first`);
    [browser, server] = await Promise.all([launchChromium({ webgpu: true }), serveStatic({ mounts: { '/pxl/': bundle }, pages: { '/test.html': PAGE }, isolated: true })]);
    page = await browser.newPage();
    page.on('pageerror', (e) => log.push(`pageerror: ${e.message}`));
    await page.goto(`${server.url}/test.html`);
    await page.waitForFunction(() => (globalThis as unknown as { ready?: boolean }).ready === true, undefined, { timeout: 15_000 });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await Promise.all([server?.close(), destroyDefaultContext()]);
  });

  it('finds the adapter through navigator.gpu', async () => {
    const caps = await page.evaluate(() => (globalThis as unknown as { pxl: any }).pxl.browserCapabilities());
    expect(caps).toMatchObject({ crossOriginIsolated: true, gpu: true });
    expect(caps.warning).toBeUndefined();
  });

  it("computes pdist, cdist and l2Kernel with device 'gpu' and on a webgpu Context, equal to Node's float32 CPU results to float32 rounding", async () => {
    const got = await page.evaluate(async (sets) => {
      const { pxl } = globalThis as unknown as { pxl: any };
      const x = pxl.randomPcfs(sets.x);
      const y = pxl.randomPcfs(sets.y);
      const ctx = await pxl.createContext({ backend: 'webgpu' });
      try {
        const list = (a: ArrayLike<number>) => Array.from(a);
        return {
          backend: ctx.getAttribute('backend'),
          'pdist p=1': list((await pxl.pdist(x, { p: 1, device: 'gpu' })).condensed),
          'pdist p=2': list((await pxl.pdist(x, { p: 2, context: ctx })).condensed),
          cdist: list((await pxl.cdist(x, y, { device: 'gpu' })).data),
          l2Kernel: list((await pxl.l2Kernel(x, { context: ctx })).packed),
          dtype: (await pxl.pdist(x, { device: 'gpu' })).dtype,
        };
      } finally {
        await ctx.destroy();
      }
    }, SETS);
    expect(got.backend).toBe('webgpu');
    expect(got.dtype).toBe('float32');
    const x = randomPcfs(SETS.x);
    const y = randomPcfs(SETS.y);
    expectClose(got['pdist p=1'], (await pdist(x, { p: 1 })).condensed, 'pdist p=1');
    expectClose(got['pdist p=2'], (await pdist(x, { p: 2 })).condensed, 'pdist p=2');
    expectClose(got.cdist, (await cdist(x, y)).data, 'cdist');
    expectClose(got.l2Kernel, (await l2Kernel(x)).packed, 'l2Kernel');
    expect(log).toEqual([]);
  }, 60_000);

  it('computes on the GPU on a page without cross-origin isolation too', async () => {
    const plain = await serveStatic({ mounts: { '/pxl/': bundle }, pages: { '/test.html': PAGE }, isolated: false });
    const other = await browser.newPage();
    try {
      await other.goto(`${plain.url}/test.html`);
      await other.waitForFunction(() => (globalThis as unknown as { ready?: boolean }).ready === true, undefined, { timeout: 15_000 });
      const got = await other.evaluate(async () => {
        const { pxl } = globalThis as unknown as { pxl: any };
        const caps = await pxl.browserCapabilities();
        const d = await pxl.pdist([[[0, 10], [2, 5], [3, 0]], [[0, 5], [6, 0]]], { device: 'gpu' });
        return { isolated: caps.crossOriginIsolated, gpu: caps.gpu, entry: d.get(1, 0), dtype: d.dtype };
      });
      expect(got).toEqual({ isolated: false, gpu: true, entry: 25, dtype: 'float32' });
    } finally {
      await other.close();
      await plain.close();
    }
  }, 30_000);

  it('refuses float64 on the GPU with UnsupportedError', async () => {
    const error = await page.evaluate(async () => {
      const { pxl } = globalThis as unknown as { pxl: any };
      return pxl.pdist([[[0, 1]], [[0, 2]]], { device: 'gpu', dtype: 'float64' }).then(() => 'resolved', (e: Error) => e.name);
    });
    expect(error).toBe('UnsupportedError');
  });
});

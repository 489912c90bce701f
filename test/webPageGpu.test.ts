/**
 * The page of `pxl web` on the GPU: Chromium started with its (software, here) WebGPU adapter, the
 * device menu's GPU choice, and the downloaded result against Node's float32 run on CPU cores. The
 * GPU sums in float32 while the cores integrate float32 inputs in float64 and round once, so
 * entries agree to float32 accumulation error (the reference and tolerance of
 * test/webgpuPcf.test.ts: 5e-6 of the largest entry). One browser for the file.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeNpy, destroyDefaultContext, l2Kernel, pdist, randomPcfs } from '../src/index.js';
import { chromiumMissing } from './helpers/chromium.js';
import { expectAllClose } from './helpers/closeTo.js';
import { startWebPage, type WebPage } from './helpers/webPage.js';

const missing = chromiumMissing();
// Under CI a missing browser (or adapter) fails; elsewhere the file skips with the reason.
const underCi = process.env.CI === 'true';
const skip = missing !== undefined && !underCi;
if (skip) console.warn(`webPageGpu tests skipped: ${missing}`);

// A browser shares the machine with the rest of the suite: generous limits, not speed checks.
describe.skipIf(skip)('the pxl web page on the GPU', { timeout: 90_000 }, () => {
  let web: WebPage | undefined;
  let browser: Browser;
  let url: string;
  let scratch: string;

  beforeAll(async () => {
    web = await startWebPage({ webgpu: true, scratchPrefix: 'pxl-webgpu-page-' });
    ({ browser, url, scratch } = web);
  }, 60_000);

  afterAll(async () => {
    await web?.close();
    await destroyDefaultContext();
  });

  it('offers the GPU, pins float32 for it, and computes L1 distances and the L2 kernel as the CPU cores do in float32', async (context) => {
    const page = await browser.newPage({ acceptDownloads: true });
    try {
      await page.goto(url);
      await page.waitForSelector('body[data-state=idle]', { timeout: 20_000 });
      if (await page.isDisabled('#device option[value=gpu]')) {
        const note = await page.textContent('#device-note');
        if (underCi) throw new Error(`Chromium with --enable-unsafe-webgpu offered no WebGPU adapter: ${note}`);
        context.skip(`no WebGPU adapter in this Chromium: ${note}`);
      }
      expect(await page.textContent('#capabilities')).toContain('WebGPU available');
      await page.fill('#gen-n', '120');
      await page.fill('#gen-points', '15');
      await page.fill('#gen-seed', '4');
      await page.click('#generate');
      await page.selectOption('#dtype', 'float64');
      await page.selectOption('#device', 'gpu');
      // WGSL has no float64: choosing the GPU switches to float32 and disables float64.
      expect(await page.inputValue('#dtype')).toBe('float32');
      expect(await page.isDisabled('#dtype option[value=float64]')).toBe(true);

      const set = randomPcfs({ n: 120, points: 15, seed: 4 });
      for (const [operation, reference] of [
        ['l1', (await pdist(set, { dtype: 'float32' })).toSquare()],
        ['l2kernel', (await l2Kernel(set, { dtype: 'float32' })).toSquare()],
      ] as const) {
        await page.selectOption('#operation', operation);
        await page.click('#compute');
        await page.waitForSelector('body[data-state=done], body[data-state=failed]', { timeout: 30_000 });
        expect(await page.textContent('#error')).toBe('');
        expect(await page.textContent('#result-summary')).toContain('float32, on the GPU');
        const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
        const path = join(scratch, download.suggestedFilename());
        await download.saveAs(path);
        const got = decodeNpy(new Uint8Array(await readFile(path)));
        expect(got.shape).toEqual([120, 120]);
        expect(got.data).toBeInstanceOf(Float32Array);
        let scale = 1;
        for (const x of reference.data) scale = Math.max(scale, Math.abs(x));
        expectAllClose(got.data, reference.data, { atol: 5e-6 * scale, what: `${operation} on the page's GPU` });
      }
    } finally {
      await page.close();
    }
  }, 60_000);
});

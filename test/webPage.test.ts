/**
 * The page of `pxl web` in headless Chromium: `pxl web --port 0` runs as its own process (the
 * built dist/, as a user runs it) and one browser drives the page through generate, load, compute,
 * heatmap, hover, download and cancel; the page served without isolation still computes and warns.
 * Results are compared with Node's pdist / l2Kernel on the same PCFs, byte for byte.
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../src/cli/main.js';
import { destroyDefaultContext, encodeNpy, l2Kernel, pdist, randomPcfs } from '../src/index.js';
import { chromiumMissing, serveStatic } from './helpers/chromium.js';
import { DIST, startWebPage, type WebPage } from './helpers/webPage.js';
import { startPxl } from './helpers/pxlProcess.js';

const missing = chromiumMissing();
// Under CI a missing browser fails (beforeAll throws); elsewhere the file skips with the reason.
const skip = missing !== undefined && process.env.CI !== 'true';
if (skip) console.warn(`webPage tests skipped: ${missing}`);

let web: WebPage | undefined;
let browser: Browser;
let url: string;
let scratch: string;

/** A fresh page at `at`, failing the test on any uncaught page error; resolves once it is idle. */
async function openPage(at: string): Promise<Page> {
  const page = await browser.newPage({ acceptDownloads: true });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(at);
  await page.waitForSelector('body[data-state=idle]', { timeout: 20_000 });
  expect(errors).toEqual([]);
  return page;
}

async function generate(page: Page, n: number, points: number, seed: number): Promise<void> {
  await page.fill('#gen-n', String(n));
  await page.fill('#gen-points', String(points));
  await page.fill('#gen-seed', String(seed));
  await page.click('#generate');
  await expect.poll(() => page.textContent('#dataset')).toContain(`${n.toLocaleString('en-US')} PCFs`);
}

async function computeAndWait(page: Page): Promise<void> {
  await page.click('#compute');
  await page.waitForSelector('body[data-state=done], body[data-state=failed]', { timeout: 30_000 });
  expect(await page.textContent('#error')).toBe('');
  expect(await page.getAttribute('body', 'data-state')).toBe('done');
}

/** Fires a drop of a file named `name` holding `text` on the element `id` (or the body), as the browser does. */
async function dropFile(page: Page, name: string, text: string, id?: string): Promise<void> {
  await page.evaluate(`(() => {
    const transfer = new DataTransfer();
    transfer.items.add(new File([${JSON.stringify(text)}], ${JSON.stringify(name)}, { type: 'application/json' }));
    const target = ${id === undefined ? 'document.body' : `document.getElementById(${JSON.stringify(id)})`};
    target.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
  })()`);
}

/** The bytes of the `.npy` the Download button saves. */
async function downloadNpy(page: Page): Promise<{ name: string; bytes: Buffer }> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
  const path = join(scratch, `${Date.now()}-${download.suggestedFilename()}`);
  await download.saveAs(path);
  return { name: download.suggestedFilename(), bytes: await readFile(path) };
}

/**
 * Figures of canvas #id's pixels, computed in the page (the pixels stay there): its width, the
 * standard deviation of their brightness, and how many are near each of `colours` (#rrggbb).
 * In-page code is passed as strings throughout this file: the root tsconfig has no DOM types, and
 * the test runner's transform must not rewrite it.
 */
async function canvasFigures(page: Page, id: string, colours: readonly string[] = []): Promise<{ width: number; spread: number; near: number[] }> {
  return page.evaluate(`(() => {
    const canvas = document.getElementById(${JSON.stringify(id)});
    const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    const targets = ${JSON.stringify(colours)}.map((c) => [1, 3, 5].map((k) => parseInt(c.slice(k, k + 2), 16)));
    const near = targets.map(() => 0);
    let sum = 0;
    let sq = 0;
    for (let k = 0; k < data.length; k += 4) {
      const y = 0.3 * data[k] + 0.59 * data[k + 1] + 0.11 * data[k + 2];
      sum += y;
      sq += y * y;
      targets.forEach(([r, g, b], t) => {
        if (Math.abs(data[k] - r) < 24 && Math.abs(data[k + 1] - g) < 24 && Math.abs(data[k + 2] - b) < 24) near[t]++;
      });
    }
    const count = data.length / 4;
    const mean = sum / count;
    return { width: canvas.width, spread: Math.sqrt(Math.max(0, sq / count - mean * mean)), near };
  })()`);
}

// A browser shares the machine with the rest of the suite: generous limits, not speed checks.
describe.skipIf(skip)('the pxl web page in Chromium', { timeout: 90_000 }, () => {
  beforeAll(async () => {
    web = await startWebPage({ scratchPrefix: 'pxl-webpage-' });
    ({ browser, url, scratch } = web);
  }, 60_000);

  afterAll(async () => {
    await web?.close();
    await destroyDefaultContext();
  });

  it('is served with both isolation headers and reports its capabilities consistently', async () => {
    const res = await fetch(url);
    expect(res.headers.get('cross-origin-opener-policy')).toBe('same-origin');
    expect(res.headers.get('cross-origin-embedder-policy')).toBe('require-corp');
    const page = await openPage(url);
    try {
      const caps = await page.evaluate<{ crossOriginIsolated: boolean; cores: number; gpu: boolean; warning?: string }>("import('/browser/pxl.js').then((pxl) => pxl.browserCapabilities())");
      expect(caps.crossOriginIsolated).toBe(true);
      expect(caps.warning).toBeUndefined();
      expect(await page.isVisible('#warning')).toBe(false);
      expect(await page.textContent('#capabilities')).toContain(`${caps.cores} CPU cores (cross-origin isolated)`);
      // The GPU choice is offered exactly when the browser has an adapter, and says why when not.
      expect(await page.isDisabled('#device option[value=gpu]')).toBe(!caps.gpu);
      if (!caps.gpu) expect(await page.textContent('#device-note')).toContain('GPU unavailable: this browser offers no WebGPU adapter');
    } finally {
      await page.close();
    }
  });

  it('generates, computes L1 distances, draws a clustered heatmap, reads a hovered entry, plots its PCFs and downloads what Node computes', async () => {
    const [n, points, seed] = [150, 12, 7];
    const expected = await pdist(randomPcfs({ n, points, seed }));
    const page = await openPage(url);
    try {
      await generate(page, n, points, seed);
      await page.selectOption('#operation', 'l1');
      await page.selectOption('#dtype', 'float64');
      await computeAndWait(page);
      expect(await page.textContent('#result-summary')).toMatch(/^L1 distances of 150 PCFs, float64, on \d+ CPU cores, in \d+\.\d\d s\.$/);

      const { width, spread } = await canvasFigures(page, 'heatmap');
      expect(width).toBe(n);
      // A blank or one-colour canvas has spread 0; the viridis scale spans ~200 levels of brightness.
      expect(spread).toBeGreaterThan(20);

      // hover() scrolls the canvas into view first; positions are in its CSS box.
      const box = (await page.locator('#heatmap').boundingBox())!;
      await page.locator('#heatmap').hover({ position: { x: box.width * 0.3, y: box.height * 0.7 } });
      const i = Number(await page.getAttribute('#readout', 'data-i'));
      const j = Number(await page.getAttribute('#readout', 'data-j'));
      expect(i).not.toBe(j);
      expect(await page.textContent('#readout')).toBe(`row ${i}, column ${j}: ${String(expected.get(i, j))}`);
      expect(await page.textContent('#plot-row')).toBe(`PCF ${i}`);
      expect(await page.textContent('#plot-col')).toBe(`PCF ${j}`);
      // Both step functions are drawn: pixels of the row colour (#d6336c) and the column colour (#1c7ed6).
      const plot = await canvasFigures(page, 'plot', ['#d6336c', '#1c7ed6']);
      expect(plot.near[0]).toBeGreaterThan(50);
      expect(plot.near[1]).toBeGreaterThan(50);

      const { name, bytes } = await downloadNpy(page);
      expect(name).toBe('pdist-l1-n150-float64.npy');
      const square = expected.toSquare();
      expect(Buffer.compare(bytes, Buffer.from(encodeNpy(square.data, square.shape)))).toBe(0);
    } finally {
      await page.close();
    }
  });

  it('computes the L2 kernel and Lp distances in float32 as Node does, byte for byte', async () => {
    const set = randomPcfs({ n: 60, points: 9, seed: 11 });
    const page = await openPage(url);
    try {
      await generate(page, 60, 9, 11);
      await page.selectOption('#dtype', 'float32');
      await page.selectOption('#operation', 'l2kernel');
      await computeAndWait(page);
      const kernel = (await l2Kernel(set, { dtype: 'float32' })).toSquare();
      const k = await downloadNpy(page);
      expect(k.name).toBe('l2kernel-n60-float32.npy');
      expect(Buffer.compare(k.bytes, Buffer.from(encodeNpy(kernel.data, kernel.shape)))).toBe(0);

      await page.selectOption('#operation', 'lp');
      await page.fill('#p', '2.5');
      await computeAndWait(page);
      const lp = (await pdist(set, { dtype: 'float32', p: 2.5 })).toSquare();
      const d = await downloadNpy(page);
      expect(d.name).toBe('pdist-l2.5-n60-float32.npy');
      expect(Buffer.compare(d.bytes, Buffer.from(encodeNpy(lp.data, lp.shape)))).toBe(0);

      // A p below 1 is the library's OptionError, shown as it words it.
      await page.fill('#p', '0.5');
      await page.click('#compute');
      await page.waitForSelector('body[data-state=failed]');
      expect(await page.textContent('#error')).toMatch(/p must be .*>= ?1.*0\.5/);

      // Bad generator input is randomPcfs's OptionError, shown as it words it; nothing is loaded.
      await page.fill('#gen-n', '-3');
      await page.click('#generate');
      await expect.poll(() => page.textContent('#error')).toMatch(/^n must be .*got -3/);
      expect(await page.textContent('#dataset')).toContain('60 PCFs');
    } finally {
      await page.close();
    }
  });

  it('draws a result above 560 PCFs averaged down to 560 cells a side, and its readout stays exact', async () => {
    const [n, points, seed] = [700, 5, 9];
    const expected = await pdist(randomPcfs({ n, points, seed }));
    const page = await openPage(url);
    try {
      await generate(page, n, points, seed);
      await computeAndWait(page);
      const { width, spread } = await canvasFigures(page, 'heatmap');
      expect(width).toBe(560);
      expect(spread).toBeGreaterThan(20);
      expect(await page.textContent('#readout')).toContain('each pixel averages about 1.6 entries; the readout is exact');
      for (const [x, y] of [[0.1, 0.9], [0.77, 0.31]] as const) {
        const box = (await page.locator('#heatmap').boundingBox())!;
        await page.locator('#heatmap').hover({ position: { x: box.width * x, y: box.height * y } });
        const i = Number(await page.getAttribute('#readout', 'data-i'));
        const j = Number(await page.getAttribute('#readout', 'data-j'));
        expect(await page.textContent('#readout')).toBe(`row ${i}, column ${j}: ${String(expected.get(i, j))}`);
      }
    } finally {
      await page.close();
    }
  });

  it('loads a dropped .json and a picked .npz as pxl random-pcfs writes them, and shows the error of a bad file', async () => {
    const json = join(scratch, 'pcfs.json');
    const npz = join(scratch, 'pcfs.npz');
    const quiet = { stdout: { write: () => true }, stderr: { write: () => true }, interceptSigint: false };
    expect(await run(['random-pcfs', '--n', '40', '--points', '6', '--seed', '3', '-o', json, '-q'], quiet)).toBe(0);
    expect(await run(['random-pcfs', '--n', '40', '--points', '6', '--seed', '3', '-o', npz, '-q'], quiet)).toBe(0);
    const expected = (await pdist(randomPcfs({ n: 40, points: 6, seed: 3 }))).toSquare();
    const expectedNpy = Buffer.from(encodeNpy(expected.data, expected.shape));
    const page = await openPage(url);
    try {
      // Drag and drop: a drop event carrying the file, as the browser fires it.
      const text = await readFile(json, 'utf8');
      await dropFile(page, 'pcfs.json', text, 'dropzone');
      await expect.poll(() => page.textContent('#dataset')).toBe('40 PCFs, 240 breakpoints in all (pcfs.json).');
      // Dropped beside the zone, the page takes it too (else the browser would open the file in its place).
      await dropFile(page, 'beside.json', text);
      await expect.poll(() => page.textContent('#dataset')).toBe('40 PCFs, 240 breakpoints in all (beside.json).');
      await computeAndWait(page);
      expect(Buffer.compare((await downloadNpy(page)).bytes, expectedNpy)).toBe(0);

      await page.setInputFiles('#file', npz);
      await expect.poll(() => page.textContent('#dataset')).toBe('40 PCFs, 240 breakpoints in all (pcfs.npz).');
      expect(await page.isVisible('#result')).toBe(false);
      await computeAndWait(page);
      expect(Buffer.compare((await downloadNpy(page)).bytes, expectedNpy)).toBe(0);

      // A PCF without a breakpoint at t = 0: the library's message, naming the file and the PCF.
      await page.setInputFiles('#file', { name: 'bad.json', mimeType: 'application/json', buffer: Buffer.from('{"pcfs": [[[0, 1], [2, 0]], [[1, 5]]]}') });
      await expect.poll(() => page.isVisible('#error')).toBe(true);
      expect(await page.textContent('#error')).toMatch(/^bad\.json: .*PCF 1/);
      // The PCFs loaded before stay loaded.
      expect(await page.textContent('#dataset')).toBe('40 PCFs, 240 breakpoints in all (pcfs.npz).');

      await page.setInputFiles('#file', { name: 'broken.npz', mimeType: 'application/octet-stream', buffer: Buffer.from('PK not really a zip') });
      await expect.poll(() => page.textContent('#error')).toMatch(/^broken\.npz: /);
    } finally {
      await page.close();
    }
  });

  it('says, rather than failing silently, when the .npy to download does not fit in memory', async () => {
    const page = await openPage(url);
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    try {
      await generate(page, 200, 5, 3);
      await computeAndWait(page);
      // A buffer this page cannot get, as a result of tens of thousands of PCFs meets in a real browser.
      await page.evaluate(`globalThis.Uint8Array = new Proxy(Uint8Array, {
        construct(target, args) {
          if (typeof args[0] === 'number' && args[0] > 100000) throw new RangeError('Array buffer allocation failed');
          return Reflect.construct(target, args);
        },
      })`);
      await page.click('#download');
      await expect.poll(() => page.textContent('#error')).toMatch(/^Download: encodeNpy: an \.npy file of 320128 bytes does not fit in one buffer .*The command line writes a result this large to \.npy block by block: pxl pdist \(or pxl l2-kernel\) PCFS\.json -o OUT\.npy$/);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('cancels a large run: the page says so, keeps no result and computes again afterwards', async () => {
    const page = await openPage(url);
    try {
      await generate(page, 5000, 400, 1);
      await page.click('#compute');
      // Cancel once the first blocks are in: the run has started on the cores.
      await page.waitForFunction("document.getElementById('progress').value > 0", undefined, { timeout: 30_000 });
      // New PCFs mid-run are refused, saying why: the result would not be theirs.
      expect(await page.isDisabled('#generate')).toBe(true);
      expect(await page.isDisabled('#file')).toBe(true);
      await dropFile(page, 'late.json', '[[[0, 1]]]');
      await expect.poll(() => page.textContent('#error')).toBe('late.json: not loaded: a computation is running: press Cancel (or wait for it to end), then load or generate PCFs');
      expect(await page.textContent('#dataset')).toContain('5,000 PCFs');
      await page.click('#cancel');
      await page.waitForSelector('body[data-state=cancelled], body[data-state=done]', { timeout: 30_000 });
      expect(await page.getAttribute('body', 'data-state')).toBe('cancelled');
      expect(await page.textContent('#status')).toMatch(/^Cancelled after [\d,]+ of 12,497,500 pairs; nothing was kept\.$/);
      expect(await page.isVisible('#result')).toBe(false);
      expect(await page.isDisabled('#cancel')).toBe(true);
      await generate(page, 20, 4, 2);
      await computeAndWait(page);
    } finally {
      await page.close();
    }
  }, 60_000);

  it('without cross-origin isolation still computes (on one thread) and shows the warning naming both headers', async () => {
    const plain = await serveStatic({ mounts: { '/': join(DIST, 'web'), '/browser/': join(DIST, 'browser') }, isolated: false });
    const page = await openPage(`${plain.url}/`);
    try {
      expect(await page.isVisible('#warning')).toBe(true);
      const warning = await page.textContent('#warning');
      expect(warning).toContain('Cross-Origin-Opener-Policy: same-origin');
      expect(warning).toContain('Cross-Origin-Embedder-Policy: require-corp');
      expect(await page.textContent('#capabilities')).toContain('one CPU thread (not cross-origin isolated)');
      await generate(page, 50, 8, 5);
      await computeAndWait(page);
      expect(await page.textContent('#result-summary')).toContain('on one CPU thread');
      expect((await canvasFigures(page, 'heatmap')).spread).toBeGreaterThan(20);
      const expected = (await pdist(randomPcfs({ n: 50, points: 8, seed: 5 }))).toSquare();
      expect(Buffer.compare((await downloadNpy(page)).bytes, Buffer.from(encodeNpy(expected.data, expected.shape)))).toBe(0);
    } finally {
      await page.close();
      await plain.close();
    }
  });

  // Browsers isolate only secure contexts: plain http from an address other than localhost is not one.
  const lanAddress = Object.values(networkInterfaces()).flat().find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address;
  it.skipIf(lanAddress === undefined)('opened over plain http from another address, says that headers are not enough and what to do', async () => {
    const own = startPxl(['web', '--host', '0.0.0.0', '--port', '0']);
    try {
      const port = /:(\d+)\//.exec(await own.line(/serving the page at/))![1]!;
      const page = await openPage(`http://${lanAddress}:${port}/`);
      try {
        expect(await page.textContent('#capabilities')).toContain('one CPU thread (not cross-origin isolated)');
        expect(await page.textContent('#warning')).toMatch(/Headers are not enough here: this page came over plain http from an address other than localhost, which browsers never isolate; open it at localhost on the machine serving it, or serve it over https$/);
      } finally {
        await page.close();
      }
    } finally {
      await own.kill();
    }
  });

  it('pxl web on a taken port fails with exit 2 and says what to pass instead', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as AddressInfo;
    try {
      const taken = startPxl(['web', '--port', String(port)]);
      expect((await taken.exit).code).toBe(2);
      expect(taken.stderr()).toBe(`pxl: --port ${port}: 127.0.0.1:${port} is already in use by another program; choose another port with --port, or --port 0 for a free one\n`);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  it('pxl web stops on SIGTERM with exit 0, with a browser still connected', async () => {
    const own = startPxl(['web', '--port', '0']);
    const at = /(http:\/\/\S+\/)/.exec(await own.line(/serving the page at/))![1]!;
    const page = await openPage(at);
    try {
      process.kill(own.child.pid!, 'SIGTERM');
      expect(await own.exit).toEqual({ code: 0, signal: null });
      expect(own.stderr()).toMatch(/pxl web: stopped\n$/);
    } finally {
      await page.close();
      await own.kill();
    }
  });
});

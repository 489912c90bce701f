// The page of `pxl web` in headless Chromium (issue 18: usable within a second): how long a fresh
// tab takes until the page is ready for input (its body's data-state turns 'idle', after the
// bundle has loaded and browserCapabilities() has answered), against a blank page served by the
// same server in the same run (the browser's own cost of a tab and a navigation); then, once, the
// time to compute and draw 1,000 random PCFs. Prints one JSON document with medians.
//   npm run build && node bench/web.mjs        (PXL_BENCH_REPEATS=15 for more tabs)
import { spawn } from 'node:child_process';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { median, printJson, sig } from './lib/stats.mjs';

const REPEATS = Number(process.env.PXL_BENCH_REPEATS ?? 9);
const CHROMIUM = process.env.PXL_CHROMIUM ?? '/usr/bin/chromium';
const pxl = fileURLToPath(new URL('../bin/pxl.js', import.meta.url));

const server = spawn(process.execPath, [pxl, 'web', '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
const url = await new Promise((resolve, reject) => {
  let said = '';
  server.stderr.on('data', (chunk) => {
    said += chunk;
    const m = /http:\/\/\S+/.exec(said);
    if (m) resolve(m[0].replace(/\/$/, ''));
  });
  server.once('exit', (code) => reject(new Error(`pxl web exited with ${code}: ${said}`)));
});

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic'],
});
try {
  // A page of the same origin that does nothing: 404 text, served with the same headers.
  const blank = `${url}/blank-for-bench`;
  const tabs = { blank: [], page: [] };
  for (let i = -1; i < REPEATS; i++) {
    for (const kind of ['blank', 'page']) {
      const context = await browser.newContext();
      const tab = await context.newPage();
      const t0 = performance.now();
      if (kind === 'blank') await tab.goto(blank, { waitUntil: 'load' });
      else {
        await tab.goto(`${url}/`);
        await tab.waitForSelector('body[data-state=idle]', { timeout: 30_000 });
      }
      const ms = performance.now() - t0;
      if (i >= 0) tabs[kind].push(ms);
      await context.close();
    }
  }

  const tab = await browser.newPage();
  await tab.goto(`${url}/`);
  await tab.waitForSelector('body[data-state=idle]');
  await tab.fill('#gen-n', '1000');
  await tab.fill('#gen-points', '20');
  await tab.click('#generate');
  await tab.waitForFunction("document.getElementById('dataset').textContent.includes('1,000 PCFs')");
  const t0 = performance.now();
  await tab.click('#compute');
  await tab.waitForSelector('body[data-state=done], body[data-state=failed]', { timeout: 120_000 });
  const computeAndDraw = performance.now() - t0;
  const state = await tab.getAttribute('body', 'data-state');

  const page = median(tabs.page);
  const base = median(tabs.blank);
  printJson({
    bench: 'web', date: new Date().toISOString(), node: process.version, cpus: os.availableParallelism(),
    loadAverage: os.loadavg().map((x) => sig(x, 3)), browser: `Chromium ${browser.version()}`, repeats: REPEATS,
    results: {
      blankTabMs: sig(base, 3),
      pageReadyMs: sig(page, 3),
      pageReadyRange: [sig(Math.min(...tabs.page), 3), sig(Math.max(...tabs.page), 3)],
      pageOverBlank: sig(page / base, 3),
      goalMs: 1000,
      met: page <= 1000,
      l1Of1000PcfsComputedAndDrawnMs: state === 'done' ? sig(computeAndDraw, 3) : `failed: ${await tab.textContent('#error')}`,
    },
  });
} finally {
  await browser.close();
  server.kill('SIGTERM');
}

/**
 * The page of `pxl web` for one test file: the built page and bundle checked, `pxl web --port 0`
 * started as a process, headless Chromium launched, and a scratch folder for downloads.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { chromiumMissing, launchChromium } from './chromium.js';
import { startPxl, type PxlProcess } from './pxlProcess.js';

/** dist/ of this checkout: the page (web/) and the bundle (browser/) that `pxl web` serves. */
export const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));

export interface WebPage {
  readonly server: PxlProcess;
  /** The page's address, ending in `/`. */
  readonly url: string;
  readonly browser: Browser;
  readonly scratch: string;
  /** Closes the browser, stops the server by its pid and removes the scratch folder. */
  close(): Promise<void>;
}

/** @throws when Chromium or the build is missing (tests skip before, outside CI). */
export async function startWebPage(options: { readonly webgpu?: boolean; readonly scratchPrefix: string }): Promise<WebPage> {
  const missing = chromiumMissing();
  if (missing !== undefined) throw new Error(missing);
  for (const file of ['web/index.html', 'web/app.js', 'browser/pxl.js']) {
    if (!existsSync(join(DIST, file))) throw new Error(`dist/${file} is missing: run npm run build`);
  }
  const scratch = await mkdtemp(join(tmpdir(), options.scratchPrefix));
  const server = startPxl(['web', '--port', '0']);
  try {
    const url = /(http:\/\/\S+\/)/.exec(await server.line(/serving the page at/))![1]!;
    const browser = await launchChromium({ webgpu: options.webgpu === true });
    return {
      server, url, browser, scratch,
      async close() {
        await browser.close();
        await server.kill();
        await rm(scratch, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await server.kill();
    await rm(scratch, { recursive: true, force: true });
    throw error;
  }
}

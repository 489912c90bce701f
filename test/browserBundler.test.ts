/**
 * `import { pdist } from 'pxl'` in an app that a bundler builds (esbuild, which honours the
 * "browser" export condition): the bundle holds pxl's code, and pxl loads its core worker and block
 * kernels by URL beside that bundle. With dist/browser's files copied there, as docs/browser.md
 * says, results equal Node's on an isolated page and without isolation; without them, the error
 * says which files to serve where.
 */
import { spawnSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as esbuild from 'esbuild';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyDefaultContext, pdist, randomPcfs } from '../src/index.js';
import { chromiumMissing, launchChromium, serveStatic } from './helpers/chromium.js';

const root = join(import.meta.dirname, '..');
const missing = chromiumMissing();
const run = missing === undefined || process.env.CI === 'true';
if (!run) console.warn(`browser bundler tests skipped: ${missing}`);

const APP = `import { pdist, randomPcfs } from 'pxl';
window.result = pdist(randomPcfs({ n: 40, points: 7, seed: 4 }), { p: 1 }).then(
  (d) => ({ values: Array.from(d.condensed) }),
  (e) => ({ error: e.name + ': ' + e.message }),
);
`;
const PAGE = '<!doctype html><meta charset="utf-8"><title>app</title><script type="module" src="./app.js"></script>';
const ADVICE = "serve all .js files of pxl's dist/browser/ beside the script holding pxl (pxl.js, or your bundle)";

describe.runIf(run)("an app bundled from 'pxl' in Chromium", { timeout: 90_000 }, () => {
  let browser: Browser;
  let scratch: string;
  let bare: string;
  let complete: string;
  let expected: number[];

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'pxl-bundler-'));
    await mkdir(join(scratch, 'node_modules'));
    await symlink(root, join(scratch, 'node_modules', 'pxl'), 'dir');
    await writeFile(join(scratch, 'main.js'), APP);
    bare = join(scratch, 'bare');
    complete = join(scratch, 'complete');
    await esbuild.build({ absWorkingDir: scratch, entryPoints: ['main.js'], bundle: true, format: 'esm', platform: 'browser', outfile: join(bare, 'app.js'), logLevel: 'error' });
    await writeFile(join(bare, 'index.html'), PAGE);
    await cp(bare, complete, { recursive: true });
    await cp(join(root, 'dist/browser'), complete, { recursive: true });
    [browser, expected] = await Promise.all([launchChromium(), pdist(randomPcfs({ n: 40, points: 7, seed: 4 }), { p: 1 }).then((d) => Array.from(d.condensed))]);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await destroyDefaultContext();
    await rm(scratch, { recursive: true, force: true });
  });

  async function outcome(dir: string, isolated: boolean): Promise<{ values?: number[]; error?: string }> {
    const server = await serveStatic({ mounts: { '/': dir }, isolated });
    const page = await browser.newPage();
    try {
      await page.goto(`${server.url}/`);
      await page.waitForFunction('window.result !== undefined', undefined, { timeout: 15_000 });
      return await page.evaluate('window.result');
    } finally {
      await page.close();
      await server.close();
    }
  }

  // TypeScript takes the "browser" condition's types with customConditions, as a bundler takes its code.
  it("type-checks a browser app's imports from 'pxl' against the browser entry's API", async () => {
    await writeFile(join(scratch, 'app.ts'), "import { browserCapabilities, pdist, randomPcfs } from 'pxl';\nconst caps = await browserCapabilities();\nexport const x: number = (await pdist(randomPcfs({ n: 3, points: 2, seed: 1 }))).get(0, 1) + caps.cores;\n");
    await writeFile(join(scratch, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'esnext', target: 'es2022', moduleResolution: 'bundler', customConditions: ['browser'], noEmit: true, strict: true, lib: ['es2022', 'dom'], skipLibCheck: true }, files: ['app.ts'] }));
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', scratch], { encoding: 'utf8', timeout: 60_000 });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  });

  for (const isolated of [true, false]) {
    const where = isolated ? 'on Web Workers (isolated)' : "on the page's thread (not isolated)";
    it(`computes as Node does ${where} with dist/browser's files beside the bundle`, async () => {
      expect(await outcome(complete, isolated)).toEqual({ values: expected });
    });

    it(`says which files to serve where ${where} when they are missing`, async () => {
      const { error } = await outcome(bare, isolated);
      expect(error).toContain(isolated ? '/worker.js failed to load' : '/blockKernels.js');
      expect(error).toContain(ADVICE);
    });
  }
});

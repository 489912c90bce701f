/**
 * The browser bundle as built (dist/browser, by `npm run build`): the runtime's files within
 * 100 kB gzipped, no `node:` module anywhere in it, and the modules that load by URL beside pxl.js
 * (test/browser.test.ts loads them in Chromium).
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

const bundle = join(import.meta.dirname, '..', 'dist/browser');
const LIMIT = 100 * 1024;

async function scripts(): Promise<{ name: string; text: string }[]> {
  if (!existsSync(join(bundle, 'pxl.js'))) throw new Error(`no browser bundle at ${bundle}: run npm run build first`);
  const names = (await readdir(bundle)).filter((n) => n.endsWith('.js'));
  return Promise.all(names.map(async (name) => ({ name, text: await readFile(join(bundle, name), 'utf8') })));
}

describe('the browser bundle', () => {
  it('holds pxl.js, the core worker and the block kernel modules side by side', async () => {
    const names = (await scripts()).map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(['pxl.js', 'worker.js', 'blockKernels.js', 'wgslBlockKernels.js']));
  });

  it('is at most 100 kB gzipped, workers, kernel modules and chunks included', async () => {
    let gzipped = 0;
    for (const { text } of await scripts()) gzipped += gzipSync(text, { level: 9 }).length;
    expect(gzipped).toBeGreaterThan(10 * 1024); // a bundle this small would be missing the runtime
    expect(gzipped, `${(gzipped / 1024).toFixed(1)} kB gzipped`).toBeLessThanOrEqual(LIMIT);
  });

  it('weighs what README and docs/browser.md say, to within 1 kB', async () => {
    let gzipped = 0;
    for (const { text } of await scripts()) gzipped += gzipSync(text, { level: 9 }).length;
    const root = join(import.meta.dirname, '..');
    const said = [
      /page \(([\d.]+) kB gzipped\)/.exec(await readFile(join(root, 'README.md'), 'utf8'))?.[1],
      /weigh ([\d.]+) kB gzipped/.exec(await readFile(join(root, 'docs/browser.md'), 'utf8'))?.[1],
    ];
    for (const figure of said) expect(Math.abs(Number(figure) - gzipped / 1024), `${figure} kB said, ${(gzipped / 1024).toFixed(1)} kB built`).toBeLessThanOrEqual(1);
  });

  // An import() that only Node-only code makes still gets its own chunk, and splits what it loads
  // off from pxl.js into a further one: both cost gzipped bytes that no page ever loads.
  it('holds no chunk that no other file of the bundle imports', async () => {
    const all = await scripts();
    for (const { name } of all.filter((s) => s.name.startsWith('chunk-'))) {
      expect(all.some((s) => s.name !== name && s.text.includes(`"./${name}"`)), name).toBe(true);
    }
  });

  it('imports no node: module, nor the Node-only packages', async () => {
    for (const { name, text } of await scripts()) {
      expect(text, name).not.toMatch(/["'`]node:[a-z_/]+["'`]/);
      expect(text, name).not.toMatch(/from\s*["'](webgpu|@nats-io\/[a-z-]+|commander|cli-progress|tsx)["']/);
    }
  });
});

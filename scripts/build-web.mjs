// Builds the page that `pxl web` serves into dist/web: src/web/app.ts bundled by esbuild (one
// ES module, minified), beside index.html and styles.css copied as they are. The runtime is not
// bundled in: the page imports 'pxl' as ../browser/pxl.js, the bundle that build-browser.mjs
// writes to dist/browser, so one copy of pxl serves both (and its workers find their files
// relative to it).
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = `${root}src/web/`;
const out = `${root}dist/web/`;

/** Resolves the bare specifier 'pxl' to the browser bundle's URL, relative to dist/web. */
const runtimeAsSibling = {
  name: 'pxl-runtime-external',
  setup(b) {
    b.onResolve({ filter: /^pxl$/ }, () => ({ path: '../browser/pxl.js', external: true }));
  },
};

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });
await build({
  entryPoints: [`${src}app.ts`],
  outfile: `${out}app.js`,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  sourcemap: 'linked',
  legalComments: 'none',
  plugins: [runtimeAsSibling],
  logLevel: 'warning',
});
await Promise.all(['index.html', 'styles.css'].map((name) => copyFile(`${src}${name}`, `${out}${name}`)));

/**
 * Builds the browser bundle: dist/browser/pxl.js (ES module) and, beside it, the modules it loads by
 * URL relative to itself: the MU core's worker entry (worker.js) and the block kernel modules
 * (blockKernels.js, wgslBlockKernels.js), with the chunks they share; and mu.js, the kernel-side API
 * that users' kernel modules import. Prints the gzipped sizes.
 *
 * The platform seam: where a source file `X.ts` has a twin `X.browser.ts` (src/platform/ holds most:
 * threads, files, machine figures, garbage collection; src/pcf/resultFile.browser.ts refuses `out`;
 * src/backends/webgpu/ leaves Dawn, Node's WebGPU, out), the bundle takes the twin. Both have the
 * same exports; Node never loads a `.browser.ts` file. The few reads of Node's global `process`
 * (warnings, PXL_TRACE) get src/platform/process.browser.ts, and the name `SharedArrayBuffer`,
 * absent from pages without cross-origin isolation, a stand-in that refuses with the headers to set
 * (src/platform/sharedArrayBuffer.browser.ts), and `setImmediate` a message to itself
 * (src/platform/setImmediate.browser.ts).
 * A `node:` import left in the bundle fails the build.
 *
 * WGSL marked `/* wgsl *\/` in src/ ships without its comment lines and indentation (wgslComments.mjs).
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';
import { wgslComments } from './wgslComments.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist/browser');

/** Resolves `./X.js` imports inside src/ to `X.browser.ts` where that twin exists. */
const browserTwins = {
  name: 'browser-twins',
  setup(build) {
    build.onResolve({ filter: /^\.\.?\// }, (args) => {
      if (!args.importer.startsWith(join(root, 'src'))) return undefined;
      const target = resolve(args.resolveDir, args.path).replace(/\.js$/, '');
      const twin = `${target}.browser.ts`;
      if (existsSync(twin)) return { path: twin };
      return undefined;
    });
    build.onResolve({ filter: /^node:/ }, (args) => ({
      errors: [{ text: `${args.path} imported by ${relative(root, args.importer)}: a browser has no Node modules; give that file a .browser.ts twin` }],
    }));
  },
};

export async function buildBrowser({ quiet = false } = {}) {
  rmSync(outdir, { recursive: true, force: true });
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: {
      pxl: 'src/browser.ts',
      // The kernel-side API for users' kernel modules: `import { getTaskIdx } from './pxl/mu.js'`.
      mu: 'src/mu/index.ts',
      worker: 'src/backends/cpu/worker.ts',
      blockKernels: 'src/pcf/blockKernels.ts',
      wgslBlockKernels: 'src/pcf/wgslBlockKernels.ts',
    },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    sourcemap: 'linked',
    chunkNames: 'chunk-[hash]',
    inject: ['src/platform/process.browser.ts', 'src/platform/sharedArrayBuffer.browser.ts', 'src/platform/setImmediate.browser.ts'],
    // The optional Dawn package is Node's route to a GPU; in a page it is navigator.gpu (gpuDevice.ts).
    external: ['webgpu'],
    plugins: [browserTwins, wgslComments],
    metafile: true,
    logLevel: 'warning',
  });
  const files = Object.keys(result.metafile.outputs).filter((f) => f.endsWith('.js'));
  let raw = 0;
  let gzipped = 0;
  for (const f of files) {
    const bytes = readFileSync(join(root, f));
    raw += bytes.length;
    gzipped += gzipSync(bytes, { level: 9 }).length;
  }
  if (!quiet) console.log(`dist/browser: ${files.length} files (${files.map((f) => basename(f)).filter((f) => !f.startsWith('chunk-')).join(', ')} and chunks), ${(raw / 1024).toFixed(1)} kB, ${(gzipped / 1024).toFixed(1)} kB gzipped`);
  return { files, raw, gzipped };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildBrowser();

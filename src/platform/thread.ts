/**
 * Starting a worker thread from one of pxl's own modules. Compiled pxl starts the `.js` entry as
 * it is; pxl running from its TypeScript sources (tests, tsx) must first register tsx inside the
 * new thread, because Node 20 neither runs `.ts` itself nor passes tsx on through `execArgv`.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** Marks a thread whose modules load through tsx, so it can import `.ts` kernel modules as well. */
export const TSX_LOADED = Symbol.for('pxl.tsx');

let tsxApi: string | undefined;

/** The URL of tsx's ESM `register()` API, resolved on first use. */
export function tsxUrl(): string {
  tsxApi ??= pathToFileURL(join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;
  return tsxApi;
}

/**
 * The URL of the thread entry `name` (without extension) beside `base` (the caller's
 * `import.meta.url`): `name.ts` while pxl runs from sources, `name.js` once compiled.
 */
export function threadEntry(base: string, name: string): URL {
  return new URL(`./${name}${base.endsWith('.ts') ? '.ts' : '.js'}`, base);
}

/** Starts `entry` (from {@link threadEntry}) in a new worker thread. */
export function startThread(entry: URL, options: WorkerOptions): Worker {
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry, options);
  const bootstrap = `import(${JSON.stringify(tsxUrl())}).then((m) => { m.register(); globalThis[Symbol.for('pxl.tsx')] = true; return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}

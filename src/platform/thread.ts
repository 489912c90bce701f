/**
 * Threads in Node: worker_threads. Starting a worker thread from one of pxl's own modules, and,
 * inside it, what it was started with and how it talks back. Compiled pxl starts the `.js` entry
 * as it is; pxl running from its TypeScript sources (tests, tsx) must first register tsx inside
 * the new thread, because Node 20 neither runs `.ts` itself nor passes tsx on through `execArgv`.
 * thread.browser.ts has the same exports over Web Workers.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MessageChannel, parentPort, receiveMessageOnPort, Worker, workerData, type MessagePort, type WorkerOptions } from 'node:worker_threads';

/** Marks a thread whose modules load through tsx, so it can import `.ts` kernel modules as well. */
const TSX_LOADED = Symbol.for('pxl.tsx');

let tsxApi: string | undefined;

/** The URL of tsx's ESM `register()` API, resolved on first use. */
function tsxUrl(): string {
  tsxApi ??= pathToFileURL(join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;
  return tsxApi;
}

/**
 * Registers tsx in the calling thread, once, so that import() takes TypeScript modules too: kernel
 * modules a user writes in TypeScript, on the host and in every core.
 */
export async function registerTypeScript(): Promise<void> {
  const g = globalThis as Record<symbol, unknown>;
  if (g[TSX_LOADED] === true) return;
  const { register } = (await import(tsxUrl())) as { register: () => unknown };
  register();
  g[TSX_LOADED] = true;
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

/** The channel between the host and a core: Node's worker_threads one (global MessageChannel is the same class). */
export { MessageChannel };

/**
 * Inside a thread: what it was started with (`workerData` of {@link startThread}'s options).
 * A promise because a browser's worker receives it as its first message.
 */
export async function threadData(): Promise<unknown> {
  return workerData;
}

/** Inside a thread: posts `msg` to the thread that started it. */
export function postToHost(msg: unknown): void {
  parentPort!.postMessage(msg);
}

/**
 * Inside a thread: the messages arriving on `port`, taken one at a time. In Node `take` sees every
 * message posted before the host's last Atomics store that this thread has observed (Node's ports
 * deliver synchronously through receiveMessageOnPort), so `complete` is true and `arrival` is never
 * needed; a browser's port delivers only as events, between turns of the event loop.
 */
export interface PortInbox {
  /** The next message already here, or undefined. */
  take(): unknown;
  /** True where `take` returning undefined means every message posted so far has been taken. */
  readonly complete: boolean;
  /** Resolves when another message may be here. */
  arrival(): Promise<void>;
}

export function portInbox(port: MessagePort): PortInbox {
  return {
    take: () => receiveMessageOnPort(port)?.message,
    complete: true,
    arrival: () => Promise.resolve(),
  };
}

/**
 * Threads in a browser: module Web Workers. Same exports as thread.ts (Node's worker_threads),
 * so the CPU backend's core pool and core loop run unchanged on either.
 *
 * What differs, and how it is bridged:
 * - A Web Worker gets no `workerData`: {@link startThread} posts it as the worker's first
 *   message, and {@link threadData} inside the worker waits for that message.
 * - A Web Worker does not exit when its code fails: an uncaught error (or an unhandled rejection,
 *   which {@link threadData} turns into one) fires `error` on the Worker object. A thread here is
 *   then terminated and reported as exited with code 1, which is what the core pool treats as a
 *   dead core.
 * - A browser's MessagePort has no synchronous receive: {@link portInbox} queues what arrives as
 *   events, and the core loop awaits `arrival` until it has what the host announced.
 * - Nothing keeps a page alive, so `ref` and `unref` do nothing.
 */
import { BUNDLE_FILES_ADVICE } from './bundleFiles.browser.js';

/**
 * A page has no tsx: kernel modules in TypeScript must be served compiled to JavaScript.
 * @throws (rejects) Error always.
 */
export async function registerTypeScript(): Promise<void> {
  throw new Error('a browser cannot import a TypeScript module: serve the kernel module compiled to JavaScript (.js)');
}

/** The URL of the thread entry `name` beside `base` (the caller's `import.meta.url`): `name.js` in the bundle. */
export function threadEntry(base: string, name: string): URL {
  return new URL(`./${name}.js`, base);
}

/**
 * The parts of the browser's Worker, MessageEvent and MessagePort used here, declared locally:
 * pxl type-checks against Node's types only, without the DOM library.
 */
interface WebWorker {
  addEventListener(type: 'message' | 'messageerror', listener: (e: { readonly data: unknown }) => void): void;
  addEventListener(type: 'error', listener: (e: { readonly message?: string; preventDefault(): void }) => void): void;
  postMessage(msg: unknown, transfer: readonly unknown[]): void;
  terminate(): void;
}
type WorkerCtor = new (url: URL, options: { type: 'module' }) => WebWorker;
interface WebPort {
  onmessage: ((e: { readonly data: unknown }) => void) | null;
}

/** What {@link startThread} takes: the subset of Node's WorkerOptions that means something here. */
export interface ThreadOptions {
  readonly workerData?: unknown;
  readonly transferList?: readonly unknown[];
  /** Heap limits have no browser equivalent and are ignored. */
  readonly resourceLimits?: unknown;
}

type Listener = (value: never) => void;

/** A module Web Worker behind the part of Node's Worker interface that the core pool uses. */
export class BrowserThread {
  readonly #worker: WebWorker;
  readonly #listeners = new Map<string, Listener[]>();
  #exited = false;

  constructor(entry: URL, options: ThreadOptions) {
    this.#worker = new (globalThis as unknown as { Worker: WorkerCtor }).Worker(entry, { type: 'module' });
    this.#worker.addEventListener('message', (e) => this.#emit('message', e.data));
    this.#worker.addEventListener('messageerror', () => this.#fail(new Error('a message could not be deserialized')));
    this.#worker.addEventListener('error', (e) => {
      e.preventDefault();
      // A script that fails to load fires a plain Event, without a message.
      const said = typeof e.message === 'string' && e.message !== '' ? e.message : undefined;
      this.#fail(new Error(said ?? `the worker script ${entry.href} failed to load or failed while starting; ${BUNDLE_FILES_ADVICE}`));
    });
    this.#worker.postMessage(options.workerData, [...(options.transferList ?? [])]);
  }

  on(event: 'message' | 'error' | 'exit', listener: (value: never) => void): this {
    const list = this.#listeners.get(event) ?? [];
    list.push(listener);
    this.#listeners.set(event, list);
    return this;
  }

  postMessage(msg: unknown, transfer: readonly unknown[] = []): void {
    this.#worker.postMessage(msg, transfer);
  }

  ref(): void {}

  unref(): void {}

  /** Ends the worker at once; no `exit` event follows (as in Node, where the pool ignores it while closing). */
  async terminate(): Promise<number> {
    this.#exited = true;
    this.#worker.terminate();
    return 1;
  }

  #fail(error: Error): void {
    if (this.#exited) return;
    this.#emit('error', error);
    this.#exited = true;
    this.#worker.terminate();
    this.#emit('exit', 1);
  }

  #emit(event: string, value: unknown): void {
    for (const listener of this.#listeners.get(event) ?? []) (listener as (v: unknown) => void)(value);
  }
}

/** Starts `entry` (from {@link threadEntry}) as a module Web Worker. */
export function startThread(entry: URL, options: ThreadOptions): BrowserThread {
  return new BrowserThread(entry, options);
}

/** The browser's MessageChannel, under the name the core pool imports. */
const MessageChannelCtor = globalThis.MessageChannel;
export { MessageChannelCtor as MessageChannel };

interface WorkerScope {
  addEventListener(type: 'message', listener: (e: { readonly data: unknown }) => void, options?: { once: boolean }): void;
  addEventListener(type: 'unhandledrejection', listener: (e: { readonly reason: unknown }) => void): void;
  postMessage(msg: unknown): void;
}

const scope = globalThis as unknown as WorkerScope;

/**
 * Inside a worker: its start data, the first message the page posts to it. Listening starts when
 * this is called, which the core's module does before its first `await`, so the message (queued
 * until the module has run) cannot be missed. An unhandled rejection from then on is rethrown as
 * an uncaught error, so that the page sees the core die.
 */
export function threadData(): Promise<unknown> {
  scope.addEventListener('unhandledrejection', (e) => {
    throw e.reason;
  });
  return new Promise((resolve) => scope.addEventListener('message', (e) => resolve(e.data), { once: true }));
}

/** Inside a worker: posts `msg` to the page. */
export function postToHost(msg: unknown): void {
  scope.postMessage(msg);
}

/** Inside a thread: the messages arriving on a port (see thread.ts). */
export interface PortInbox {
  take(): unknown;
  readonly complete: boolean;
  arrival(): Promise<void>;
}

/** Queues `port`'s message events; `arrival` resolves at the next one. */
export function portInbox(port: unknown): PortInbox {
  const queue: unknown[] = [];
  let wake: (() => void) | undefined;
  (port as WebPort).onmessage = (e) => {
    queue.push(e.data);
    wake?.();
    wake = undefined;
  };
  return {
    take: () => queue.shift(),
    complete: false,
    arrival: () => (queue.length > 0 ? Promise.resolve() : new Promise<void>((resolve) => (wake = resolve))),
  };
}

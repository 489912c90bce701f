import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MessageChannel, Worker, type MessagePort, type ResourceLimits } from 'node:worker_threads';
import * as L from './layout.js';
import type { CoreInit, CoreToHost, HostToCore } from './messages.js';

/**
 * The worker threads behind the MU cores, seen from the host: starting them, posting port
 * messages, ringing doorbells, and replacing a core whose thread died. Which launches a dead core
 * took down is the dispatcher's business; the pool only reports the death.
 */

const fromSource = import.meta.url.endsWith('.ts');
const workerEntry = new URL(fromSource ? './worker.ts' : './worker.js', import.meta.url);
const tsxUrl = pathToFileURL(join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;

/** Worker source used when pxl itself runs from TypeScript sources (tests): register tsx first. */
const sourceBootstrap = `
const { workerData } = require('node:worker_threads');
import(workerData.tsxUrl).then((m) => { m.register(); globalThis[Symbol.for('pxl.tsx')] = true; return import(${JSON.stringify(workerEntry.href)}); });
`;

export interface CorePoolEvents {
  onMessage(core: number, msg: CoreToHost): void;
  /** A core's thread exited unexpectedly; it is already being replaced. */
  onCoreDeath(core: number, reason: string, cause: unknown): void;
}

interface Core {
  worker: Worker;
  port: MessagePort;
  ready: Promise<void>;
}

export class CorePool {
  readonly cores: number;
  readonly ctl: Int32Array;
  readonly #ctlSab: SharedArrayBuffer;
  readonly #argsSab: SharedArrayBuffer;
  readonly #limits: ResourceLimits | undefined;
  readonly #events: CorePoolEvents;
  readonly #modules: { id: number; url: string }[] = [];
  readonly #buffers = new Map<number, SharedArrayBuffer>();
  readonly #cores: Core[] = [];
  /** The trace ring while tracing is on, handed to replacement cores too. */
  #trace: HostToCore | undefined;
  #closing = false;
  #refs = 0;

  constructor(cores: number, argsSab: SharedArrayBuffer, events: CorePoolEvents, limits?: ResourceLimits) {
    this.cores = cores;
    this.#ctlSab = new SharedArrayBuffer(L.controlWords(cores) * 4);
    this.ctl = new Int32Array(this.#ctlSab);
    this.#argsSab = argsSab;
    this.#events = events;
    this.#limits = limits;
    for (let c = 0; c < cores; c++) Atomics.store(this.ctl, L.coreBase(c) + L.C_CURRENT, -1);
  }

  /** Starts every core and resolves once all are waiting for work. */
  async start(): Promise<void> {
    for (let c = 0; c < this.cores; c++) this.#cores.push(this.#spawn(c));
    await Promise.all(this.#cores.map((c) => c.ready));
    this.#applyRef();
  }

  /** Posts a message to every core and makes sure each drains it before its next entry. */
  broadcast(msg: HostToCore): void {
    if (msg.type === 'buffer') this.#buffers.set(msg.id, msg.sab);
    else if (msg.type === 'free') this.#buffers.delete(msg.id);
    else if (msg.type === 'trace') this.#trace = msg.sab === null ? undefined : msg;
    else this.#modules.push({ id: msg.id, url: msg.url });
    for (const c of this.#cores) c.port.postMessage(msg);
    Atomics.add(this.ctl, L.H_EPOCH, 1);
    for (let c = 0; c < this.cores; c++) this.ring(c);
  }

  ring(core: number): void {
    const base = L.coreBase(core);
    Atomics.add(this.ctl, base + L.C_DOORBELL, 1);
    if (Atomics.load(this.ctl, base + L.C_SLEEPING) !== 0) Atomics.notify(this.ctl, base + L.C_DOORBELL, 1);
  }

  /**
   * Keeps the process alive while work is in flight: a pending `Atomics.waitAsync` alone does not,
   * and idle cores must not hold the process open after the user is done.
   */
  hold(): void {
    if (this.#refs++ === 0) this.#applyRef();
  }

  release(): void {
    if (--this.#refs === 0) this.#applyRef();
  }

  async close(): Promise<void> {
    this.#closing = true;
    Atomics.store(this.ctl, L.H_SHUTDOWN, 1);
    for (let c = 0; c < this.cores; c++) this.ring(c);
    await Promise.all(this.#cores.map((c) => c.worker.terminate()));
  }

  #applyRef(): void {
    for (const c of this.#cores) {
      if (this.#refs > 0) c.worker.ref();
      else c.worker.unref();
    }
  }

  #spawn(core: number): Core {
    const { port1, port2 } = new MessageChannel();
    const init: CoreInit = {
      core,
      cores: this.cores,
      ctl: this.#ctlSab,
      args: this.#argsSab,
      port: port2,
      modules: [...this.#modules],
      buffers: [...this.#buffers],
      tsxUrl,
    };
    const options = { workerData: init, transferList: [port2], ...(this.#limits === undefined ? {} : { resourceLimits: this.#limits }) };
    const worker = fromSource ? new Worker(sourceBootstrap, { ...options, eval: true }) : new Worker(workerEntry, options);
    let lastError: unknown;
    const ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (msg: CoreToHost) => {
        if (msg.type === 'ready') resolve();
        else this.#events.onMessage(core, msg);
      });
      worker.on('error', (err) => {
        lastError = err;
        reject(err);
      });
    });
    ready.catch(() => undefined);
    // Drained at the core's first EPOCH check, which a new core always makes.
    if (this.#trace !== undefined) port1.postMessage(this.#trace);
    worker.on('exit', (code) => {
      if (this.#closing) return;
      const oom = (lastError as { code?: string } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
      const reason = oom ? 'its worker thread ran out of memory' : lastError !== undefined ? `its worker thread threw ${String(lastError)}` : `its worker thread exited with code ${code}`;
      const replacement = this.#spawn(core);
      this.#cores[core] = replacement;
      this.#applyRef();
      this.#events.onCoreDeath(core, reason, lastError);
    });
    return { worker, port: port1, ready };
  }
}

import type { MessagePort, ResourceLimits, Worker } from 'node:worker_threads';
import { invariant } from '../../core/errors.js';
import { MessageChannel, startThread, threadEntry } from '../../platform/thread.js';
import * as L from './layout.js';
import type { KernelInfo } from '../backend.js';
import type { CoreInit, CoreToHost, HostToCore, PostedToCore } from './messages.js';

/**
 * The worker threads behind the MU cores, seen from the host: starting them, posting port
 * messages, ringing doorbells, and replacing a core whose thread died. Which launches a dead core
 * took down is the dispatcher's business; the pool only reports the death.
 */

const workerEntry = threadEntry(import.meta.url, 'worker');

export interface CorePoolEvents {
  onMessage(core: number, msg: CoreToHost): void;
  /**
   * A core's thread exited unexpectedly. Called before its replacement starts, so the replacement
   * resumes the core's ring from wherever this handler leaves TAIL.
   */
  onCoreDeath(core: number, reason: string, cause: unknown): void;
  /**
   * A core (first or replacement) has imported `modules`, those the pool knew when it started the
   * core, and is waiting for work. Modules posted later it answers one by one.
   */
  onCoreReady(core: number, modules: readonly { readonly id: number; readonly kernels: KernelInfo[] }[]): void;
  /** A core kept dying before it was ready; it is given up and will not be replaced again. */
  onCoreLost(core: number, reason: string, cause: unknown): void;
}

/**
 * Tries to start a replacement that dies before it is ready (it cannot import the kernel modules,
 * say) before the core is given up; waits between them grow from RESTART_BACKOFF_MS, doubling.
 * A core that dies while running a kernel is replaced at once: its launch took the blame.
 */
export const MAX_START_FAILURES = 3;
const RESTART_BACKOFF_MS = 25;

interface Core {
  worker: Worker;
  port: MessagePort;
  ready: Promise<void>;
  isReady: boolean;
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
  /** Per core: replacements in a row that died before they were ready. */
  readonly #startFailures: number[];
  readonly #lost = new Set<number>();
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();

  constructor(cores: number, argsSab: SharedArrayBuffer, events: CorePoolEvents, limits?: ResourceLimits) {
    invariant(cores <= L.MAX_CORES, `a core pool has at most ${L.MAX_CORES} cores, got ${cores}`);
    this.cores = cores;
    this.#ctlSab = new SharedArrayBuffer(L.controlWords(cores) * 4);
    this.ctl = new Int32Array(this.#ctlSab);
    this.#argsSab = argsSab;
    this.#events = events;
    this.#limits = limits;
    this.#startFailures = new Array<number>(cores).fill(0);
    for (let c = 0; c < cores; c++) Atomics.store(this.ctl, L.coreBase(c) + L.C_CURRENT, -1);
  }

  /** Starts every core and resolves once all are waiting for work. */
  async start(): Promise<void> {
    for (let c = 0; c < this.cores; c++) this.#cores.push(this.#spawn(c));
    try {
      await Promise.all(this.#cores.map((c) => c.ready));
    } catch (err) {
      await this.close();
      throw err;
    }
    this.#applyRef();
  }

  /** @internal For tests that end a core's thread from outside: the worker thread behind `core` now. */
  workerOf(core: number): Worker {
    const entry = this.#cores[core];
    invariant(entry !== undefined, `no MU core ${core}`);
    return entry.worker;
  }

  /** Whether `core` was given up after its replacements kept dying. */
  isLost(core: number): boolean {
    return this.#lost.has(core);
  }

  /**
   * Stops handing a module to replacement cores: its import killed a core, so every replacement
   * would die the same way.
   */
  forgetModule(id: number): void {
    const i = this.#modules.findIndex((m) => m.id === id);
    if (i >= 0) this.#modules.splice(i, 1);
  }

  /** Posts a message to every core and makes sure each drains it before its next entry. */
  broadcast(msg: HostToCore): void {
    if (msg.type === 'buffer') this.#buffers.set(msg.id, msg.sab);
    else if (msg.type === 'free') this.#buffers.delete(msg.id);
    else if (msg.type === 'trace') this.#trace = msg.sab === null ? undefined : msg;
    else this.#modules.push({ id: msg.id, url: msg.url });
    // Only this thread moves EPOCH, so the value the bump below makes is known before it.
    const posted: PostedToCore = { ...msg, epoch: Atomics.load(this.ctl, L.H_EPOCH) + 1 };
    this.#cores.forEach((c, core) => {
      if (!this.#lost.has(core)) c.port.postMessage(posted);
    });
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
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
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
      epoch: Atomics.load(this.ctl, L.H_EPOCH),
    };
    const options = { workerData: init, transferList: [port2], ...(this.#limits === undefined ? {} : { resourceLimits: this.#limits }) };
    const worker = startThread(workerEntry, options);
    let lastError: unknown;
    const entry: Core = { worker, port: port1, ready: Promise.resolve(), isReady: false };
    entry.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (msg: CoreToHost) => {
        if (msg.type === 'ready') {
          entry.isReady = true;
          this.#startFailures[core] = 0;
          this.#events.onCoreReady(core, msg.modules);
          resolve();
        } else {
          this.#events.onMessage(core, msg);
        }
      });
      worker.on('error', (err) => {
        lastError = err;
        reject(err);
      });
    });
    entry.ready.catch(() => undefined);
    // Drained at the core's first EPOCH check, which a new core always makes.
    if (this.#trace !== undefined) port1.postMessage(this.#trace);
    worker.on('exit', (code) => {
      if (this.#closing) return;
      const oom = (lastError as { code?: string } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
      const reason = oom ? 'its worker thread ran out of memory' : lastError !== undefined ? `its worker thread threw ${String(lastError)}` : `its worker thread exited with code ${code}`;
      this.#events.onCoreDeath(core, reason, lastError);
      if (entry.isReady) return this.#replace(core);
      // Died while starting: the next replacement would most likely die the same way.
      const failures = ++this.#startFailures[core]!;
      if (failures >= MAX_START_FAILURES) {
        this.#lost.add(core);
        this.#events.onCoreLost(core, `its replacement died while starting ${failures} times in a row (last: ${reason})`, lastError);
        return;
      }
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        if (!this.#closing) this.#replace(core);
      }, RESTART_BACKOFF_MS * 2 ** (failures - 1));
      this.#timers.add(timer);
    });
    return entry;
  }

  #replace(core: number): void {
    this.#cores[core] = this.#spawn(core);
    this.#applyRef();
  }
}

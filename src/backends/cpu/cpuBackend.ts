import type { ResourceLimits, Worker } from 'node:worker_threads';
import { ModuleLoadError, StateError, type PxlError } from '../../core/errors.js';
import { totalCores, type Topology } from '../../core/topology.js';
import type { Backend, BatchRecord, KernelInfo, LaunchArg, LaunchHandle, LaunchRequest, ModuleInfo } from '../backend.js';
import { HostMemory } from '../hostMemory.js';
import { CorePool } from './corePool.js';
import { Dispatcher } from './dispatcher.js';
import * as L from './layout.js';

export interface CpuBackendOptions {
  readonly topology: Topology;
  readonly memorySize: number;
  /** Heap limits of each core's worker thread (a core that exceeds them dies and is replaced). */
  readonly coreResourceLimits?: ResourceLimits;
}

interface PendingModule {
  readonly url: string;
  readonly waiting: Set<number>;
  kernels: KernelInfo[] | undefined;
  error: string | undefined;
  /** The first failing core's own error, stack included, for the ModuleLoadError's `cause`. */
  cause?: Error;
  /** Rejects the load with this error itself (the Context was destroyed). */
  fatal?: PxlError;
  settle: () => void;
}

/**
 * The CPU backend: one worker thread per MU core, device memory as SharedArrayBuffers (zero copies
 * between host and cores), launches through the Atomics dispatcher.
 */
export class CpuBackend implements Backend {
  readonly name = 'cpu';
  readonly topology: Topology;
  readonly memorySize: number;
  readonly #pool: CorePool;
  readonly #dispatcher: Dispatcher;
  readonly #memory: HostMemory;
  readonly #pending = new Map<number, PendingModule>();
  #trace: { ring: Float64Array; capacity: number; drained: number[] } | undefined;
  #nextModule = 1;

  private constructor(options: CpuBackendOptions) {
    this.topology = options.topology;
    this.memorySize = options.memorySize;
    this.#memory = new HostMemory(options.memorySize, (bytes) => new SharedArrayBuffer(bytes));
    const args = new SharedArrayBuffer(L.LAUNCH_SLOTS * L.ARGS_CAPACITY);
    this.#pool = new CorePool(totalCores(options.topology), args, {
      onMessage: (core, msg) => {
        if (msg.type === 'module') this.#moduleAnswer(core, msg.id, msg.kernels, msg.error?.message, msg.error);
        else this.#dispatcher.onMessage(msg);
      },
      onCoreDeath: (core, reason, cause) => {
        const inKernel = Atomics.load(this.#pool.ctl, L.coreBase(core) + L.C_CURRENT) >= 0;
        this.#dispatcher.onCoreDeath(core, reason, cause);
        // A core that dies between entries died importing the modules it had not answered for
        // (a top-level process.exit, say): those loads fail, and replacements never import them,
        // or every replacement would die the same way. A core that died in a kernel is not their
        // fault: its replacement imports them at start and answers for them with 'ready'.
        if (inKernel) return;
        for (const [id, pending] of this.#pending) {
          if (!pending.waiting.has(core)) continue;
          this.#pool.forgetModule(id);
          this.#moduleAnswer(core, id, undefined, `an MU core died while importing it: ${reason}`);
        }
      },
      onCoreReady: (core, modules) => {
        // A replacement imports the modules it was started with before it answers 'ready': a load
        // still waiting on this core (broadcast while the core was down) has its answer here.
        for (const m of modules) this.#moduleAnswer(core, m.id, m.kernels, undefined);
      },
      onCoreLost: (core, reason, cause) => {
        this.#dispatcher.onCoreLost(core, reason, cause);
        for (const [id] of this.#pending) this.#moduleAnswer(core, id, undefined, `an MU core was given up: ${reason}`);
      },
    }, options.coreResourceLimits);
    this.#dispatcher = new Dispatcher(this.#pool, args);
  }

  static async create(options: CpuBackendOptions): Promise<CpuBackend> {
    const backend = new CpuBackend(options);
    await backend.#pool.start();
    return backend;
  }

  get allocatedBytes(): number {
    return this.#memory.allocatedBytes;
  }

  allocate(bytes: number): number {
    const { id, buffer } = this.#memory.allocate(bytes);
    this.#pool.broadcast({ type: 'buffer', id, sab: buffer });
    return id;
  }

  adopt(buffer: SharedArrayBuffer): number {
    const id = this.#memory.adopt(buffer);
    this.#pool.broadcast({ type: 'buffer', id, sab: buffer });
    return id;
  }

  free(buffer: number): void {
    this.#memory.free(buffer);
    this.#pool.broadcast({ type: 'free', id: buffer });
  }

  async write(buffer: number, byteOffset: number, src: Uint8Array): Promise<void> {
    this.#memory.write(buffer, byteOffset, src);
  }

  async read(buffer: number, byteOffset: number, dst: Uint8Array): Promise<void> {
    this.#memory.read(buffer, byteOffset, dst);
  }

  hostBuffer(buffer: number): SharedArrayBuffer | undefined {
    return this.#memory.buffers.get(buffer);
  }

  loadModule(url: string): Promise<ModuleInfo> {
    const id = this.#nextModule++;
    return new Promise<ModuleInfo>((resolve, reject) => {
      const pending: PendingModule = {
        url,
        waiting: new Set(Array.from({ length: this.#pool.cores }, (_, c) => c).filter((c) => !this.#pool.isLost(c))),
        kernels: undefined,
        error: undefined,
        settle: () => {
          this.#pending.delete(id);
          this.#pool.release();
          // A module that failed to load is never handed to a replacement core, which would die
          // importing it (or load it where its siblings did not).
          if (pending.error !== undefined) this.#pool.forgetModule(id);
          if (pending.fatal !== undefined) reject(pending.fatal);
          else if (pending.error !== undefined) reject(new ModuleLoadError(`cannot load kernel module ${url}: ${pending.error}`, pending.cause === undefined ? undefined : { cause: pending.cause }));
          else resolve({ id, url, kernels: pending.kernels ?? [] });
        },
      };
      this.#pending.set(id, pending);
      this.#pool.hold();
      this.#pool.broadcast({ type: 'module', id, url });
      if (pending.waiting.size === 0) {
        pending.error = 'every MU core was given up (their replacements kept dying while starting); create a new Context';
        pending.settle();
      }
    });
  }

  checkArgs(args: readonly LaunchArg[]): void {
    this.#dispatcher.encode(args);
  }

  launch(request: LaunchRequest): Promise<LaunchHandle> {
    return this.#dispatcher.launch(request);
  }

  setTracing(on: boolean): void {
    if (on === (this.#trace !== undefined)) return;
    const cores = this.#pool.cores;
    if (on) {
      // Records per core: enough for a launch's batches between drains, within 64 MiB in all.
      const capacity = Math.max(1024, Math.min(1 << 16, Math.floor((1 << 21) / cores)));
      const sab = new SharedArrayBuffer(cores * capacity * L.TRACE_RECORD * 8);
      this.#trace = { ring: new Float64Array(sab), capacity, drained: new Array<number>(cores).fill(0) };
      this.#pool.broadcast({ type: 'trace', sab, capacity });
      Atomics.store(this.#pool.ctl, L.H_TRACE, 1);
    } else {
      Atomics.store(this.#pool.ctl, L.H_TRACE, 0);
      this.#trace = undefined;
      this.#pool.broadcast({ type: 'trace', sab: null, capacity: 0 });
    }
  }

  drainTrace(): { records: BatchRecord[]; dropped: number } {
    const trace = this.#trace;
    const records: BatchRecord[] = [];
    let dropped = 0;
    if (trace === undefined) return { records, dropped };
    const { ring, capacity, drained } = trace;
    for (let core = 0; core < this.#pool.cores; core++) {
      const count = Atomics.load(this.#pool.ctl, L.coreBase(core) + L.C_TRACE_COUNT);
      let from = drained[core]!;
      if (count < from) from = 0; // the core restarted its ring (a replacement core)
      if (count - from > capacity) {
        dropped += count - from - capacity;
        from = count - capacity;
      }
      for (let k = from; k < count; k++) {
        const at = (core * capacity + (k % capacity)) * L.TRACE_RECORD;
        records.push({ launchId: ring[at]!, core, batch: ring[at + 1]!, start: ring[at + 2]!, end: ring[at + 3]! });
      }
      drained[core] = count;
    }
    return { records, dropped };
  }

  /**
   * @internal For tests of core deaths: the worker thread behind `core` (replaced when the core
   * dies) and the dispatcher's control words (layout.ts). Not part of the Backend interface.
   */
  coreInternals(core: number): { readonly worker: Worker; readonly ctl: Int32Array } {
    return { worker: this.#pool.workerOf(core), ctl: this.#pool.ctl };
  }

  describe(): Record<string, string | number> {
    return { backend: 'cpu', device: `${this.#pool.cores} worker threads over shared memory` };
  }

  async destroy(error?: PxlError): Promise<void> {
    await this.#pool.close();
    const closed = error ?? new StateError('the Context was destroyed while this launch was in flight');
    this.#dispatcher.close(closed);
    for (const pending of this.#pending.values()) {
      pending.fatal = closed;
      pending.settle();
    }
    this.#memory.clear();
  }

  #moduleAnswer(core: number, id: number, kernels: KernelInfo[] | undefined, error: string | undefined, reported?: { message: string; stack?: string }): void {
    const pending = this.#pending.get(id);
    if (pending === undefined || !pending.waiting.delete(core)) return;
    if (pending.error === undefined && reported !== undefined) {
      // The import failed in a core's thread and its error crossed as text: it is rebuilt with the
      // core's stack, which names the module's line that threw.
      pending.cause = new Error(reported.message);
      if (reported.stack !== undefined) pending.cause.stack = reported.stack;
    }
    pending.error ??= error;
    pending.kernels ??= kernels;
    if (pending.waiting.size === 0) pending.settle();
  }
}

/**
 * The CPU backend for a browser page without shared memory (not cross-origin isolated: no
 * SharedArrayBuffer, so no cores can share device memory with the page). Kernels run on the page's
 * own thread, batch by batch, in slices of about {@link SLICE_MS} that yield to the event loop in
 * between, so the page keeps painting and handling input while a computation runs.
 *
 * Why on the page's thread rather than in one worker with buffers transferred back and forth: a
 * pairwise run makes a launch per block and reads each block's result back right after, so a worker
 * would move every block's input and output across threads twice per launch (a transfer detaches the
 * page's copy, so buffers cannot stay on both sides), and it would need a second protocol beside the
 * Atomics one. Running here shares the kernels, their binding and the device memory layout with the
 * worker cores (binding.ts), so results are the same bit for bit; what it costs is throughput, one
 * core instead of all of them, which the isolation warning tells the page's author how to get back.
 * Measured in headless Chromium on 2 vCPUs, pdist of 1,500 PCFs of 20 breakpoints (float64): 101-116 ms
 * here against 55 ms on two workers of an isolated page, with the page's timers still firing every
 * 18-20 ms at most during the run (a slice, plus the batch that crosses its end).
 *
 * Device memory is plain ArrayBuffers, typed as the SharedArrayBuffers the Backend interface names:
 * every reader only makes typed-array views of them, which work over either.
 */
import { KernelError, ModuleLoadError, StateError, invariant, type PxlError } from '../../core/errors.js';
import type { Topology } from '../../core/topology.js';
import type { KernelDefinition } from '../../mu/kernel.js';
import { muState } from '../../mu/state.js';
import type { Backend, BatchRecord, LaunchArg, LaunchHandle, LaunchOutcome, LaunchRequest, ModuleInfo } from '../backend.js';
import { HostMemory } from '../hostMemory.js';
import { decodeArgs, encodeArgs } from '../cpu/argsCodec.js';
import { bindKernel, type BatchRunner } from '../cpu/binding.js';
import { loadFailure, moduleKernels } from '../cpu/moduleKernels.js';
import { isolationAdvice } from '../../platform/machine.js';

/** Longest stretch of kernel batches between two yields to the page's event loop. */
export const SLICE_MS = 8;

export interface PageBackendOptions {
  readonly topology: Topology;
  readonly memorySize: number;
}

interface Flight {
  readonly done: Promise<LaunchOutcome>;
  cancelled: boolean;
  issued: number;
  finished: number;
}

const now = (): number => performance.now();

/** The isolation advice goes to the console once per page, at the first Context that runs here. */
let warned = false;

/**
 * Resolves at a later turn of the event loop, behind the tasks already queued (timers, input,
 * messages): a message to itself, which browsers do not clamp as they clamp nested timeouts to
 * 4 ms. Not `scheduler.yield()`: Chromium runs its continuation ahead of other queued tasks, so a
 * page's timers starved while kernels ran (measured: no setTimeout callback ran during a 130 ms pdist).
 */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel();
    (port1 as unknown as { onmessage: (() => void) | null }).onmessage = () => {
      port1.close();
      resolve();
    };
    port2.postMessage(0);
  });
}

export class PageBackend implements Backend {
  readonly name = 'cpu';
  readonly topology: Topology;
  readonly memorySize: number;
  readonly #memory: HostMemory;
  readonly #modules = new Map<number, KernelDefinition[]>();
  readonly #flights = new WeakMap<LaunchHandle, Flight>();
  #nextModule = 1;
  #closed: PxlError | undefined;
  #trace: BatchRecord[] | undefined;
  /** When the current slice of batches began; batches run until it is SLICE_MS old. */
  #sliceStart = now();

  constructor(options: PageBackendOptions) {
    this.topology = options.topology;
    this.memorySize = options.memorySize;
    this.#memory = new HostMemory(options.memorySize, (bytes) => new ArrayBuffer(bytes) as unknown as SharedArrayBuffer);
    const advice = isolationAdvice();
    if (advice !== undefined && !warned) {
      warned = true;
      console.warn(`pxl: ${advice}`);
    }
  }

  get allocatedBytes(): number {
    return this.#memory.allocatedBytes;
  }

  allocate(bytes: number): number {
    return this.#memory.allocate(bytes).id;
  }

  free(buffer: number): void {
    this.#memory.free(buffer);
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

  async loadModule(url: string): Promise<ModuleInfo> {
    if (this.#closed !== undefined) throw this.#closed;
    let ns: Record<string, unknown>;
    try {
      ns = (await import(/* @vite-ignore */ url)) as Record<string, unknown>;
    } catch (err) {
      throw new ModuleLoadError(`cannot load kernel module ${url}: ${loadFailure(err)}`, { cause: err });
    }
    const { kernels, infos } = moduleKernels(ns);
    const id = this.#nextModule++;
    this.#modules.set(id, kernels);
    return { id, url, kernels: infos };
  }

  checkArgs(args: readonly LaunchArg[]): void {
    encodeArgs(args);
  }

  async launch(request: LaunchRequest): Promise<LaunchHandle> {
    if (this.#closed !== undefined) throw this.#closed;
    const before = request.after === undefined ? undefined : this.#flights.get(request.after);
    if (request.after !== undefined && before === undefined) {
      throw new StateError(`launch of '${request.kernelName}': it was ordered after a launch of another backend or Context`);
    }
    const flight: Flight = { done: Promise.resolve({ kind: 'cancelled' }), cancelled: request.signal?.aborted === true, issued: 0, finished: 0 };
    const cancel = (): void => {
      flight.cancelled = true;
    };
    request.signal?.addEventListener('abort', cancel, { once: true });
    (flight as { done: Promise<LaunchOutcome> }).done = this.#run(request, flight, before).finally(() => request.signal?.removeEventListener('abort', cancel));
    const handle: LaunchHandle = { done: flight.done, cancel, progress: () => ({ issued: flight.issued, done: flight.finished }) };
    this.#flights.set(handle, flight);
    return handle;
  }

  setTracing(on: boolean): void {
    this.#trace = on ? (this.#trace ?? []) : undefined;
  }

  drainTrace(): { records: BatchRecord[]; dropped: number } {
    const records = this.#trace ?? [];
    if (this.#trace !== undefined) this.#trace = [];
    return { records, dropped: 0 };
  }

  describe(): Record<string, string | number> {
    return { backend: 'cpu', device: "the page's own thread (no shared memory: the page is not cross-origin isolated)" };
  }

  async destroy(error?: PxlError): Promise<void> {
    this.#closed = error ?? new StateError('the Context was destroyed while this launch was in flight');
    this.#memory.clear();
    this.#modules.clear();
  }

  /** Runs the launch's batches, core plan after core plan, yielding between slices. Never rejects. */
  async #run(request: LaunchRequest, flight: Flight, before: Flight | undefined): Promise<LaunchOutcome> {
    if (before !== undefined && (await before.done).kind !== 'completed') return { kind: 'cancelled' };
    if (flight.cancelled) return { kind: 'cancelled' };
    let run: BatchRunner | undefined;
    const sendOutside = muState.send;
    for (const plan of request.cores) {
      for (let k = 0; k < plan.batchCount; k++) {
        if (now() - this.#sliceStart >= SLICE_MS) {
          await nextTurn();
          this.#sliceStart = now();
        }
        if (this.#closed !== undefined) return { kind: 'failed', error: this.#closed };
        if (flight.cancelled) return { kind: 'cancelled' };
        const batch = plan.firstBatch + k * plan.batchStride;
        const start = batch * request.batchSize;
        const end = Math.min(start + request.batchSize, request.taskCount);
        flight.issued++;
        // Other launches run between slices: the kernel state is this launch's for this batch only.
        muState.taskCount = request.taskCount;
        muState.launch = request.launchId;
        muState.taskIdx = start;
        muState.send = (value) => request.onMessage(value);
        const t0 = this.#trace === undefined ? 0 : performance.timeOrigin + now();
        try {
          run ??= this.#bind(request);
          run(start, end);
        } catch (err) {
          const x = err instanceof Error ? err : new Error(String(err));
          return { kind: 'failed', error: new KernelError(request.kernelName, muState.taskIdx, x.message, x.stack) };
        } finally {
          muState.send = sendOutside;
        }
        this.#trace?.push({ launchId: request.launchId, core: plan.core, batch, start: t0, end: performance.timeOrigin + now() });
        flight.finished++;
      }
    }
    return { kind: 'completed' };
  }

  #bind(request: LaunchRequest): BatchRunner {
    const kernel = this.#modules.get(request.module)?.[request.kernel];
    invariant(kernel !== undefined, `kernel ${request.kernel} of module ${request.module} is not loaded`);
    muState.taskCount = request.taskCount;
    return bindKernel(kernel, decodeArgs(encodeArgs(request.args)), this.#memory.buffers);
  }
}

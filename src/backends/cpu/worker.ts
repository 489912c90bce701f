/**
 * One MU core: a worker thread that runs the batches the host enqueues on its ring. See layout.ts
 * for the shared-memory protocol. The loop blocks in `Atomics.wait` while idle; it yields to the
 * event loop only to import a kernel module.
 */
import type { KernelInfo } from '../backend.js';
import type { KernelDefinition } from '../../mu/kernel.js';
import { muState } from '../../mu/state.js';
import { decodeArgs } from './argsCodec.js';
import { bindKernel, type BatchRunner } from './binding.js';
import { collectGarbage } from '../../platform/garbage.js';
import { loadFailure, moduleKernels } from './moduleKernels.js';
import * as L from './layout.js';
import type { CoreInit, CoreToHost, PostedToCore } from './messages.js';
import { portInbox, postToHost, registerTypeScript, threadData } from '../../platform/thread.js';

const init = (await threadData()) as CoreInit;
const ctl = new Int32Array(init.ctl);
const argBytes = new Uint8Array(init.args);
const base = L.coreBase(init.core);
const buffers = new Map<number, SharedArrayBuffer>(init.buffers);
const modules = new Map<number, KernelDefinition[]>();
/** What `mu.message()` does while no kernel runs on this core: throw. */
const sendOutsideKernel = muState.send;

/**
 * Bound kernels per (Map, argument version), most recently used last; bounded so fresh Maps and
 * argument sets cannot grow it forever. The host reuses a version for bytes it saw recently. Each
 * binding holds views of the device buffers it was bound to (`buffers`, by id): when one is freed,
 * every binding that holds it goes (see drain), so that this core keeps no freed memory alive.
 */
const BOUND_CACHE = 256;
interface Binding {
  readonly run: BatchRunner;
  readonly buffers: readonly number[];
}
const bound = new Map<string, Binding>();

function post(msg: CoreToHost): void {
  postToHost(msg);
}

async function loadModule(id: number, url: string): Promise<KernelInfo[]> {
  if (/\.[mc]?ts$/.test(new URL(url).pathname)) await registerTypeScript();
  const ns = (await import(url)) as Record<string, unknown>;
  const { kernels, infos } = moduleKernels(ns);
  modules.set(id, kernels);
  return infos;
}

let epochSeen = -1;
const inbox = portInbox(init.port);
/** EPOCH as of the last broadcast taken from the port: messages up to there are handled. */
let epochTaken = init.epoch;

async function drain(): Promise<void> {
  // Read EPOCH before draining: a message posted after this read bumps it again.
  epochSeen = Atomics.load(ctl, L.H_EPOCH);
  for (;;) {
    const msg = inbox.take() as PostedToCore | undefined;
    if (msg === undefined) {
      // Node's port hands over everything posted before the bump this core saw; a browser's
      // delivers as events, so the core waits for the broadcast that made EPOCH what it read.
      if (inbox.complete || epochTaken >= epochSeen) break;
      await inbox.arrival();
      continue;
    }
    if (msg.epoch !== undefined) epochTaken = msg.epoch;
    if (msg.type === 'buffer') buffers.set(msg.id, msg.sab);
    else if (msg.type === 'free') forget(msg.id);
    else if (msg.type === 'trace') setTraceRing(msg.sab, msg.capacity);
    else if (!modules.has(msg.id)) {
      try {
        post({ type: 'module', id: msg.id, kernels: await loadModule(msg.id, msg.url) });
      } catch (err) {
        const stack = err instanceof Error ? err.stack : undefined;
        post({ type: 'module', id: msg.id, error: { message: loadFailure(err), ...(stack === undefined ? {} : { stack }) } });
      }
    }
  }
}

/**
 * Device memory freed since this core last collected garbage, and how much of it the core may
 * keep alive at most: its SharedArrayBuffer objects on this thread go only when this thread's
 * heap is collected (see garbage.ts).
 */
let freedSinceCollect = 0;
const COLLECT_AFTER_FREED = 16 * 1024 * 1024;
/**
 * Whether this core has run a launch, and whether it has collected since. A core's first launches
 * leave garbage it would otherwise keep for good (it sleeps in Atomics.wait, allocating nothing):
 * the kernel modules' loading, a WebAssembly module built and compiled, the first bindings. One
 * collection at the first idle moment after a launch frees it: measured with `pxl pdist` of 2,000
 * PCFs on 2 cores, whose first launch is the CLI's warm-up while it reads its input, the process's
 * peak RSS is about 1.2 MiB lower.
 */
let ranLaunch = false;
let collectedAfterLaunch = false;

/** Drops a freed device buffer and every binding that holds a view of it. */
function forget(id: number): void {
  freedSinceCollect += buffers.get(id)?.byteLength ?? 0;
  buffers.delete(id);
  for (const [key, binding] of bound) if (binding.buffers.includes(id)) bound.delete(key);
}

function runnerFor(sb: number, taskCount: number): BatchRunner {
  const key = `${ctl[sb + L.S_MAP_ID]!}/${ctl[sb + L.S_ARGS_VERSION]!}`;
  const hit = bound.get(key);
  if (hit !== undefined) {
    bound.delete(key);
    bound.set(key, hit);
    return hit.run;
  }
  const kernel = modules.get(ctl[sb + L.S_MODULE]!)?.[ctl[sb + L.S_KERNEL]!];
  if (kernel === undefined) throw new Error('kernel not loaded on this core');
  const slot = (sb - L.slotBase(init.cores, 0)) / L.SLOT_STRIDE;
  const at = slot * L.ARGS_CAPACITY;
  muState.taskCount = taskCount;
  const args = decodeArgs(argBytes.subarray(at, at + ctl[sb + L.S_ARGS_LENGTH]!));
  const run = bindKernel(kernel, args, buffers);
  bound.set(key, { run, buffers: args.flatMap((a) => (a.kind === 'constant' ? [] : [a.buffer])) });
  if (bound.size > BOUND_CACHE) bound.delete(bound.keys().next().value!);
  return run;
}

/** This core's part of the trace buffer while tracing is on. */
let traceRing: Float64Array | undefined;
let traceCapacity = 0;
let traceCount = 0;

function setTraceRing(sab: SharedArrayBuffer | null, capacity: number): void {
  traceRing = sab === null ? undefined : new Float64Array(sab, init.core * capacity * L.TRACE_RECORD * 8, capacity * L.TRACE_RECORD);
  traceCapacity = capacity;
  traceCount = 0;
  Atomics.store(ctl, base + L.C_TRACE_COUNT, 0);
}

function traceBatch(ring: Float64Array, launchId: number, batch: number, start: number, end: number): void {
  const at = (traceCount % traceCapacity) * L.TRACE_RECORD;
  ring[at] = launchId;
  ring[at + 1] = batch;
  ring[at + 2] = start;
  ring[at + 3] = end;
  Atomics.store(ctl, base + L.C_TRACE_COUNT, ++traceCount);
}

const now = (): number => performance.timeOrigin + performance.now();

/**
 * Blocks until the launch this slot runs after has finished on every core, then cancels this
 * launch if that one failed or was cancelled. See "Ordering after another launch" in layout.ts.
 */
function awaitPredecessor(sb: number): void {
  const after = ctl[sb + L.S_AFTER_SLOT]!;
  if (after < 0) return;
  const pb = L.slotBase(init.cores, after);
  const generation = ctl[sb + L.S_AFTER_GEN]!;
  for (;;) {
    const left = Atomics.load(ctl, pb + L.S_REMAINING);
    // Reused slot: the host completed the predecessor and already propagated its failure to us.
    if (Atomics.load(ctl, pb + L.S_GENERATION) !== generation) return;
    if (left === 0) break;
    // No spinning first: measured on 2 vCPUs, polling a few microseconds before sleeping doubled
    // a chain's cost per launch, because the polling core took the CPU its peer needed to finish.
    Atomics.wait(ctl, pb + L.S_REMAINING, left, L.AFTER_WAIT_MS);
  }
  const failed = Atomics.load(ctl, pb + L.S_FAILED) !== L.FAILED_NONE || Atomics.load(ctl, pb + L.S_CANCEL) !== 0;
  if (failed && Atomics.load(ctl, pb + L.S_GENERATION) === generation) Atomics.store(ctl, sb + L.S_CANCEL, 1);
}

function runEntry(pos: number): void {
  const e = L.entryIndex(init.cores, init.core, pos);
  const slot = ctl[e + L.E_SLOT]!;
  const first = ctl[e + L.E_FIRST_BATCH]!;
  const stride = ctl[e + L.E_BATCH_STRIDE]!;
  const count = ctl[e + L.E_BATCH_COUNT]!;
  const sb = L.slotBase(init.cores, slot);
  const generation = ctl[sb + L.S_GENERATION]!;
  const taskCount = ctl[sb + L.S_TASK_COUNT]!;
  const batchSize = ctl[sb + L.S_BATCH_SIZE]!;
  Atomics.store(ctl, base + L.C_ISSUED, 0);
  Atomics.store(ctl, base + L.C_DONE, 0);
  Atomics.store(ctl, base + L.C_CURRENT, pos);

  let posted = 0;
  muState.taskCount = taskCount;
  muState.send = (value) => {
    post({ type: 'message', slot, generation, value });
    posted++;
  };
  let run: BatchRunner | undefined;
  let issued = 0;
  let done = 0;
  // Decided once per entry: with tracing off the loop takes no timestamps.
  const ring = Atomics.load(ctl, L.H_TRACE) !== 0 ? traceRing : undefined;
  const launchId = ctl[sb + L.S_LAUNCH_ID]!;
  muState.launch = launchId;
  awaitPredecessor(sb);
  for (let k = 0; k < count; k++) {
    if (Atomics.load(ctl, sb + L.S_CANCEL) !== 0) break;
    Atomics.store(ctl, base + L.C_ISSUED, (issued = k + 1));
    const batch = first + k * stride;
    const start = batch * batchSize;
    const end = Math.min(start + batchSize, taskCount);
    muState.taskIdx = start;
    const t0 = ring === undefined ? 0 : now();
    try {
      run ??= runnerFor(sb, taskCount);
      run(start, end);
      if (ring !== undefined) traceBatch(ring, launchId, batch, t0, now());
    } catch (err) {
      const x = err instanceof Error ? err : new Error(String(err));
      post({ type: 'kernelError', slot, generation, taskIdx: muState.taskIdx, message: x.message, ...(x.stack === undefined ? {} : { stack: x.stack }) });
      posted++;
      Atomics.compareExchange(ctl, sb + L.S_FAILED, L.FAILED_NONE, L.FAILED_KERNEL);
      Atomics.store(ctl, sb + L.S_CANCEL, 1);
      break;
    }
    Atomics.store(ctl, base + L.C_DONE, (done = k + 1));
  }
  // A message sent after this entry (a module's top level, a timer) belongs to no launch.
  muState.send = sendOutsideKernel;
  if (posted > 0) Atomics.add(ctl, sb + L.S_MESSAGES, posted);
  Atomics.store(ctl, e + L.E_ISSUED, issued);
  Atomics.store(ctl, e + L.E_DONE, done);
  // In this order, so that a death between any two steps leaves a state the host can repair (see
  // the launch slot protocol in layout.ts): CURRENT still names the entry until it is counted off.
  Atomics.store(ctl, base + L.C_TAIL, pos + 1);
  countOff(sb, slot);
  Atomics.store(ctl, base + L.C_CURRENT, -1);
}

/** This core's word and bit in a slot's core mask, and that word's bit in REMAINING. */
const maskWord = Math.floor(init.core / L.MASK_BITS);
const maskBit = 1 << (init.core % L.MASK_BITS);
const wordBit = 1 << maskWord;

/** Clears this core's bit of the launch in `slot`; whoever empties REMAINING wakes the host. */
function countOff(sb: number, slot: number): void {
  if (Atomics.and(ctl, L.maskBase(init.cores, slot) + maskWord, ~maskBit) !== maskBit) return;
  if (Atomics.and(ctl, sb + L.S_REMAINING, ~wordBit) === wordBit) Atomics.notify(ctl, sb + L.S_REMAINING);
}

async function main(): Promise<void> {
  const loaded: { id: number; kernels: KernelInfo[] }[] = [];
  for (const m of init.modules) loaded.push({ id: m.id, kernels: await loadModule(m.id, m.url) });
  post({ type: 'ready', modules: loaded });
  let tail = Atomics.load(ctl, base + L.C_TAIL);
  for (;;) {
    const bell = Atomics.load(ctl, base + L.C_DOORBELL);
    if (Atomics.load(ctl, L.H_SHUTDOWN) !== 0) break;
    // HEAD before EPOCH: the host bumps EPOCH for a new buffer before it publishes a launch that
    // uses it, so a core that sees the launch sees the bump too, and drains before it runs it.
    const head = Atomics.load(ctl, base + L.C_HEAD);
    if (Atomics.load(ctl, L.H_EPOCH) !== epochSeen) {
      await drain();
      continue;
    }
    if (head !== tail) {
      runEntry(tail);
      tail++;
      ranLaunch = true;
      continue;
    }
    // Idle: a collection now delays no launch that is already waiting.
    if (freedSinceCollect >= COLLECT_AFTER_FREED || (ranLaunch && !collectedAfterLaunch)) {
      freedSinceCollect = 0;
      collectedAfterLaunch = true;
      collectGarbage();
      continue;
    }
    Atomics.store(ctl, base + L.C_SLEEPING, 1);
    Atomics.wait(ctl, base + L.C_DOORBELL, bell);
    Atomics.store(ctl, base + L.C_SLEEPING, 0);
  }
  init.port.close();
}

await main();

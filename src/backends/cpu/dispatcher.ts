import { CoreDiedError, KernelError, StateError, type PxlError } from '../../core/errors.js';
import type { LaunchArg, LaunchHandle, LaunchOutcome, LaunchRequest } from '../backend.js';
import { encodeArgs, sameBytes } from './argsCodec.js';
import { countOffDead, setCoreMask } from './coreMask.js';
import type { CorePool } from './corePool.js';
import * as L from './layout.js';
import type { CoreToHost } from './messages.js';

/**
 * Host side of the Atomics dispatcher: fills a launch slot, enqueues one ring entry per core of the
 * plan, and turns the slot's counters back into an outcome. Runs on the main thread only and never
 * blocks it: completion is awaited with `Atomics.waitAsync`.
 */

interface Flight {
  readonly request: LaunchRequest;
  readonly slot: number;
  readonly generation: number;
  /** Ring position of this launch on each core of the plan (same order as request.cores). */
  readonly positions: number[];
  cancelled: boolean;
  kernelError: PxlError | undefined;
  diedError: PxlError | undefined;
  received: number;
  onReceived: (() => void) | undefined;
  /** Progress once the launch has finished, taken before its slot and ring entries are reused. */
  final: { issued: number; done: number } | undefined;
  /** The launch this one runs after (request.after), while it is known to this dispatcher. */
  readonly after: Flight | undefined;
  /** Launches in flight that run after this one; told of its failure before its slot is reused. */
  readonly dependents: Flight[];
  /** How the launch ended, once it has. */
  outcome: LaunchOutcome | undefined;
  /** Settles with `outcome`; set as soon as the launch is published. */
  done: Promise<LaunchOutcome>;
}

/** Placeholder for Flight.done until #complete has started. */
const NOT_DONE: Promise<LaunchOutcome> = new Promise(() => {});

/** What a launch waiting for a slot gets instead of one: the dispatcher closed, or its signal aborted. */
const CLOSED = -1;
const WITHDRAWN = -2;

/** The handle of a launch withdrawn before it was published: no core ever saw it. */
function cancelledHandle(): LaunchHandle {
  return { done: Promise.resolve({ kind: 'cancelled' }), cancel: () => undefined, progress: () => ({ issued: 0, done: 0 }) };
}

export class Dispatcher {
  readonly #pool: CorePool;
  readonly #ctl: Int32Array;
  readonly #args: Uint8Array;
  readonly #free: number[] = [];
  readonly #waiters: ((slot: number) => void)[] = [];
  readonly #flights = new Map<number, Flight>();
  /** The flight behind each handle this dispatcher gave out, so a later launch can run after it. */
  readonly #byHandle = new WeakMap<LaunchHandle, Flight>();
  /** Per Map, its most recent distinct argument encodings (newest last), each with its version. */
  readonly #argsSeen = new WeakMap<object, { bytes: Uint8Array; version: number }[]>();
  /** Encodings made by `encode` (at execute), reused by `launch` so arguments are encoded once. */
  readonly #encoded = new WeakMap<readonly LaunchArg[], Uint8Array>();
  #argsVersion = 0;
  #closed: PxlError | undefined;
  /** Cores given up (see onCoreLost), with the error every launch that needs one fails with. */
  readonly #lost = new Map<number, CoreDiedError>();

  constructor(pool: CorePool, args: SharedArrayBuffer) {
    this.#pool = pool;
    this.#ctl = pool.ctl;
    this.#args = new Uint8Array(args);
    for (let s = L.LAUNCH_SLOTS - 1; s >= 0; s--) this.#free.push(s);
  }

  /** Encodes a launch's arguments; throws ArgumentError when they do not fit in a slot. */
  encode(args: readonly LaunchArg[]): Uint8Array {
    let bytes = this.#encoded.get(args);
    if (bytes === undefined) {
      bytes = encodeArgs(args);
      this.#encoded.set(args, bytes);
    }
    return bytes;
  }

  async launch(request: LaunchRequest): Promise<LaunchHandle> {
    const bytes = this.encode(request.args);
    // Checked before a slot is taken, so a refused launch holds none.
    const before = request.after === undefined ? undefined : this.#byHandle.get(request.after);
    if (request.after !== undefined && before === undefined) {
      throw new StateError(`launch of '${request.kernelName}': it was ordered after a launch of another backend or Context`);
    }
    if (this.#closed !== undefined) throw this.#closed;
    for (const plan of request.cores) {
      const lost = this.#lost.get(plan.core);
      if (lost !== undefined) throw lost;
    }
    const signal = request.signal;
    if (aborted(signal)) return cancelledHandle();
    const slot = this.#free.pop() ?? (await this.#waitForSlot(signal));
    if (slot === CLOSED) throw this.#closed!;
    if (slot === WITHDRAWN) return cancelledHandle();
    // Aborted between the hand-over of the slot and this continuation: nothing is published yet,
    // so the launch is withdrawn and the slot goes on to the next launch.
    if (aborted(signal)) {
      this.#giveBack(slot);
      return cancelledHandle();
    }
    const ctl = this.#ctl;
    const sb = L.slotBase(this.#pool.cores, slot);
    const generation = (ctl[sb + L.S_GENERATION]! + 1) | 0;
    // Atomic stores: a core waiting on this slot's previous launch reads these (see layout.ts).
    Atomics.store(ctl, sb + L.S_GENERATION, generation);
    Atomics.store(ctl, sb + L.S_CANCEL, 0);
    Atomics.store(ctl, sb + L.S_FAILED, L.FAILED_NONE);
    ctl[sb + L.S_MODULE] = request.module;
    ctl[sb + L.S_KERNEL] = request.kernel;
    ctl[sb + L.S_TASK_COUNT] = request.taskCount;
    ctl[sb + L.S_BATCH_SIZE] = request.batchSize;
    ctl[sb + L.S_MAP_ID] = request.mapId;
    ctl[sb + L.S_ARGS_VERSION] = this.#versionOf(request.mapToken, bytes);
    ctl[sb + L.S_ARGS_LENGTH] = bytes.length;
    ctl[sb + L.S_LAUNCH_ID] = request.launchId;
    this.#args.set(bytes, slot * L.ARGS_CAPACITY);
    ctl[sb + L.S_MESSAGES] = 0;
    const after = this.#order(before, sb);
    // The HEAD stores below are the release points that publish everything written above.
    setCoreMask(ctl, this.#pool.cores, slot, request.cores);

    const flight: Flight = {
      request, slot, generation, positions: [], cancelled: false, kernelError: undefined, diedError: undefined,
      received: 0, onReceived: undefined, final: undefined, after, dependents: [], outcome: undefined, done: NOT_DONE,
    };
    after?.dependents.push(flight);
    this.#flights.set(slot, flight);
    if (request.cores.length > 0) this.#pool.hold();
    for (const plan of request.cores) {
      const head = L.coreBase(plan.core) + L.C_HEAD;
      const pos = ctl[head]!;
      const e = L.entryIndex(this.#pool.cores, plan.core, pos);
      ctl[e + L.E_SLOT] = slot;
      ctl[e + L.E_FIRST_BATCH] = plan.firstBatch;
      ctl[e + L.E_BATCH_STRIDE] = plan.batchStride;
      ctl[e + L.E_BATCH_COUNT] = plan.batchCount;
      ctl[e + L.E_ISSUED] = 0;
      ctl[e + L.E_DONE] = 0;
      Atomics.store(ctl, head, pos + 1);
      flight.positions.push(pos);
    }
    // Wake cores only once every entry is published: a woken core can preempt this thread, and the
    // cores woken later would then start late.
    for (const plan of request.cores) this.#pool.ring(plan.core);
    flight.done = this.#complete(flight);
    const cancel = (): void => {
      // Once the launch has finished, its slot may carry another Map's launch: leave it alone.
      if (this.#flights.get(slot) !== flight) return;
      flight.cancelled = true;
      Atomics.store(ctl, sb + L.S_CANCEL, 1);
    };
    if (signal !== undefined) {
      signal.addEventListener('abort', cancel, { once: true });
      void flight.done.then(() => signal.removeEventListener('abort', cancel));
    }
    const handle: LaunchHandle = { done: flight.done, cancel, progress: () => flight.final ?? this.#progress(flight) };
    this.#byHandle.set(handle, flight);
    return handle;
  }

  /**
   * Resolves with a free slot once a launch in flight returns one; with WITHDRAWN when `signal`
   * aborts first, with CLOSED when the dispatcher closes. A withdrawn waiter leaves the queue, so
   * it never takes a slot another launch could use.
   */
  #waitForSlot(signal: AbortSignal | undefined): Promise<number> {
    return new Promise<number>((resolve) => {
      const withdraw = (): void => {
        const i = this.#waiters.indexOf(waiter);
        if (i < 0) return; // already handed a slot: launch() gives it back
        this.#waiters.splice(i, 1);
        resolve(WITHDRAWN);
      };
      const waiter = (slot: number): void => {
        signal?.removeEventListener('abort', withdraw);
        resolve(slot);
      };
      this.#waiters.push(waiter);
      signal?.addEventListener('abort', withdraw, { once: true });
    });
  }

  /** Hands a slot to the oldest launch waiting for one, or back to the free list. */
  #giveBack(slot: number): void {
    const next = this.#waiters.shift();
    if (next !== undefined) next(slot);
    else this.#free.push(slot);
  }

  /**
   * Writes the slot's AFTER words for the launch `before` this one: its slot while it is in
   * flight, else none. A predecessor that already ended unsuccessfully cancels this launch now.
   * Returns the predecessor's flight while it is in flight.
   */
  #order(before: Flight | undefined, sb: number): Flight | undefined {
    const ctl = this.#ctl;
    ctl[sb + L.S_AFTER_SLOT] = -1;
    if (before === undefined) return undefined;
    if (before.outcome !== undefined) {
      if (before.outcome.kind !== 'completed') Atomics.store(ctl, sb + L.S_CANCEL, 1);
      return undefined;
    }
    ctl[sb + L.S_AFTER_SLOT] = before.slot;
    ctl[sb + L.S_AFTER_GEN] = before.generation;
    return before;
  }

  /** Routes a core's message to the launch it belongs to; stale generations are dropped. */
  onMessage(msg: CoreToHost): void {
    if (msg.type !== 'message' && msg.type !== 'kernelError') return;
    const flight = this.#flights.get(msg.slot);
    if (flight === undefined || flight.generation !== msg.generation) return;
    if (msg.type === 'message') {
      try {
        flight.request.onMessage(msg.value);
      } catch {
        // A throwing message callback must not take the dispatcher down; the Map reports it.
      }
    } else {
      flight.kernelError ??= new KernelError(flight.request.kernelName, msg.taskIdx, msg.message, msg.stack);
    }
    flight.received++;
    flight.onReceived?.();
  }

  /**
   * A core died. Only the entry it was running (C_CURRENT == C_TAIL) fails: its launch gets a
   * CoreDiedError naming the Map, the kernel and the tasks of the batch in progress, and the core
   * is counted off on its behalf. Entries queued behind it on the core's ring belong to launches
   * that never touched the core: TAIL moves just past the failed entry, and the replacement core,
   * which starts from TAIL, runs them. The core may also have died after finishing an entry and
   * before counting itself off (see layout.ts): every entry it finished whose launch is still in
   * flight is counted off again, which is harmless for those it had counted off itself. Called
   * before the replacement starts (see CorePoolEvents).
   */
  onCoreDeath(core: number, reason: string, cause: unknown): void {
    const ctl = this.#ctl;
    const cb = L.coreBase(core);
    const tail = Atomics.load(ctl, cb + L.C_TAIL);
    for (const flight of this.#flights.values()) {
      const i = flight.request.cores.findIndex((plan) => plan.core === core);
      if (i >= 0 && flight.positions[i]! < tail) countOffDead(ctl, this.#pool.cores, flight.slot, core);
    }
    const pos = Atomics.load(ctl, cb + L.C_CURRENT);
    // The replacement starts between entries, whatever the dead core left here.
    Atomics.store(ctl, cb + L.C_CURRENT, -1);
    // Between entries (importing a module, say, or past an entry it finished): no batch was running.
    if (pos !== tail) return;
    const e = L.entryIndex(this.#pool.cores, core, pos);
    const issued = Atomics.load(ctl, cb + L.C_ISSUED);
    // The batches the core had started before it died, for the launch's progress.
    ctl[e + L.E_ISSUED] = issued;
    ctl[e + L.E_DONE] = Atomics.load(ctl, cb + L.C_DONE);
    const slot = ctl[e + L.E_SLOT]!;
    const flight = this.#flights.get(slot);
    if (flight !== undefined) {
      const r = flight.request;
      const batch = ctl[e + L.E_FIRST_BATCH]! + Math.max(0, issued - 1) * ctl[e + L.E_BATCH_STRIDE]!;
      const first = batch * r.batchSize;
      const tasks = issued === 0 ? undefined : ([first, Math.min(first + r.batchSize, r.taskCount) - 1] as const);
      flight.diedError ??= new CoreDiedError(core, r.kernelName, reason, { cause, mapId: r.mapId, ...(tasks === undefined ? {} : { tasks }) });
    }
    this.#failEntry(slot, core);
    Atomics.store(ctl, cb + L.C_TAIL, pos + 1);
  }

  /**
   * A core was given up: every entry left on its ring fails with a CoreDiedError saying so, and
   * later launches planned onto it are refused (see launch).
   */
  onCoreLost(core: number, reason: string, cause: unknown): void {
    // One error for the launches it takes down and the ones refused later, whichever comes first.
    const error = new CoreDiedError(core, undefined, reason, { cause, replaced: false });
    this.#lost.set(core, error);
    const ctl = this.#ctl;
    const cb = L.coreBase(core);
    const head = Atomics.load(ctl, cb + L.C_HEAD);
    for (let pos = Atomics.load(ctl, cb + L.C_TAIL); pos < head; pos++) {
      const slot = ctl[L.entryIndex(this.#pool.cores, core, pos) + L.E_SLOT]!;
      const flight = this.#flights.get(slot);
      if (flight !== undefined) flight.diedError ??= error;
      this.#failEntry(slot, core);
    }
    Atomics.store(ctl, cb + L.C_TAIL, head);
  }

  /** Marks a launch failed and counts `core` off it, on behalf of the dead core. */
  #failEntry(slot: number, core: number): void {
    const ctl = this.#ctl;
    const sb = L.slotBase(this.#pool.cores, slot);
    Atomics.compareExchange(ctl, sb + L.S_FAILED, L.FAILED_NONE, L.FAILED_CORE_DIED);
    Atomics.store(ctl, sb + L.S_CANCEL, 1);
    countOffDead(ctl, this.#pool.cores, slot, core);
  }

  /**
   * The cores are gone (the Context was destroyed): every launch in flight fails with `error`,
   * and launches still waiting for a slot or made later are refused with it.
   */
  close(error: PxlError): void {
    this.#closed = error;
    for (const flight of this.#flights.values()) {
      flight.diedError ??= this.#closed;
      const remaining = L.slotBase(this.#pool.cores, flight.slot) + L.S_REMAINING;
      Atomics.store(this.#ctl, remaining, 0);
      Atomics.notify(this.#ctl, remaining);
    }
    for (const waiter of this.#waiters.splice(0)) waiter(CLOSED);
  }

  /**
   * The version of a Map's argument bytes: the same as before for bytes seen among the Map's last
   * ARGS_VERSIONS encodings, so cores reuse their binding when a Map alternates between argument
   * sets (ping-pong buffers, one Map shared by a command buffer's launches).
   */
  #versionOf(token: object, bytes: Uint8Array): number {
    let seen = this.#argsSeen.get(token);
    if (seen === undefined) this.#argsSeen.set(token, (seen = []));
    // Newest first: a Map launched again with the same arguments hits at once.
    const hit = seen.findLastIndex((s) => sameBytes(s.bytes, bytes));
    if (hit >= 0) {
      const entry = seen.splice(hit, 1)[0]!;
      seen.push(entry);
      return entry.version;
    }
    const version = (this.#argsVersion = (this.#argsVersion + 1) | 0);
    seen.push({ bytes, version });
    if (seen.length > L.ARGS_VERSIONS) seen.shift();
    return version;
  }

  async #complete(flight: Flight): Promise<LaunchOutcome> {
    const ctl = this.#ctl;
    const sb = L.slotBase(this.#pool.cores, flight.slot);
    try {
      for (let left = Atomics.load(ctl, sb + L.S_REMAINING); left !== 0; left = Atomics.load(ctl, sb + L.S_REMAINING)) {
        const w = Atomics.waitAsync(ctl, sb + L.S_REMAINING, left);
        if (w.async) await w.value;
      }
      // Cores count their posted messages before they decrement REMAINING, so this total is final.
      const expected = Atomics.load(ctl, sb + L.S_MESSAGES);
      if (flight.received < expected && flight.diedError === undefined) {
        await new Promise<void>((resolve) => {
          flight.onReceived = () => {
            if (flight.received >= expected) resolve();
          };
        });
      }
      const failure = flight.kernelError ?? flight.diedError;
      if (failure !== undefined) return (flight.outcome = { kind: 'failed', error: failure });
      // A launch that ran after an unsuccessful one ran no batch (its cores saw to that).
      const before = flight.after === undefined ? undefined : await flight.after.done;
      if (flight.cancelled || (before !== undefined && before.kind !== 'completed')) return (flight.outcome = { kind: 'cancelled' });
      return (flight.outcome = { kind: 'completed' });
    } finally {
      flight.final = this.#progress(flight);
      flight.outcome ??= { kind: 'failed', error: new StateError(`launch of '${flight.request.kernelName}' ended abnormally`) };
      // Dependents still waiting on the cores must learn of a failure before this slot is reused.
      if (flight.outcome.kind !== 'completed') {
        for (const d of flight.dependents) Atomics.store(ctl, L.slotBase(this.#pool.cores, d.slot) + L.S_CANCEL, 1);
      }
      this.#flights.delete(flight.slot);
      if (flight.request.cores.length > 0) this.#pool.release();
      this.#giveBack(flight.slot);
    }
  }

  #progress(flight: Flight): { issued: number; done: number } {
    const ctl = this.#ctl;
    let issued = 0;
    let done = 0;
    flight.request.cores.forEach((plan, i) => {
      const cb = L.coreBase(plan.core);
      const pos = flight.positions[i]!;
      if (Atomics.load(ctl, cb + L.C_TAIL) > pos) {
        const e = L.entryIndex(this.#pool.cores, plan.core, pos);
        issued += Atomics.load(ctl, e + L.E_ISSUED);
        done += Atomics.load(ctl, e + L.E_DONE);
      } else if (Atomics.load(ctl, cb + L.C_CURRENT) === pos) {
        // DONE before ISSUED: the core may finish batches between the two loads, and only this
        // order keeps done <= issued in the sum.
        const d = Atomics.load(ctl, cb + L.C_DONE);
        issued += Atomics.load(ctl, cb + L.C_ISSUED);
        done += d;
      }
    });
    return { issued, done };
  }
}

/** Read through a call: an abort may come while the caller awaits, which narrowing cannot see. */
function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/**
 * `pxl worker`: joins the pool of a NATS server and runs blocks of any run it finds on its local
 * Context, one block per Job (a Job per core) at a time. While a block computes, the item is kept
 * alive with `working()` heartbeats at a third of the run's ack wait; the compute itself runs on
 * the MU cores, so the event loop stays free for those timers. A result goes back as raw bytes
 * (in parts of the server's max payload) before the item is acked, so a worker killed at any point
 * loses nothing: its item comes back to another worker. A core does not wait for its last block's
 * delivery: it takes and computes the next item meanwhile.
 *
 * A worker runs only operations it knows by name: the built-in PCF operation, and the BlockOps of
 * the kernel modules on its allow-list (`modules`). An item naming anything else is refused with
 * the reason, which the coordinator reports to its user.
 */
import { hostname } from 'node:os';
import { jetstreamManager, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { headers, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import { CancelledError, OptionError, UnsupportedError } from '../core/errors.js';
import { checkInteger, checkOneOf } from '../core/validate.js';
import { connectCluster, type ConnectOptions } from './connection.js';
import { decodeWorkItem, HEADER, partBytes, partCount, HEARTBEAT_MS, HEARTBEAT_SUBJECT, RUN_SUBJECT, runNames, type WorkItem } from './protocol.js';
import { checkModuleList, type ClusterOpFactory } from './kernelModules.js';
import { WorkerDevices } from './workerDevices.js';
import { WorkerState } from './workerState.js';

/** Options of {@link runWorker}. */
export interface WorkerOptions extends ConnectOptions {
  /** Cores to compute on, one Job each. Default: every CPU (`os.availableParallelism()`). */
  readonly cores?: number;
  /**
   * `'cpu'`: `cores` CPU cores; `'gpu'`: the GPU (WebGPU), which computes float32 runs only and
   * refuses others with the reason; `'all'`: both, each device taking the next block when free,
   * the GPU leaving to the cores the runs it cannot compute (float64, kernel modules). Default `'cpu'`.
   */
  readonly device?: 'cpu' | 'gpu' | 'all';
  /** Name in heartbeats and results. Default `host:pid`. */
  readonly id?: string;
  /** Stops the worker: blocks in flight finish and are delivered, items fetched meanwhile are handed back. */
  readonly signal?: AbortSignal;
  /** Lines worth telling an operator (joined runs, refusals, connection trouble). */
  readonly log?: (line: string) => void;
  /** Also log each block as it starts and is delivered. Default false. */
  readonly verbose?: boolean;
  /**
   * Kernel modules whose BlockOps this worker runs (see {@link ClusterOpFactory}), spelled as the
   * coordinator names them: package names or paths. Default none: the built-in operations only.
   */
  readonly modules?: readonly string[];
}

/** How long a stopping worker waits for its connection to drain. */
const DRAIN_LIMIT_MS = 2000;
/**
 * Bytes a result message keeps free for its headers below the server's max payload, or half of a
 * smaller max payload: its headers take a few hundred bytes, and parts of a byte or two would
 * hold a block in millions of messages.
 */
const HEADER_ROOM = 4096;
const headerRoom = (maxPayload: number): number => Math.min(HEADER_ROOM, Math.floor(maxPayload / 2));

const aborted = (signal: AbortSignal | undefined): boolean => signal?.aborted === true;

/**
 * Publishes the result (or refusal) of an item, then acks (or terminates) the item. A result larger
 * than a message may be goes out as parts of the max payload, published together. Each part's
 * msgID names the item by its stream sequence: a part the server already holds from an earlier
 * delivery of the same item (a worker killed while it published) is dropped there, while an item
 * published again for the same block (by a resumed coordinator) gets its results through.
 */
async function deliver(state: WorkerState, msg: JsMsg, item: WorkItem | undefined, outcome: { bytes: Uint8Array } | { refusal: string }): Promise<void> {
  const run = item?.run ?? /^pxl\.([0-9a-f]+)\.work$/.exec(msg.subject)?.[1];
  if (run === undefined) {
    msg.term();
    return;
  }
  const names = runNames(run);
  const head = (): MsgHdrs => {
    const h = headers();
    h.set(HEADER.run, run);
    h.set(HEADER.worker, state.id);
    if (item !== undefined) {
      h.set(HEADER.block, String(item.block));
      h.set(HEADER.dtype, item.op.dtype);
    }
    return h;
  };
  if ('refusal' in outcome) {
    const h = head();
    // Header values are one line.
    h.set(HEADER.error, outcome.refusal.replace(/[\r\n]+/g, ' '));
    await state.js.publish(names.resultSubject, new Uint8Array(0), { headers: h });
    msg.term();
    return;
  }
  const { bytes } = outcome;
  const parts = partCount(bytes.byteLength, Math.max(1, state.maxPayload() - headerRoom(state.maxPayload())));
  const partSize = partBytes(bytes.byteLength, parts);
  const sends: Promise<unknown>[] = [];
  for (let k = 0; k < parts; k++) {
    const h = head();
    if (parts > 1) h.set(HEADER.part, `${k}/${parts}`);
    sends.push(state.js.publish(names.resultSubject, bytes.subarray(k * partSize, (k + 1) * partSize), { headers: h, msgID: `${run}.${item!.block}.${msg.seq}.${k}` }));
  }
  await Promise.all(sends);
  msg.ack();
}

/** An item computed (or refused), its heartbeat still running until it is delivered. */
interface Computed {
  readonly msg: JsMsg;
  readonly item: WorkItem | undefined;
  readonly outcome: { bytes: Uint8Array } | { refusal: string };
  readonly alive: ReturnType<typeof setInterval> | undefined;
  /** Lets the run reuse the bytes' output slot (and dispose its storages). */
  readonly done?: () => void;
}

/**
 * Runs one item on device `device` of `group`, keeping it alive while it computes. Undefined when
 * the group hands the item back to the worker's other devices (a GPU beside CPU cores, given an
 * item only the cores can compute: it then pulls from that run no more).
 */
async function computeItem(state: WorkerState, group: WorkerDevices, msg: JsMsg, device: number): Promise<Computed | undefined> {
  let item: WorkItem | undefined;
  let alive: ReturnType<typeof setInterval> | undefined;
  try {
    item = decodeWorkItem(msg.data);
    if (state.groups.length > 1 && !group.canRun(item)) {
      group.passed.add(item.run);
      msg.nak();
      return undefined;
    }
    alive = setInterval(() => msg.working(), Math.max(50, Math.floor(item.ackWait / 3)));
    const run = await state.run(item, group);
    const block = run.blockOf(item);
    if (state.verbose) state.log(`block ${item.block} of run ${item.run}: started on ${group.gpu ? 'the GPU' : `core ${device}`}`);
    const { bytes, done } = await run.compute(block, device);
    return { msg, item, alive, done, outcome: { bytes } };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    state.log(`refused ${item === undefined ? 'an item' : `block ${item.block} of run ${item.run}`}: ${reason}`);
    return { msg, item, alive, outcome: { refusal: reason } };
  }
}

/** Delivers a computed item; its heartbeat stops once the item is acked (or delivery failed). */
async function deliverItem(state: WorkerState, c: Computed): Promise<void> {
  try {
    await deliver(state, c.msg, c.item, c.outcome);
    if (state.verbose && c.item !== undefined && 'bytes' in c.outcome) state.log(`block ${c.item.block} of run ${c.item.run}: delivered`);
  } catch (error) {
    // Delivery failed (server away): the item is not acked and comes back to some worker.
    const what = c.item === undefined ? 'a refusal' : `block ${c.item.block} of run ${c.item.run}`;
    state.log(`could not deliver ${what} (${(error as Error).message}); it goes to a worker after the ack wait`);
  } finally {
    clearInterval(c.alive);
    c.done?.();
  }
}

/**
 * One device's loop: take an item, run it, deliver it; until the worker stops. A block's delivery
 * runs while the device takes and computes the next one (a core otherwise idles for the
 * round trips of every result); at most one delivery per device is in flight, so a worker holds at
 * most two results per core.
 */
async function deviceLoop(state: WorkerState, group: WorkerDevices, device: number): Promise<void> {
  let trouble = '';
  let delivering: Promise<void> = Promise.resolve();
  try {
    while (!state.stopping) {
      let msg: JsMsg | undefined;
      try {
        msg = await state.next(group);
        trouble = '';
      } catch (error) {
        // A run deleted under the pull, or the server gone for a moment: look again shortly.
        // A server away is said once, by the status watch; a pull on a run removed meanwhile misses
        // its heartbeats. Neither needs a line of its own.
        const text = (error as Error).message;
        if (text !== trouble && !state.serverAway && !/not found|deleted|heartbeats missed/i.test(text)) state.log(`could not take an item (${text}); trying again`);
        trouble = text;
        state.listedAt = -Infinity;
        state.consumers.clear();
        await state.pause(250);
        continue;
      }
      if (msg === undefined) continue;
      if (state.stopping) {
        // Fetched while stopping: hand it back at once rather than after the ack wait.
        msg.nak();
        break;
      }
      // The output slot of a block whose delivery failed (the server away) may still be referenced
      // by the client's pending writes, to be sent after a reconnect. It is computed into again
      // only after this item, which a fresh pull fetched on the same connection: the server
      // answers a pull only after reading all that was written before it, so those bytes are out.
      // A prefetching consumer would not give that guarantee.
      const computed = await computeItem(state, group, msg, device);
      if (computed === undefined) continue;
      await delivering;
      delivering = deliverItem(state, computed);
    }
  } finally {
    await delivering;
  }
}

/** Says when the connection to the server is lost and when it is back; ends when the connection closes. */
async function watchServer(nc: NatsConnection, state: WorkerState, url: string): Promise<void> {
  for await (const s of nc.status()) {
    if (s.type === 'disconnect' && !state.serverAway) {
      state.serverAway = true;
      state.log(`lost the NATS server at ${url}; waiting for it to come back (blocks not delivered meanwhile go to a worker after the ack wait)`);
    } else if (s.type === 'reconnect' && state.serverAway) {
      state.serverAway = false;
      state.log(`the NATS server at ${url} is back`);
    }
  }
}

/**
 * Runs a worker until `options.signal` aborts: connects, opens a Context of `cores` Jobs, and takes
 * items of every run on the server. On abort, blocks in flight finish and are delivered, then it
 * resolves.
 *
 * @throws (rejects) OptionError for bad options; DeviceUnavailableError when the server cannot be
 *   reached or has no JetStream.
 */
export async function runWorker(options: WorkerOptions): Promise<void> {
  const cores = checkInteger('cores', options.cores ?? (await import('node:os')).availableParallelism(), 1, 4096);
  const device = checkOneOf('device', options.device ?? 'cpu', ['cpu', 'gpu', 'all'] as const);
  if (options.id !== undefined && (typeof options.id !== 'string' || !/^[\w.:@-]{1,100}$/.test(options.id))) {
    throw new OptionError(`--id (id) must be 1 to 100 letters, digits or . : @ - _, got ${JSON.stringify(options.id)}`);
  }
  const modules = checkModuleList(options.modules);
  const id = options.id ?? `${hostname()}:${process.pid}`;
  const log = options.log ?? (() => undefined);
  const signal = options.signal;
  if (signal?.aborted === true) throw new CancelledError('the worker was stopped before it started', { cause: signal.reason });
  const nc = await connectCluster(options, `pxl worker ${id}`);
  const groups: WorkerDevices[] = [];
  let beat: ReturnType<typeof setInterval> | undefined;
  try {
    let jsm: JetStreamManager;
    try {
      jsm = await jetstreamManager(nc);
    } catch (error) {
      throw new UnsupportedError(`the NATS server at ${options.nats} has no JetStream: ${(error as Error).message}; start it with nats-server -js -sd DIR`);
    }
    if (device !== 'gpu') groups.push(await WorkerDevices.open('cpu', cores));
    if (device !== 'cpu') groups.push(await WorkerDevices.open('gpu', cores));
    const state = new WorkerState(id, nc, jsm, groups, log, options.verbose === true, modules);
    // Any message on the subject will do: a worker lists the runs itself, so it trusts no name it hears.
    nc.subscribe(RUN_SUBJECT, { callback: () => state.heardOfRun() });
    const devices = groups.reduce((n, g) => n + g.jobs.length, 0);
    const sendBeat = (): void => {
      try {
        nc.publish(HEARTBEAT_SUBJECT, JSON.stringify({ id, devices }));
      } catch {
        // Disconnected: the next beat goes out once the client has reconnected.
      }
    };
    sendBeat();
    beat = setInterval(sendBeat, HEARTBEAT_MS);
    log(`worker ${id}: ${groups.map((g) => g.describe()).join(' and ')}, connected to ${options.nats}`);
    void watchServer(nc, state, options.nats);
    const stop = (): void => {
      state.stopping = true;
    };
    // The signal may have aborted while the Context started.
    if (aborted(signal)) stop();
    signal?.addEventListener('abort', stop, { once: true });
    try {
      await Promise.all(groups.flatMap((g) => g.jobs.map((_, d) => deviceLoop(state, g, d))));
    } finally {
      signal?.removeEventListener('abort', stop);
    }
    for (const runId of state.openRuns()) await state.dropRun(runId);
  } finally {
    clearInterval(beat);
    // Draining waits for the server: a worker stopped while the server is away would never end.
    let bounded: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([nc.drain(), new Promise((resolve) => (bounded = setTimeout(resolve, DRAIN_LIMIT_MS)))]).catch(() => undefined);
    clearTimeout(bounded);
    if (!nc.isClosed()) await nc.close().catch(() => undefined);
    for (const g of groups) await g.close();
  }
}

/**
 * The coordinator: one more device of the block scheduler, whose cores are `pxl worker` processes
 * reached through NATS JetStream. It puts the inputs into the Object Store once, publishes one work
 * item per block still to compute, and writes each result through the call's result writer (the
 * streamed `.npy` sink for `out`) as it arrives. A block counts once: a result for a block already
 * written (a redelivered item computed twice) is acknowledged and dropped.
 */
import { createHash, randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import type { Objm } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import { BlockScheduler, pairsInBlock, type BlockInfo, type FloatArray } from '../blocks/index.js';
import { CancelledError, DeviceUnavailableError, InputFormatError, OptionError, UnsupportedError } from '../core/errors.js';
import type { ClusterRequest } from '../pcf/clusterHook.js';
import { MaxSquareSide } from '../pxl/launchPlan.js';
import { checkClusterOptions, connectCluster } from './connection.js';
import { objectStores, putInput, raiseInputReplicas } from './inputBucket.js';
import { releaseMessage } from './natsTransport.js';
import { packedLength, unpackRows } from './packedRows.js';
import { blobName, encodePcfSet } from './pcfBlob.js';
import {
  COORDINATOR_CONSUMER, encodeWorkItem, HEADER, partBytes, partOf, HEARTBEAT_SUBJECT, PROTOCOL_VERSION, RUN_SUBJECT, runNames,
  type ItemOp, type ModuleItemOp, type PcfItemOp, type RunNames, type WorkItem,
} from './protocol.js';
import { claimRun } from './runClaim.js';
import { createRun, removeRun, reopenRun, runLeftovers } from './runStreams.js';
import { ROSTER_CHECK_MS, WorkerRoster, type Heartbeat } from './workerRoster.js';

/** Default of `cluster.ackWait`. */
export const DEFAULT_ACK_WAIT_MS = 10_000;
/** Block side bounds of a cluster run: large enough that a block's compute dwarfs its round trip. */
const MIN_SIDE = 64;
/** A GPU worker computes a block in one launch: 1023, not 1024. */
const MAX_SIDE = MaxSquareSide;
/** Items published at once while the work stream fills. */
const PUBLISH_WINDOW = 256;
/** Results the coordinator holds unwritten: each is one block, up to MAX_SIDE^2 values. */
const RESULTS_IN_HAND = 4;
/** Block buffers kept for reuse. */
const SPARE_BUFFERS = 4;
/** Seconds without any live worker before the run says it is waiting. */
const WAIT_NOTICE_S = 2;

function isqrt(x: number): number {
  let s = Math.floor(Math.sqrt(x));
  while (s * s > x) s--;
  while ((s + 1) * (s + 1) <= x) s++;
  return s;
}

/**
 * The block side of a cluster run: what a resumed journal says, else from the options as for a
 * local run, else an eighth of the matrix side within [64, 1023] (enough blocks to spread, each
 * worth far more than its ~1 ms round trip).
 */
function blockSide(req: ClusterRequest): number {
  const resumed = req.sink?.resumed?.header.blockSide;
  if (resumed !== undefined) return resumed;
  const n = Math.max(req.rows.count, req.cols.count);
  if (req.maxOutputElements !== undefined) return Math.max(1, Math.min(n, Math.max(isqrt(req.maxOutputElements), req.minBlockSide ?? 0)));
  if (req.minBlockSide !== undefined) return Math.max(1, Math.min(n, req.minBlockSide));
  return Math.max(1, Math.min(n, MAX_SIDE, Math.max(MIN_SIDE, Math.ceil(n / 8))));
}

function itemOp(req: ClusterRequest): PcfItemOp {
  const { op } = req;
  return { name: 'pxl.pcf', kind: op.kind, p: op.kind === 'lp' ? op.p : 1, skip: req.skip, dtype: req.dtype };
}

/** A run's id: for a file, a hash of what is computed and where, so a rerun finds what a killed run left. */
function runIdOf(req: ClusterRequest, rows: string, cols: string, side: number): string {
  if (req.sink === undefined) return randomBytes(8).toString('hex');
  const what = JSON.stringify([rows, cols, itemOp(req), req.mode, side, resolve(req.sink.paths.temp, '..'), req.sink.layout.bytes, req.sink.layout.kind]);
  return createHash('sha256').update(what).digest('hex').slice(0, 16);
}

/** The server's refusal of `replicas` copies of a stream (one server, or too few in its cluster), as an OptionError. */
function replicasRefused(error: unknown, replicas: number, url: string): OptionError | undefined {
  const message = (error as Error | undefined)?.message ?? '';
  if (replicas <= 1 || !/replicas > 1 not supported|no suitable peers|insufficient resources/i.test(message)) return undefined;
  return new OptionError(`the NATS server at ${url} cannot keep ${replicas} copies of the run's streams (${message}): --replicas (cluster.replicas) must be at most the number of JetStream servers in its cluster, and 1 for a single server`);
}

async function openJetStream(nc: NatsConnection, url: string): Promise<JetStreamManager> {
  try {
    return await jetstreamManager(nc);
  } catch (error) {
    throw new DeviceUnavailableError(`the NATS server at ${url} has no JetStream: ${(error as Error).message}; start it with JetStream enabled (nats-server -js -sd DIR)`, [url], { cause: error });
  }
}

/**
 * Publishes the items of `blocks`, a window at a time, and names the run on {@link RUN_SUBJECT}
 * once the first window is in (or at once when there is nothing to publish: a resumed run's items
 * may still be queued). The msgID (`tag` tells this coordinator's publications apart) makes an item
 * the client publishes again after a lost acknowledgement a no-op.
 */
async function publishItems(nc: NatsConnection, js: JetStreamClient, names: RunNames, base: Omit<WorkItem, 'block'>, blocks: readonly BlockInfo[], tag: string, signal: AbortSignal | undefined): Promise<void> {
  const announce = (): void => nc.publish(RUN_SUBJECT, JSON.stringify({ run: base.run }));
  if (blocks.length === 0) announce();
  for (let from = 0; from < blocks.length; from += PUBLISH_WINDOW) {
    if (signal?.aborted === true) return;
    await Promise.all(blocks.slice(from, from + PUBLISH_WINDOW).map((b) => js.publish(names.workSubject, encodeWorkItem({ ...base, block: b.index }), { msgID: `${base.run}.${b.index}${tag}` })));
    if (from === 0) announce();
  }
}

/**
 * `blocks` with the most pairs first: workers take items in stream order, so the run ends on small
 * blocks (the triangle's diagonal, the last row and column), and a worker that finishes early idles
 * for a small block at most instead of a full one.
 */
function largestFirst(blocks: readonly BlockInfo[], skip: RunTarget['skip']): BlockInfo[] {
  return blocks.map((b) => ({ b, pairs: pairsInBlock(skip, b) })).sort((x, y) => y.pairs - x.pairs || x.b.index - y.b.index).map((x) => x.b);
}

/** A block's result while its parts arrive: the bytes gathered into one aligned buffer. */
interface Gathering {
  readonly bytes: Uint8Array;
  readonly parts: number;
  readonly seen: Set<number>;
  /**
   * The part messages, acked once the block is written: a coordinator killed meanwhile leaves them
   * in the stream for its resumed successor (a part acked early would leave the block incomplete
   * there forever, its item being acked too).
   */
  readonly msgs: JsMsg[];
}

/** The values of `bytes` (aligned, owned) as a typed array of `dtype`. */
function valuesOf(bytes: Uint8Array, dtype: 'float32' | 'float64'): FloatArray {
  return dtype === 'float32' ? new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4) : new Float64Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 8);
}

/** What a run computes: its operation, inputs (object names; '' for none) and schedule. */
interface RunPlan {
  readonly op: ItemOp;
  readonly rows: string;
  readonly cols: string;
  readonly scheduler: BlockScheduler;
  readonly side: number;
  readonly runId: string;
}

/** Where a run's results go and what its caller hears: the parts of a ClusterRequest the collection needs. */
type RunTarget = Pick<ClusterRequest, 'skip' | 'dtype' | 'writer' | 'sink' | 'cluster' | 'signal' | 'onProgress'> & { readonly fnName: string };

/**
 * Runs a pairwise request on the cluster: resolves once every block is written through
 * `req.writer`; the run's streams are removed afterwards (and on failure or cancellation).
 *
 * @throws (rejects) OptionError for bad cluster options; DeviceUnavailableError when the server
 *   cannot be reached or has no JetStream; UnsupportedError when a worker refuses a block (its
 *   reason and name in the message); CancelledError when `req.signal` aborts.
 */
export async function runCoordinator(req: ClusterRequest): Promise<void> {
  return coordinate(req, async (objm, replicas, maxPayload) => {
    const rowBytes = encodePcfSet(req.rows);
    const rows = blobName(rowBytes);
    await putInput(objm, rows, rowBytes, replicas, maxPayload);
    let cols = rows;
    if (req.cols !== req.rows) {
      const colBytes = encodePcfSet(req.cols);
      cols = blobName(colBytes);
      await putInput(objm, cols, colBytes, replicas, maxPayload);
    }
    const side = blockSide(req);
    const scheduler = new BlockScheduler({ nRows: req.rows.count, nCols: req.cols.count, mode: req.mode, maxOutputElements: side * side, nSplitsHint: 1, minBlockSide: side });
    return { op: itemOp(req), rows, cols, scheduler, side, runId: runIdOf(req, rows, cols, side) };
  });
}

/**
 * Runs the blocks of a kernel module's BlockOp on the cluster (see {@link ModuleItemOp}): like
 * {@link runCoordinator}, without inputs in the Object Store (the op gets its parameters only).
 */
export async function runModuleCoordinator(target: RunTarget, op: ModuleItemOp, scheduler: BlockScheduler, side: number): Promise<void> {
  // Into a file, the run's id is a hash of what is computed and where, as for the built-in
  // operations, so a resumed coordinator takes over the streams a killed one left.
  const runId = target.sink === undefined
    ? randomBytes(8).toString('hex')
    : createHash('sha256').update(JSON.stringify([op, scheduler.nRows, scheduler.nCols, side, resolve(target.sink.paths.temp, '..'), target.sink.layout.bytes])).digest('hex').slice(0, 16);
  return coordinate(target, async () => ({ op, rows: '', cols: '', scheduler, side, runId }));
}

async function coordinate(req: RunTarget, plan: (objm: Objm, replicas: number, maxPayload: number) => Promise<RunPlan>): Promise<void> {
  const cluster = checkClusterOptions(req.cluster);
  const ackWait = cluster.ackWait ?? DEFAULT_ACK_WAIT_MS;
  const replicas = cluster.replicas ?? 1;
  const { signal } = req;
  if (signal?.aborted === true) throw new CancelledError(`the ${req.fnName} computation was cancelled before it started`, { cause: signal.reason });
  const nc = await connectCluster(cluster, 'pxl coordinator');
  let names: RunNames | undefined;
  let jsm: JetStreamManager | undefined;
  try {
    jsm = await openJetStream(nc, cluster.nats);
    const js = jetstream(nc);
    await raiseInputReplicas(jsm, replicas);
    const { op, rows, cols, scheduler, side, runId } = await plan(objectStores(js), replicas, nc.info?.max_payload ?? 0);
    // Held until the connection closes, after the run's streams are removed.
    await claimRun(nc, runNames(runId));
    const blocks = req.sink === undefined ? scheduler.blocks : await req.sink.begin(scheduler);
    names = runNames(runId);
    // Items published now get msgIDs of their own: a republished item must not be taken for a
    // duplicate of its first publication (the server remembers msgIDs for two minutes).
    let publishTag = '';
    let toPublish: readonly BlockInfo[] = blocks;
    if (req.sink?.resumed === undefined || blocks.length === 0) {
      // A killed coordinator of the same run may have left its streams: a fresh run starts them afresh.
      await removeRun(jsm, names);
      if (blocks.length === 0) return;
      await createRun(jsm, names, ackWait, replicas);
    } else {
      // Resumed: results that workers delivered after the last journal flush are still in the
      // result stream and are written, not recomputed; items still queued stay queued. Only the
      // blocks found in neither (written and acked by the killed coordinator, but not journaled)
      // are published again.
      await reopenRun(jsm, names, ackWait, replicas);
      const left = await runLeftovers(jsm, names);
      toPublish = blocks.filter((b) => !left.queued.has(b.index) && !left.delivered.has(b.index));
      publishTag = `.r${Date.now().toString(36)}`;
    }
    const base = { v: PROTOCOL_VERSION, run: runId, op, rows, cols, nRows: scheduler.nRows, nCols: scheduler.nCols, mode: scheduler.mode, blockSide: side, ackWait };
    const ordered = largestFirst(toPublish, req.skip);
    await collect(req, nc, js, names, blocks, () => publishItems(nc, js, names!, base, ordered, publishTag, signal));
    await removeRun(jsm, names);
    names = undefined;
  } catch (error) {
    throw replicasRefused(error, replicas, cluster.nats) ?? error;
  } finally {
    if (names !== undefined && jsm !== undefined && !nc.isClosed()) await removeRun(jsm, names).catch(() => undefined);
    await nc.close().catch(() => undefined);
  }
}

/** Writes every result of `blocks` as it arrives; `publish` runs alongside (results may come before it ends). */
async function collect(req: RunTarget, nc: NatsConnection, js: JetStreamClient, names: RunNames, blocks: readonly BlockInfo[], publish: () => Promise<void>): Promise<void> {
  const { signal } = req;
  const todo = new Map(blocks.map((b) => [b.index, b]));
  const pairsTotal = blocks.reduce((n, b) => n + pairsInBlock(req.skip, b), 0);
  let blocksDone = 0;
  let pairsDone = 0;
  const roster = new WorkerRoster();
  const started = Date.now();
  let waitingSaid = false;
  const status = req.cluster.onStatus;
  const reportWorkers = (now: number): void => {
    const changed = roster.refresh(now);
    if (changed === undefined) return;
    status?.({ kind: 'workers', workers: changed });
    if (changed.length > 0) waitingSaid = false;
  };
  const heartbeats = nc.subscribe(HEARTBEAT_SUBJECT, {
    callback: (error, msg) => {
      if (error !== null) return;
      try {
        const beat = msg.json<Heartbeat>();
        if (typeof beat.id !== 'string') return;
        // A worker that joins is reported at once: a short run may end before the next check.
        const now = Date.now();
        roster.heard(beat.id, now);
        reportWorkers(now);
      } catch {
        // Not a heartbeat of ours: ignored.
      }
    },
  });
  // The status stream ends when the connection closes, at the end of the run.
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect') status?.({ kind: 'server', url: req.cluster.nats, connected: s.type === 'reconnect' });
    }
  })().catch(() => undefined);
  const check = setInterval(() => {
    const now = Date.now();
    reportWorkers(now);
    if (roster.live.length === 0 && !waitingSaid && now - started >= WAIT_NOTICE_S * 1000) {
      waitingSaid = true;
      status?.({ kind: 'waiting', url: req.cluster.nats, seconds: Math.round((now - started) / 1000) });
    }
  }, ROSTER_CHECK_MS);
  const consumer = await js.consumers.get(names.resultStream, COORDINATOR_CONSUMER);
  // A stream or consumer gone from the server (deleted, or a server restarted without its store)
  // ends the run with an error instead of a wait for results that cannot come.
  const messages = await consumer.consume({ max_messages: RESULTS_IN_HAND, abort_on_missing_resource: true });
  const stop = (): void => void messages.stop();
  signal?.addEventListener('abort', stop, { once: true });
  const publishing = publish();
  let failure: { error: unknown } | undefined;
  publishing.catch((error: unknown) => {
    failure ??= { error };
    stop();
  });
  const size = req.dtype === 'float32' ? 4 : 8;
  const gathering = new Map<number, Gathering>();
  // Block buffers come back once the writer is done with them: allocating 2 MiB per block was a
  // good part of the coordinator's garbage collection. They are shared memory, which the file
  // writer stages from in place (the writer thread for a large result): no copy of their own.
  const spare: Uint8Array[] = [];
  const buffer = (length: number): Uint8Array => {
    const k = spare.findIndex((b) => b.byteLength === length);
    return k >= 0 ? spare.splice(k, 1)[0]! : new Uint8Array(new SharedArrayBuffer(length));
  };
  try {
    for await (const msg of messages) {
      const block = resultBlock(msg, req, todo);
      if (block !== undefined) {
        const worker = msg.headers?.get(HEADER.worker) || 'unknown worker';
        const part = partOf(msg.headers?.get(HEADER.part));
        // The parts carry the packed block; the buffer has room for the whole of it.
        const length = packedLength(req.skip, block) * size;
        if (part === undefined) throw new InputFormatError(`worker ${worker} sent block ${block.index} with a part header ${JSON.stringify(msg.headers?.get(HEADER.part))} that is not k/n`);
        let g = gathering.get(block.index);
        if (g === undefined || g.parts !== part.n) {
          // One copy per byte: the parts land in a fresh buffer, aligned for the typed array.
          g = { bytes: buffer(block.rowCount * block.colCount * size), parts: part.n, seen: new Set(), msgs: [] };
          gathering.set(block.index, g);
        }
        const partSize = partBytes(length, part.n);
        const expected = Math.min(partSize, length - part.k * partSize);
        if (msg.data.byteLength !== expected) {
          throw new InputFormatError(`worker ${worker} sent ${msg.data.byteLength} bytes as part ${part.k + 1} of ${part.n} of block ${block.index}, whose ${length / size} ${req.dtype} values computed make that part ${expected} bytes`);
        }
        g.bytes.set(msg.data, part.k * partSize);
        // Its bytes are in the block buffer: the message's own buffer may take the next message.
        releaseMessage(msg);
        g.seen.add(part.k);
        g.msgs.push(msg);
        if (g.seen.size < g.parts) continue;
        gathering.delete(block.index);
        const values = valuesOf(g.bytes, req.dtype);
        unpackRows(values, req.skip, block);
        await req.writer.write(block, values);
        for (const m of g.msgs) m.ack();
        if (spare.length < SPARE_BUFFERS) spare.push(g.bytes);
        todo.delete(block.index);
        roster.delivered(worker);
        blocksDone++;
        pairsDone += pairsInBlock(req.skip, block);
        req.onProgress?.({ blocksDone, blocksTotal: blocks.length, pairsDone, pairsTotal, device: roster.deviceOf(worker) });
      } else {
        msg.ack();
      }
      if (todo.size === 0) break;
    }
  } catch (error) {
    if (/^(stream|consumer) not found$/.test((error as Error).message)) {
      throw new DeviceUnavailableError(`the NATS server at ${req.cluster.nats} no longer has this run's streams (deleted, or the server restarted without its store, -sd): the ${todo.size} blocks not yet written are lost there; run the command again`, [req.cluster.nats], { cause: error });
    }
    throw error;
  } finally {
    signal?.removeEventListener('abort', stop);
    clearInterval(check);
    heartbeats.unsubscribe();
    await messages.close().catch(() => undefined);
    await publishing.catch(() => undefined);
  }
  if (failure !== undefined) throw failure.error;
  if (signal?.aborted === true) throw new CancelledError('the pairwise computation was cancelled; no result was produced', { cause: signal.reason });
  if (todo.size > 0) throw new DeviceUnavailableError(`the result stream of the run ended with ${todo.size} blocks missing (was the stream ${names.resultStream} deleted?)`, [req.cluster.nats]);
  status?.({ kind: 'finished', shares: [...roster.shares].map(([worker, n]) => ({ worker, blocks: n })) });
}

/**
 * The block a result message delivers, or undefined for one to drop: another run's, a block
 * already written, or one outside this run's blocks.
 * @throws UnsupportedError when the message is a worker's refusal, with its reason.
 */
function resultBlock(msg: JsMsg, req: RunTarget, todo: ReadonlyMap<number, BlockInfo>): BlockInfo | undefined {
  const h = msg.headers;
  const index = Number(h?.get(HEADER.block));
  const refusal = h?.get(HEADER.error) ?? '';
  if (refusal !== '') {
    const worker = h?.get(HEADER.worker) || 'a worker';
    throw new UnsupportedError(`worker ${worker} refused block ${Number.isInteger(index) ? index : '?'} of this run: ${refusal}`);
  }
  if (!Number.isInteger(index)) return undefined;
  if (h?.get(HEADER.dtype) !== req.dtype) return undefined;
  return todo.get(index);
}

/**
 * What the device loops of a `pxl worker` share: the connection, the runs on the server (listed
 * at most once a second, sooner when a coordinator announces one), a pull consumer per run, the
 * inputs decoded, and the runs opened on each kind of device.
 */
import { jetstream, type Consumer, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import type { Objm } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import type { PcfSet } from '../pcf/pcfSet.js';
import { getInput, objectStores } from './inputBucket.js';
import { loadClusterOp } from './kernelModules.js';
import { decodePcfSet } from './pcfBlob.js';
import { runNames, WORK_SUBJECTS, WORKER_CONSUMER, type WorkItem } from './protocol.js';
import type { WorkerDevices } from './workerDevices.js';
import { WorkerRun } from './workerRun.js';

/** How long one pull waits for an item (the client's minimum). */
const PULL_EXPIRES_MS = 1000;
/** How often the worker looks for new runs. */
const RUN_LIST_MS = 1000;
/** nats-server's default max payload, assumed only if the connection never said. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;
/** Inputs kept decoded, most recent first. */
const INPUTS_KEPT = 4;

/** The parts of a worker that every device loop shares. */
export class WorkerState {
  readonly id: string;
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly objm: Objm;
  readonly groups: readonly WorkerDevices[];
  readonly log: (line: string) => void;
  readonly verbose: boolean;
  /** The kernel modules this worker may import (`--modules`), as items must spell them. */
  readonly modules: readonly string[];
  readonly consumers = new Map<string, Consumer>();
  readonly inputs: { name: string; set: Promise<PcfSet> }[] = [];
  runIds: string[] = [];
  turn = 0;
  listedAt = -Infinity;
  stopping = false;
  /** The connection is lost and the client is trying to reconnect. */
  serverAway = false;
  /** The server's max payload when last connected. */
  #maxPayload: number;
  /** Device loops idling for want of runs, woken as soon as one loop finds some. */
  #idle: (() => void)[] = [];

  constructor(id: string, nc: NatsConnection, jsm: JetStreamManager, groups: readonly WorkerDevices[], log: (line: string) => void, verbose: boolean, modules: readonly string[]) {
    this.verbose = verbose;
    this.groups = groups;
    this.modules = modules;
    this.id = id;
    this.nc = nc;
    this.js = jetstream(nc);
    this.jsm = jsm;
    this.objm = objectStores(this.js);
    this.log = log;
    this.#maxPayload = nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD;
  }

  /**
   * The server's max payload. While the client reconnects it has no server info, and a result
   * finished then is published (buffered by the client until the server is back) in parts of the
   * size last known.
   */
  maxPayload(): number {
    this.#maxPayload = this.nc.info?.max_payload ?? this.#maxPayload;
    return this.#maxPayload;
  }

  /** The run ids of the work streams on the server, listed at most once per RUN_LIST_MS. */
  async runList(): Promise<string[]> {
    if (Date.now() - this.listedAt < RUN_LIST_MS) return this.runIds;
    this.listedAt = Date.now();
    const ids: string[] = [];
    for await (const name of this.jsm.streams.names(WORK_SUBJECTS)) {
      const m = /^PXL_([0-9a-f]+)$/.exec(name);
      if (m !== null) ids.push(m[1]!);
    }
    this.runIds = ids;
    if (ids.length > 0) this.wake();
    for (const g of this.groups) {
      for (const id of [...g.runs.keys()]) if (!ids.includes(id)) void this.dropRun(id);
      for (const id of g.passed) if (!ids.includes(id)) g.passed.delete(id);
    }
    return ids;
  }

  async dropRun(id: string): Promise<void> {
    this.consumers.delete(id);
    for (const g of this.groups) {
      const run = g.runs.get(id);
      g.runs.delete(id);
      const r = await run?.catch(() => undefined);
      r?.dispose();
    }
  }

  /** The ids of every run opened on any device. */
  openRuns(): string[] {
    return [...new Set(this.groups.flatMap((g) => [...g.runs.keys()]))];
  }

  /**
   * The next item for `group`, round robin over the runs it has not passed on; undefined when none
   * came within a pull.
   */
  async next(group: WorkerDevices): Promise<JsMsg | undefined> {
    const ids = (await this.runList()).filter((id) => !group.passed.has(id));
    if (ids.length === 0) {
      await this.pause(RUN_LIST_MS / 2);
      return undefined;
    }
    const id = ids[this.turn++ % ids.length]!;
    let consumer = this.consumers.get(id);
    if (consumer === undefined) {
      consumer = await this.js.consumers.get(runNames(id).workStream, WORKER_CONSUMER);
      this.consumers.set(id, consumer);
    }
    const msg = await consumer.next({ expires: PULL_EXPIRES_MS });
    return msg ?? undefined;
  }

  /** A coordinator named a new run: the next look lists the runs afresh, and idle loops look now. */
  heardOfRun(): void {
    this.listedAt = -Infinity;
    this.wake();
  }

  /** Ends every pause now. */
  wake(): void {
    for (const wake of this.#idle.splice(0)) wake();
  }

  /** Waits `ms`, or less when runs are found or announced meanwhile. */
  pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const k = this.#idle.indexOf(wake);
        if (k >= 0) this.#idle.splice(k, 1);
        resolve();
      }, ms);
      this.#idle.push(wake);
    });
  }

  /** An input set by name, from the cache or the inputs bucket. */
  input(name: string): Promise<PcfSet> {
    const found = this.inputs.find((i) => i.name === name);
    if (found !== undefined) return found.set;
    const set = (async () => {
      return decodePcfSet(await getInput(this.objm, name), name);
    })();
    this.inputs.unshift({ name, set });
    set.catch(() => {
      const k = this.inputs.findIndex((i) => i.set === set);
      if (k >= 0) this.inputs.splice(k, 1);
    });
    this.inputs.length = Math.min(this.inputs.length, INPUTS_KEPT);
    return set;
  }

  /** The run of `item` on `group`, opened on its first item. */
  run(item: WorkItem, group: WorkerDevices): Promise<WorkerRun> {
    let run = group.runs.get(item.run);
    if (run === undefined) {
      const op = item.op;
      run = (async () => {
        if (op.name === 'module') {
          const factory = await loadClusterOp(op, this.modules);
          this.log(`joined run ${item.run}: ${op.export} of kernel module ${op.module}, ${item.nRows} x ${item.nCols}, blocks of side ${item.blockSide}`);
          return WorkerRun.openModule(item, factory, group.workspace, group.jobs.length);
        }
        const [rows, cols] = await Promise.all([this.input(item.rows), this.input(item.cols)]);
        this.log(`joined run ${item.run}: ${op.kind}${op.kind === 'lp' ? ` p=${op.p}` : ''} of ${item.nRows} x ${item.nCols} PCFs, blocks of side ${item.blockSide}`);
        return WorkerRun.open({ ...item, op }, rows, cols, group.ctx, group.workspace, group.jobs, group.gpu);
      })();
      group.runs.set(item.run, run);
      run.catch(() => group.runs.delete(item.run));
    }
    return run;
  }
}

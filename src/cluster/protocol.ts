/**
 * What coordinator and workers say to each other through JetStream: the names of a run's streams,
 * subjects and buckets, the work item (one per block, JSON), and the result (the values the block's
 * kernel computed, packed row after row as packedRows.ts says, as raw little-endian bytes, with its
 * run, block and dtype in NATS headers, cut into parts of at most the server's max payload).
 *
 * A work item names its block by index only: the worker rebuilds the run's schedule from the
 * item's sizes and block side, the same arithmetic the coordinator ran, so a block can never be
 * described inconsistently, and an index out of the schedule is refused.
 *
 * Layout of one run `R`:
 * - stream `PXL_R`, subject `pxl.R.work`, work-queue retention: the items; consumer `workers`.
 * - stream `PXL_R_results`, subject `pxl.R.result`, work-queue retention: results; consumer `coordinator`.
 *   A result larger than the max payload is several messages, part k of n carrying bytes
 *   [k * size, (k + 1) * size) of the block, size = ceil(bytes / n). They go on the result stream rather than through an
 *   Object Store: the object client hashes every chunk in JavaScript and stores metadata beside it,
 *   which made a 2 MiB result cost 50 to 170 ms each way against 5 to 15 ms as plain stream messages
 *   (measured on the 2-vCPU test machines); JetStream keeps them on file all the same.
 * Inputs live in the object store `pxl_inputs`, named by a hash of their bytes, shared by runs:
 * written once, read once per worker and run.
 */
import { endianness } from 'node:os';
import { UnsupportedError } from '../core/errors.js';
import { BLOCK_MODES, FLOAT_DTYPES, TRIANGLE_SKIP_MODES, type BlockMode, type FloatDType, type TriangleSkipMode } from '../blocks/index.js';

/**
 * Version of the item format; a worker refuses items of another version with a reason, so that
 * workers that compute a block differently never put their bytes into the same run's file. Version
 * 4: float32 blocks are computed in float32 (version 3: in float64, rounded once). Version 5: a
 * float32 inner product whose last rectangle's product underflows is computed in float64.
 */
export const PROTOCOL_VERSION = 5;

/**
 * Inputs and results travel as the raw bytes of typed arrays, which are in the machine's byte
 * order: little-endian wherever the coordinator and workers are expected to run. A process on a
 * big-endian machine (s390x, big-endian POWER) refuses to join instead of exchanging bytes that
 * the others would read as other numbers.
 * @throws UnsupportedError on a big-endian machine.
 */
export function checkByteOrder(order: 'LE' | 'BE' = endianness()): void {
  if (order !== 'LE') throw new UnsupportedError('this machine is big-endian; pxl coordinators and workers exchange little-endian bytes, so run this process on a little-endian machine (x86-64, ARM64, little-endian POWER)');
}

/** Names of a run's streams, subjects, consumers and result bucket. */
export interface RunNames {
  readonly workStream: string;
  readonly workSubject: string;
  readonly resultStream: string;
  readonly resultSubject: string;
  /** Core subject on which the run's live coordinator answers (runClaim.ts). */
  readonly coordinatorSubject: string;
  /** The results bucket of protocol version 1, removed with the run in case an older coordinator left it. */
  readonly resultBucket: string;
}

/** The names of run `runId` (hex digits, so valid in every NATS name). */
export function runNames(runId: string): RunNames {
  return {
    workStream: `PXL_${runId}`,
    workSubject: `pxl.${runId}.work`,
    resultStream: `PXL_${runId}_results`,
    resultSubject: `pxl.${runId}.result`,
    coordinatorSubject: `pxl.${runId}.coordinator`,
    resultBucket: `pxl_${runId}`,
  };
}

/** Subject filter that matches every run's work subject: how workers find runs. */
export const WORK_SUBJECTS = 'pxl.*.work';
/** The durable consumer workers share on a run's work stream. */
export const WORKER_CONSUMER = 'workers';
/** The durable consumer of the coordinator on a run's result stream. */
export const COORDINATOR_CONSUMER = 'coordinator';
/** Object store of inputs, shared by runs and named by content. */
export const INPUT_BUCKET = 'pxl_inputs';
/**
 * Core NATS subject on which a coordinator names a run (`{"run": id}`) once its first items are in
 * the work stream (not stored): idle workers look at once instead of at their next listing, which
 * they still make every second for runs they did not hear of (a worker that joined later, a
 * message lost in a reconnection).
 */
export const RUN_SUBJECT = 'pxl.runs';
/** Core NATS subject of worker heartbeats (not stored). */
export const HEARTBEAT_SUBJECT = 'pxl.heartbeat';
/** Heartbeat period of a worker, and how long the coordinator counts a silent worker as live. */
export const HEARTBEAT_MS = 1000;
export const WORKER_LIVE_MS = 3500;

/** The built-in PCF operation, as a work item names it. */
export interface PcfItemOp {
  readonly name: 'pxl.pcf';
  readonly kind: 'l1' | 'lp' | 'l2inner';
  /** Exponent of `'lp'`; 1 otherwise. */
  readonly p: number;
  readonly skip: TriangleSkipMode;
  /** Element type of the result. */
  readonly dtype: FloatDType;
}

/**
 * A BlockOp from a kernel module, as a work item names it: the module as the worker's allow-list
 * spells it (`--modules`), the name of its export, and JSON parameters. The export is a
 * {@link ClusterOpFactory}; a worker imports only modules on its own allow-list.
 */
export interface ModuleItemOp {
  readonly name: 'module';
  readonly module: string;
  readonly export: string;
  /** Handed to the factory as they are (JSON). */
  readonly params: unknown;
  /** Element type of the result. */
  readonly dtype: FloatDType;
}

/** The operation of a work item. */
export type ItemOp = PcfItemOp | ModuleItemOp;

/** One block of work. */
export interface WorkItem {
  readonly v: number;
  readonly run: string;
  readonly op: ItemOp;
  /**
   * Object names in {@link INPUT_BUCKET} of the row and column PCF sets (the same for pdist);
   * empty for a module op.
   */
  readonly rows: string;
  readonly cols: string;
  /** The schedule: matrix size, mode and block side; `block` indexes its blocks. */
  readonly nRows: number;
  readonly nCols: number;
  readonly mode: BlockMode;
  readonly blockSide: number;
  readonly block: number;
  /** The consumer's ack wait in ms: the worker sends heartbeats at a third of it. */
  readonly ackWait: number;
}

/** Headers of a result message. */
export const HEADER = {
  run: 'Pxl-Run',
  block: 'Pxl-Block',
  dtype: 'Pxl-Dtype',
  worker: 'Pxl-Worker',
  /** `k/n`: this message holds part k (from 0) of the block's n parts; absent for a one-part result. */
  part: 'Pxl-Part',
  /** Why the worker refused the item; the message then has no values. */
  error: 'Pxl-Error',
} as const;

const OP_KINDS = ['l1', 'lp', 'l2inner'] as const;

function isSize(value: unknown, min: number): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min;
}

/**
 * Reads a work item from its JSON bytes, checking every field a worker relies on.
 * @throws UnsupportedError saying what is wrong: the worker rejects the item with that reason.
 */
export function decodeWorkItem(bytes: Uint8Array): WorkItem {
  let item: Partial<Record<keyof WorkItem, unknown>>;
  try {
    item = JSON.parse(new TextDecoder().decode(bytes)) as typeof item;
  } catch {
    throw new UnsupportedError('the work item is not JSON');
  }
  if (item === null || typeof item !== 'object') throw new UnsupportedError('the work item is not a JSON object');
  if (item.v !== PROTOCOL_VERSION) throw new UnsupportedError(`the work item has format version ${String(item.v)}; this worker reads version ${PROTOCOL_VERSION} (run the same pxl version on coordinator and workers)`);
  const op = item.op as (Partial<Record<keyof PcfItemOp, unknown>> & { name?: unknown }) | null;
  if (op === null || typeof op !== 'object') throw new UnsupportedError('the work item names no operation');
  if (op.name === 'module') {
    const m = op as Partial<Record<keyof ModuleItemOp, unknown>>;
    if (typeof m.module !== 'string' || m.module === '' || m.module.length > 1000) throw new UnsupportedError('the work item names no kernel module');
    if (typeof m.export !== 'string' || !/^[A-Za-z_$][\w$]{0,99}$/.test(m.export)) throw new UnsupportedError(`the work item's export ${JSON.stringify(m.export)} is not a JavaScript name`);
    for (const name of ['rows', 'cols'] as const) if (item[name] !== '') throw new UnsupportedError(`a module op's work item has no ${name}`);
  } else {
    if (op.name !== 'pxl.pcf') throw new UnsupportedError(`this worker runs the built-in operation 'pxl.pcf' and the kernel modules on its allow-list (--modules), not ${JSON.stringify(op.name)}`);
    if (!OP_KINDS.includes(op.kind as (typeof OP_KINDS)[number])) throw new UnsupportedError(`unknown PCF operation kind ${JSON.stringify(op.kind)}`);
    if (typeof op.p !== 'number' || !(op.p >= 1) || !Number.isFinite(op.p)) throw new UnsupportedError(`the exponent p must be a finite number >= 1, got ${JSON.stringify(op.p)}`);
    if (!TRIANGLE_SKIP_MODES.includes(op.skip as TriangleSkipMode)) throw new UnsupportedError(`unknown triangle skip mode ${JSON.stringify(op.skip)}`);
    for (const name of ['rows', 'cols'] as const) {
      if (typeof item[name] !== 'string' || !/^pcf-[0-9a-f]{64}$/.test(item[name])) throw new UnsupportedError(`the work item's ${name} is not an input name`);
    }
  }
  if (!FLOAT_DTYPES.includes(op.dtype as FloatDType)) throw new UnsupportedError(`unknown result dtype ${JSON.stringify(op.dtype)}`);
  if (typeof item.run !== 'string' || !/^[0-9a-f]{1,64}$/.test(item.run)) throw new UnsupportedError('the work item has no valid run id');
  if (!isSize(item.nRows, 1) || !isSize(item.nCols, 1) || !isSize(item.blockSide, 1) || !isSize(item.block, 0) || !isSize(item.ackWait, 1)) {
    throw new UnsupportedError('the work item lacks its sizes (nRows, nCols, blockSide, block, ackWait)');
  }
  if (!BLOCK_MODES.includes(item.mode as BlockMode)) throw new UnsupportedError(`unknown block mode ${JSON.stringify(item.mode)}`);
  return item as unknown as WorkItem;
}

/**
 * The part `k` of `n` a result message says it is (`Pxl-Part: k/n`; a result without the header is
 * part 0 of 1), or undefined for a header that is not one.
 */
export function partOf(header: string | undefined): { k: number; n: number } | undefined {
  if (header === undefined || header === '') return { k: 0, n: 1 };
  const m = /^(\d{1,9})\/(\d{1,9})$/.exec(header);
  if (m === null) return undefined;
  const k = Number(m[1]);
  const n = Number(m[2]);
  return k < n ? { k, n } : undefined;
}

/** How many parts a result of `length` bytes takes when a part may hold `maxPart` bytes. */
export function partCount(length: number, maxPart: number): number {
  return Math.max(1, Math.ceil(length / maxPart));
}

/** The size of every part but the last (which holds the rest) of a result of `length` bytes in `parts` parts. */
export function partBytes(length: number, parts: number): number {
  return Math.ceil(length / parts);
}

/** The JSON bytes of `item`. */
export function encodeWorkItem(item: WorkItem): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(item));
}

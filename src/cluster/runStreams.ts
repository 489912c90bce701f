/**
 * Creating and removing one run's JetStream resources: the work and result streams with their
 * durable consumers, and the bucket of large results. Removal is idempotent (a missing resource
 * is what removal wants), so a coordinator can clear what a killed predecessor left.
 */
import { AckPolicy, RetentionPolicy, StorageType, type JetStreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { COORDINATOR_CONSUMER, HEADER, WORKER_CONSUMER, type RunNames } from './protocol.js';

/** Whether `error` says the stream (or consumer) does not exist. */
function notFound(error: unknown): boolean {
  return /not found/i.test((error as Error).message ?? '');
}

/** Deletes a stream; a stream that is not there is fine. */
export async function deleteStream(jsm: JetStreamManager, name: string): Promise<void> {
  try {
    await jsm.streams.delete(name);
  } catch (error) {
    if (!notFound(error)) throw error;
  }
}

/** Removes every resource of a run. */
export async function removeRun(jsm: JetStreamManager, names: RunNames): Promise<void> {
  await deleteStream(jsm, names.workStream);
  await deleteStream(jsm, names.resultStream);
  // The results bucket of protocol version 1 (an object store is the stream OBJ_<bucket>).
  await deleteStream(jsm, `OBJ_${names.resultBucket}`);
}

/**
 * Creates a run's streams and consumers on file storage, so a restarted server keeps them, with
 * `replicas` copies in a NATS cluster.
 * Items are explicitly acked; one held longer than `ackWaitMs` without a heartbeat goes to
 * another worker, however often that happens.
 */
export async function createRun(jsm: JetStreamManager, names: RunNames, ackWaitMs: number, replicas = 1): Promise<void> {
  await jsm.streams.add({ name: names.workStream, subjects: [names.workSubject], retention: RetentionPolicy.Workqueue, storage: StorageType.File, num_replicas: replicas });
  await jsm.streams.add({ name: names.resultStream, subjects: [names.resultSubject], retention: RetentionPolicy.Workqueue, storage: StorageType.File, num_replicas: replicas });
  await addWorkerConsumer(jsm, names, ackWaitMs);
  await addCoordinatorConsumer(jsm, names);
}

async function addWorkerConsumer(jsm: JetStreamManager, names: RunNames, ackWaitMs: number): Promise<void> {
  await jsm.consumers.add(names.workStream, { durable_name: WORKER_CONSUMER, ack_policy: AckPolicy.Explicit, ack_wait: nanos(ackWaitMs), max_deliver: -1, max_ack_pending: -1 });
}

async function addCoordinatorConsumer(jsm: JetStreamManager, names: RunNames): Promise<void> {
  await jsm.consumers.add(names.resultStream, { durable_name: COORDINATOR_CONSUMER, ack_policy: AckPolicy.Explicit, ack_wait: nanos(60_000), max_deliver: -1, max_ack_pending: -1 });
}

/**
 * Takes over the streams a killed coordinator of the same run left (creating what is missing): what
 * they hold is kept. The coordinator's consumer is made afresh, so the results its predecessor held
 * unacknowledged come at once instead of after their ack wait; the workers' consumer keeps its
 * items in flight and takes `ackWaitMs`.
 */
export async function reopenRun(jsm: JetStreamManager, names: RunNames, ackWaitMs: number, replicas = 1): Promise<void> {
  const exists = async (stream: string): Promise<boolean> => {
    try {
      await jsm.streams.info(stream);
      return true;
    } catch (error) {
      if (notFound(error)) return false;
      throw error;
    }
  };
  if (!(await exists(names.workStream)) || !(await exists(names.resultStream))) {
    await removeRun(jsm, names);
    await createRun(jsm, names, ackWaitMs, replicas);
    return;
  }
  try {
    await jsm.consumers.delete(names.resultStream, COORDINATOR_CONSUMER);
  } catch (error) {
    if (!notFound(error)) throw error;
  }
  await addCoordinatorConsumer(jsm, names);
  try {
    await jsm.consumers.update(names.workStream, WORKER_CONSUMER, { ack_wait: nanos(ackWaitMs) });
  } catch (error) {
    if (!notFound(error)) throw error;
    await addWorkerConsumer(jsm, names, ackWaitMs);
  }
}

/** What a run's streams hold for a resumed coordinator. */
export interface RunLeftovers {
  /** Blocks whose item is still in the work stream (queued, or taken by a worker and not acked). */
  readonly queued: ReadonlySet<number>;
  /** Blocks with a result (or part of one) in the result stream. */
  readonly delivered: ReadonlySet<number>;
}

/**
 * Visits every message of `stream` (on `subject`) still stored, skipping the gaps that acked
 * messages leave in a work-queue stream (the server's next-by-subject lookup, one request per
 * message held).
 */
async function eachStored(jsm: JetStreamManager, stream: string, subject: string, visit: (msg: { data: Uint8Array; header: (name: string) => string | undefined }) => void): Promise<void> {
  let seq = 1;
  for (;;) {
    let msg;
    try {
      // next_by_subj is part of the server's message get request (2.9 and later), not of the client's type.
      msg = await jsm.streams.getMessage(stream, { seq, next_by_subj: subject } as unknown as { seq: number });
    } catch (error) {
      if (notFound(error)) return;
      throw error;
    }
    if (msg === null) return;
    visit({ data: msg.data, header: (name) => msg.header.get(name) || undefined });
    seq = msg.seq + 1;
  }
}

/**
 * The blocks a killed coordinator's run still has in its streams. The items' and results' blocks
 * are read from each stored message; a message that names no block is skipped.
 */
export async function runLeftovers(jsm: JetStreamManager, names: RunNames): Promise<RunLeftovers> {
  const queued = new Set<number>();
  const delivered = new Set<number>();
  await eachStored(jsm, names.workStream, names.workSubject, (msg) => {
    try {
      const block = (JSON.parse(new TextDecoder().decode(msg.data)) as { block?: unknown }).block;
      if (typeof block === 'number') queued.add(block);
    } catch {
      // Not an item of ours: nothing to count.
    }
  });
  await eachStored(jsm, names.resultStream, names.resultSubject, (msg) => {
    const block = Number(msg.header(HEADER.block));
    if (Number.isInteger(block) && msg.header(HEADER.error) === undefined) delivered.add(block);
  });
  return { queued, delivered };
}

/**
 * Creating and removing one run's JetStream resources: the work and result streams with their
 * durable consumers, and the bucket of large results. Removal is idempotent (a missing resource
 * is what removal wants), so a coordinator can clear what a killed predecessor left.
 */
import { AckPolicy, RetentionPolicy, StorageType, type JetStreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { COORDINATOR_CONSUMER, WORKER_CONSUMER, type RunNames } from './protocol.js';

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
  // An object store is the stream OBJ_<bucket>.
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
  await jsm.consumers.add(names.workStream, { durable_name: WORKER_CONSUMER, ack_policy: AckPolicy.Explicit, ack_wait: nanos(ackWaitMs), max_deliver: -1, max_ack_pending: -1 });
  await jsm.consumers.add(names.resultStream, { durable_name: COORDINATOR_CONSUMER, ack_policy: AckPolicy.Explicit, ack_wait: nanos(60_000), max_deliver: -1 });
}

/**
 * The inputs bucket: the Object Store `pxl_inputs` where a coordinator puts a run's PCF sets once,
 * named by the SHA-256 of their bytes, and every worker gets them from.
 *
 * The object client hashes every chunk it puts or gets (the object's digest) with a SHA-256 written
 * in JavaScript unless told to use the runtime's own: for an input of 6.4 MB (4,000 PCFs of 100
 * breakpoints) that was 120 ms of CPU to put and 150 ms to get, against 25 and 45 ms with Node's
 * hash, on the critical path of every run (a worker computes nothing before its input is in).
 * Chunks of about the server's max payload rather than the client's 128 KiB default take fewer
 * acknowledged publications to put.
 */
import { getSha256Backend, Objm, setSha256Backend, StorageType } from '@nats-io/obj';
import type { JetStreamClient } from '@nats-io/jetstream';
import { UnsupportedError } from '../core/errors.js';
import { INPUT_BUCKET } from './protocol.js';

/** Room a chunk leaves below the server's max payload (a chunk message has no headers of ours). */
const CHUNK_ROOM = 4096;

/**
 * The object stores of `js`, hashing with Node's SHA-256. The backend is a setting of the whole
 * process; both backends compute the same digest, so other object stores of the process only get
 * faster.
 */
export function objectStores(js: JetStreamClient): Objm {
  if (getSha256Backend() !== 'native') setSha256Backend('native');
  return new Objm(js);
}

/**
 * Puts `bytes` under `name` in the inputs bucket unless an earlier run did, in chunks that fit
 * the server's `maxPayload`.
 */
export async function putInput(objm: Objm, name: string, bytes: Uint8Array, replicas: number, maxPayload: number): Promise<void> {
  const store = await objm.create(INPUT_BUCKET, { replicas, storage: StorageType.File });
  const info = await store.info(name);
  if (info !== null && info.size === bytes.length) return;
  const chunk = Math.max(128 * 1024, maxPayload - CHUNK_ROOM);
  await store.putBlob({ name, options: { max_chunk_size: chunk } }, bytes);
}

/**
 * The bytes of input `name`, digest checked by the client.
 * @throws UnsupportedError when the bucket has no such object.
 */
export async function getInput(objm: Objm, name: string): Promise<Uint8Array> {
  const store = await objm.open(INPUT_BUCKET);
  const bytes = await store.getBlob(name);
  if (bytes === null) throw new UnsupportedError(`the input ${name} is not in the bucket ${INPUT_BUCKET}`);
  return bytes;
}

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
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { DeviceUnavailableError, UnsupportedError } from '../core/errors.js';
import { INPUT_BUCKET } from './protocol.js';

/** Room a chunk leaves below the server's max payload (a chunk message has no headers of ours). */
const CHUNK_ROOM = 4096;
/** How long new copies of the inputs bucket have to catch up with it. */
const REPLICAS_CATCH_UP_MS = 30_000;
/** How the object client spells a SHA-256 digest. */
const DIGEST_PREFIX = 'SHA-256=';

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
 * Gives the inputs bucket at least `replicas` copies when it exists with fewer: the bucket outlives
 * runs, and the first run on a server (with one copy by default) creates it; a later run asking for
 * three copies would otherwise keep its inputs on one server of the cluster.
 */
export async function raiseInputReplicas(jsm: JetStreamManager, replicas: number): Promise<void> {
  if (replicas <= 1) return;
  const stream = `OBJ_${INPUT_BUCKET}`;
  let info;
  try {
    info = await jsm.streams.info(stream);
  } catch (error) {
    if (/not found/i.test((error as Error).message)) return;
    throw error;
  }
  const config = info.config;
  if (config.num_replicas >= replicas) return;
  // A single server takes the update without complaint and then never elects the new copies, so
  // the wait below would run out; it refuses new streams of several copies in these words.
  if (info.cluster === undefined) throw new Error('replicas > 1 not supported in non-clustered mode');
  await jsm.streams.update(stream, { ...config, num_replicas: replicas });
  // The stream elects a leader among its new copies, and its requests time out until it has one.
  const until = Date.now() + REPLICAS_CATCH_UP_MS;
  for (;;) {
    const cluster = (await jsm.streams.info(stream)).cluster;
    const peers = cluster?.replicas ?? [];
    if (cluster?.leader !== undefined && peers.length >= replicas - 1 && peers.every((p) => p.current)) return;
    if (Date.now() > until) throw new DeviceUnavailableError(`the ${replicas} copies of the NATS stream ${stream} did not catch up within ${REPLICAS_CATCH_UP_MS / 1000} s; check the NATS cluster's health`, [stream]);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Puts `bytes` under `name` in the inputs bucket unless an earlier run did, in chunks that fit
 * the server's `maxPayload`.
 */
export async function putInput(objm: Objm, name: string, bytes: Uint8Array, replicas: number, maxPayload: number): Promise<void> {
  const store = await objm.create(INPUT_BUCKET, { replicas, storage: StorageType.File });
  const info = await store.info(name);
  // An object of another digest under the name (changed in the store) is replaced.
  if (info !== null && info.size === bytes.length && `pcf-${digestHex(info.digest) ?? ''}` === name) return;
  const chunk = Math.max(128 * 1024, maxPayload - CHUNK_ROOM);
  await store.putBlob({ name, options: { max_chunk_size: chunk } }, bytes);
}

/** The SHA-256 in an object's `digest` (`SHA-256=` and base64url, or hex from other clients) as hex. */
function digestHex(digest: string): string | undefined {
  if (!digest.startsWith(DIGEST_PREFIX)) return undefined;
  const value = digest.slice(DIGEST_PREFIX.length);
  if (/^[0-9a-f]{64}$/i.test(value)) return value.toLowerCase();
  const bytes = Buffer.from(value, 'base64url');
  return bytes.length === 32 ? bytes.toString('hex') : undefined;
}

/**
 * The bytes of input `name` (`pcf-` and the SHA-256 of its bytes, see pcfBlob.ts), read into one
 * buffer of the object's size. The client checks the bytes against the digest the object's
 * metadata holds, and this function checks that digest against the name, so the bytes are the
 * ones the name says without hashing them a second time.
 * @throws UnsupportedError when the bucket has no such object, or its digest is not its name's.
 */
export async function getInput(objm: Objm, name: string): Promise<Uint8Array> {
  const store = await objm.open(INPUT_BUCKET);
  const found = await store.get(name);
  if (found === null) throw new UnsupportedError(`the input ${name} is not in the bucket ${INPUT_BUCKET}`);
  if (`pcf-${digestHex(found.info.digest) ?? ''}` !== name) {
    await found.data.cancel().catch(() => undefined);
    throw new UnsupportedError(`the input ${name} does not match its hash (its digest in the bucket is ${found.info.digest})`);
  }
  const bytes = new Uint8Array(found.info.size);
  let at = 0;
  try {
    // The stream fails when the bytes do not match the digest.
    for await (const chunk of found.data) {
      if (at + chunk.byteLength > bytes.length) throw new Error(`it holds more than the ${bytes.length} bytes its metadata says`);
      bytes.set(chunk, at);
      at += chunk.byteLength;
    }
    const error = await found.error;
    if (error) throw error;
  } catch (error) {
    throw new UnsupportedError(`the input ${name} could not be read from the bucket ${INPUT_BUCKET}: ${(error as Error).message}`);
  }
  if (at !== bytes.length) throw new UnsupportedError(`the input ${name} has ${at} bytes, not the ${bytes.length} its metadata says`);
  return bytes;
}

/**
 * inputBucket.ts against a real nats-server: an input put under its hash comes back byte for byte,
 * in chunks of about the max payload; an object whose digest is not its name's is refused, and
 * replaced by the next put of the right bytes.
 */
import { jetstream } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomPcfs } from '../src/index.js';
import { getInput, objectStores, putInput } from '../src/cluster/inputBucket.js';
import { blobName, decodePcfSet, encodePcfSet } from '../src/cluster/pcfBlob.js';
import { INPUT_BUCKET } from '../src/cluster/protocol.js';
import { natsServerAvailable, startNatsServer, type NatsTestServer } from './helpers/natsServer.js';

const runThem = (await natsServerAvailable()) || process.env.CI === 'true';

describe.skipIf(!runThem)('the inputs bucket', () => {
  let server: NatsTestServer;
  let nc: NatsConnection;
  beforeAll(async () => {
    server = await startNatsServer();
    nc = await connect({ servers: server.url });
  });
  afterAll(async () => {
    await nc?.close();
    await server?.stop();
  });

  it('gives back the bytes of an input put under its hash, in chunks of about the max payload', async () => {
    const set = randomPcfs({ n: 3000, points: 30, seed: 5 });
    const bytes = encodePcfSet(set);
    const name = blobName(bytes);
    const objm = objectStores(jetstream(nc));
    await putInput(objm, name, bytes, 1, nc.info!.max_payload);
    const info = await (await objm.open(INPUT_BUCKET)).info(name);
    expect(info!.chunks).toBe(Math.ceil(bytes.length / (nc.info!.max_payload - 4096)));
    const back = await getInput(objm, name);
    expect(Buffer.from(back).equals(Buffer.from(bytes))).toBe(true);
    expect(Array.from(decodePcfSet(back, name).values)).toEqual(Array.from(set.values));
  });

  it('refuses an object whose digest is not its name\'s, and a put of the right bytes replaces it', async () => {
    const bytes = encodePcfSet(randomPcfs({ n: 10, points: 5, seed: 6 }));
    const name = blobName(bytes);
    const objm = objectStores(jetstream(nc));
    const other = bytes.slice();
    other[other.length - 1]! ^= 1;
    await (await objm.create(INPUT_BUCKET)).putBlob({ name }, other);
    await expect(getInput(objm, name)).rejects.toThrow(`the input ${name} does not match its hash`);
    await putInput(objm, name, bytes, 1, nc.info!.max_payload);
    expect(Buffer.from(await getInput(objm, name)).equals(Buffer.from(bytes))).toBe(true);
  });

  it('says which input is missing', async () => {
    const name = `pcf-${'0'.repeat(64)}`;
    const objm = objectStores(jetstream(nc));
    await objm.create(INPUT_BUCKET);
    await expect(getInput(objm, name)).rejects.toThrow(`the input ${name} is not in the bucket ${INPUT_BUCKET}`);
  });
});

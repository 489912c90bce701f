/**
 * natsTransport.ts against a real nats-server: messages larger than a socket read go out in
 * pieces and come back byte for byte with their headers, and a message whose buffer was handed
 * back (and taken by later messages) is still acknowledged to the right consumer; a first
 * connection that timed out leaves no socket open behind it.
 */
import { AckPolicy, jetstream, jetstreamManager, RetentionPolicy } from '@nats-io/jetstream';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectCluster } from '../src/cluster/connection.js';
import { connectNats, releaseMessage } from '../src/cluster/natsTransport.js';
import { DeviceUnavailableError } from '../src/index.js';
import { natsServerAvailable, startNatsServer, type NatsTestServer } from './helpers/natsServer.js';

const runThem = (await natsServerAvailable()) || process.env.CI === 'true';

describe('a first connection that times out', () => {
  it('closes its socket, so the process can end once the error is reported', async () => {
    // A port that accepts connections and never speaks: the client waits for the INFO of a NATS
    // server until its connect timeout.
    const accepted: Socket[] = [];
    const silent = createServer((socket) => accepted.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    try {
      await expect(connectCluster({ nats: `nats://127.0.0.1:${port}`, connectTimeout: 0.3 }, 'test')).rejects.toThrow(DeviceUnavailableError);
      expect(accepted).toHaveLength(1);
      const socket = accepted[0]!;
      if (!socket.destroyed) await new Promise((resolve) => socket.once('close', resolve));
      expect(socket.destroyed).toBe(true);
    } finally {
      for (const s of accepted) s.destroy();
      silent.close();
    }
  }, 20_000);
});

describe.skipIf(!runThem)('the cluster NATS transport', () => {
  let server: NatsTestServer;
  let sender: NatsConnection;
  let receiver: NatsConnection;
  beforeAll(async () => {
    server = await startNatsServer();
    sender = await connectNats({ servers: server.url });
    receiver = await connectNats({ servers: server.url });
  });
  afterAll(async () => {
    await sender?.close();
    await receiver?.close();
    await server?.stop();
  });

  it('delivers large messages whole, and acknowledges messages whose buffers were handed back', async () => {
    const jsm = await jetstreamManager(receiver);
    await jsm.streams.add({ name: 'T', subjects: ['t.x'], retention: RetentionPolicy.Workqueue });
    await jsm.consumers.add('T', { durable_name: 'c', ack_policy: AckPolicy.Explicit });
    const count = 6;
    const size = 900_000;
    const sent = Array.from({ length: count }, (_, k) => new Uint8Array(size).map((_, i) => (i * 7 + k) % 251));
    const js = jetstream(sender);
    await Promise.all(sent.map((data, k) => {
      const h = headers();
      h.set('Pxl-Block', String(k));
      return js.publish('t.x', data, { headers: h });
    }));
    const consumer = await jetstream(receiver).consumers.get('T', 'c');
    const messages = await consumer.consume({ max_messages: 2 });
    const held = [];
    for await (const msg of messages) {
      const k = Number(msg.headers?.get('Pxl-Block'));
      expect(Buffer.from(msg.data).equals(Buffer.from(sent[k]!))).toBe(true);
      releaseMessage(msg);
      held.push(msg);
      if (held.length === count) break;
    }
    await messages.close();
    for (const msg of held) msg.ack();
    await receiver.flush();
    // Acknowledged messages leave a work-queue stream; one acked to a wrong subject would stay.
    let left = -1;
    for (let tries = 0; tries < 50 && left !== 0; tries++) {
      left = (await jsm.streams.info('T')).state.messages;
      if (left !== 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(left).toBe(0);
    expect((await jsm.consumers.info('T', 'c')).num_ack_pending).toBe(0);
  });
});

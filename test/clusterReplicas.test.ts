/**
 * `--replicas` (cluster.replicas) against real servers: more copies than the servers can keep is an
 * OptionError that says what to change, on a single server and on a cluster of three; on the
 * cluster, a run asking for three copies gives them to the inputs bucket that an earlier run made
 * with one, and writes the same bytes as a local run.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OptionError, pdist, randomPcfs } from '../src/index.js';
import { INPUT_BUCKET } from '../src/cluster/protocol.js';
import { natsServerAvailable, startNatsCluster, startNatsServer, type NatsTestCluster, type NatsTestServer } from './helpers/natsServer.js';
import { startPxl, type PxlProcess } from './helpers/pxlProcess.js';

const runThem = (await natsServerAvailable()) || process.env.CI === 'true';

let dir: string;
const at = (name: string): string => join(dir, name);
const processes: PxlProcess[] = [];
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pxl-cluster-replicas-'));
});
afterAll(async () => {
  for (const p of processes) await p.kill();
  for (const stop of stops) await stop();
  await rm(dir, { recursive: true, force: true });
});

async function inputReplicas(url: string): Promise<number> {
  const nc = await connect({ servers: url.split(',') });
  try {
    return (await (await jetstreamManager(nc)).streams.info(`OBJ_${INPUT_BUCKET}`)).config.num_replicas;
  } finally {
    await nc.close();
  }
}

describe.skipIf(!runThem)('replicas', () => {
  const X = randomPcfs({ n: 300, points: 10, seed: 41 });

  it('refuses more than one copy on a single server with OptionError, and leaves no partial file', async () => {
    const server: NatsTestServer = await startNatsServer();
    stops.push(() => server.stop());
    const run = pdist(X, { out: at('single.npy'), cluster: { nats: server.url, replicas: 2 } });
    await expect(run).rejects.toThrow(OptionError);
    await expect(run).rejects.toThrow(/cannot keep 2 copies .*--replicas \(cluster\.replicas\) must be at most the number of JetStream servers in its cluster, and 1 for a single server/);
    expect((await readdir(dir)).filter((f) => f.includes('single.npy'))).toEqual([]);
  }, 30_000);

  it('refuses more than one copy on a single server whose inputs bucket has one, at once and leaving the bucket as it was', async () => {
    const server: NatsTestServer = await startNatsServer();
    stops.push(() => server.stop());
    const worker = startPxl(['worker', '--nats', server.url, '--cores', '1']);
    processes.push(worker);
    await worker.line(/connected to/);
    await pdist(X, { out: at('first.npy'), cluster: { nats: server.url } });
    expect(await inputReplicas(server.url)).toBe(1);
    const run = pdist(X, { out: at('again.npy'), p: 2, cluster: { nats: server.url, replicas: 3 } });
    await expect(run).rejects.toThrow(OptionError);
    await expect(run).rejects.toThrow(/cannot keep 3 copies .*and 1 for a single server/);
    expect(await inputReplicas(server.url)).toBe(1);
    expect((await readdir(dir)).filter((f) => f.includes('again.npy'))).toEqual([]);
  }, 20_000);

  it('on a cluster of three: refuses five copies, and gives three to an inputs bucket made with one', async () => {
    const cluster: NatsTestCluster = await startNatsCluster(3);
    stops.push(() => cluster.stop());
    const worker = startPxl(['worker', '--nats', cluster.url, '--cores', '1']);
    processes.push(worker);
    await worker.line(/connected to/);
    await expect(pdist(X, { out: at('five.npy'), cluster: { nats: cluster.url, replicas: 5 } })).rejects.toThrow(OptionError);

    await pdist(X, { out: at('one.npy'), cluster: { nats: cluster.url } });
    expect(await inputReplicas(cluster.url)).toBe(1);
    await pdist(X, { out: at('three.npy'), p: 2, cluster: { nats: cluster.url, replicas: 3 } });
    expect(await inputReplicas(cluster.url)).toBe(3);
    await pdist(X, { out: at('three.local.npy'), p: 2 });
    expect((await readFile(at('three.npy'))).equals(await readFile(at('three.local.npy')))).toBe(true);
  }, 120_000);
});

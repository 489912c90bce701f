/**
 * A GPU worker (`pxl worker --device gpu`): it computes float32 pdist blocks with the WGSL kernels
 * and the file equals a local GPU run's; a float64 run is refused with the reason. Skips without a
 * WebGPU adapter (outside CI) and without nats-server.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdist, randomPcfs, UnsupportedError } from '../src/index.js';
import { gpu } from './fixtures/wgslGpu.js';
import { natsServerAvailable, startNatsServer, type NatsTestServer } from './helpers/natsServer.js';
import { startPxl, type PxlProcess } from './helpers/pxlProcess.js';

const runThem = gpu.run && ((await natsServerAvailable()) || process.env.CI === 'true');
let dir: string;
let server: NatsTestServer | undefined;
let worker: PxlProcess | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pxl-cluster-gpu-'));
});
afterAll(async () => {
  await worker?.kill();
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe.runIf(runThem)('a GPU worker', () => {
  it('computes float32 blocks as a local GPU run does, and refuses float64 runs with the reason', async () => {
    server = await startNatsServer();
    worker = startPxl(['worker', '--nats', server.url, '--device', 'gpu', '--id', 'gpu', '--verbose']);
    await worker.line(/the GPU, connected to/);
    const X = randomPcfs({ n: 700, points: 20, seed: 51 });
    await pdist(X, { out: join(dir, 'cluster.npy'), dtype: 'float32', minBlockSide: 256, cluster: { nats: server.url } });
    await pdist(X, { out: join(dir, 'local.npy'), dtype: 'float32', minBlockSide: 256, devices: ['gpu'] });
    expect((await readFile(join(dir, 'cluster.npy'))).equals(await readFile(join(dir, 'local.npy')))).toBe(true);
    await expect(pdist(X, { out: join(dir, 'f64.npy'), cluster: { nats: server.url } })).rejects.toThrow(UnsupportedError);
    await expect(pdist(X, { out: join(dir, 'f64.npy'), cluster: { nats: server.url } })).rejects.toThrow(/computes on its GPU, in float32/);
  }, 120_000);
});

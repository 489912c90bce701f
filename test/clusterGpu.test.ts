/**
 * A GPU worker (`pxl worker --device gpu`): it computes float32 pdist blocks with the WGSL kernels
 * and the file equals a local GPU run's; a float64 run is refused with the reason. A worker with
 * `--device all` computes on its cores and its GPU at once, and leaves float64 runs to the cores.
 * Skips without a WebGPU adapter (outside CI) and without nats-server.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeNpy, pdist, randomPcfs, UnsupportedError } from '../src/index.js';
import { gpu } from './fixtures/wgslGpu.js';
import { natsServerAvailable, startNatsServer, type NatsTestServer } from './helpers/natsServer.js';
import { startPxl, type PxlProcess } from './helpers/pxlProcess.js';

const runThem = gpu.run && ((await natsServerAvailable()) || process.env.CI === 'true');
let dir: string;
let server: NatsTestServer | undefined;
let worker: PxlProcess | undefined;
let both: PxlProcess | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pxl-cluster-gpu-'));
});
afterAll(async () => {
  await worker?.kill();
  await both?.kill();
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

describe.runIf(runThem)('a worker with --device all', () => {
  it('computes a float32 run on its core and its GPU, each entry as that device computes it locally, and a float64 run on its core alone', async () => {
    server ??= await startNatsServer();
    await worker?.kill();
    both = startPxl(['worker', '--nats', server.url, '--device', 'all', '--cores', '1', '--id', 'both', '--verbose']);
    await both.line(/: 1 core and the GPU, connected to/);
    const X = randomPcfs({ n: 2000, points: 20, seed: 52 });
    const options = { dtype: 'float32', minBlockSide: 256 } as const;
    await pdist(X, { ...options, out: join(dir, 'both.npy'), cluster: { nats: server.url } });
    await pdist(X, { ...options, out: join(dir, 'cpu32.npy') });
    await pdist(X, { ...options, out: join(dir, 'gpu32.npy'), devices: ['gpu'] });
    const [got, cpu, gpuRun] = await Promise.all(['both', 'cpu32', 'gpu32'].map(async (name) => decodeNpy(await readFile(join(dir, `${name}.npy`))).data as Float32Array));
    let fromCpu = 0;
    let fromGpu = 0;
    for (let k = 0; k < got!.length; k++) {
      const same = (a: number, b: number): boolean => Object.is(a, b);
      if (same(got![k]!, cpu![k]!)) fromCpu++;
      else if (same(got![k]!, gpuRun![k]!)) fromGpu++;
      else expect.fail(`entry ${k} is ${got![k]}, neither the CPU's ${cpu![k]} nor the GPU's ${gpuRun![k]}`);
    }
    expect(fromCpu + fromGpu).toBe(2000 * 2000);
    expect(both.stderr()).toMatch(/started on the GPU/);
    expect(both.stderr()).toMatch(/started on core 0/);

    const before = both.stderr().length;
    await pdist(X, { minBlockSide: 256, out: join(dir, 'both64.npy'), cluster: { nats: server.url } });
    await pdist(X, { minBlockSide: 256, out: join(dir, 'cpu64.npy') });
    expect((await readFile(join(dir, 'both64.npy'))).equals(await readFile(join(dir, 'cpu64.npy')))).toBe(true);
    const log64 = both.stderr().slice(before);
    expect(log64).toMatch(/started on core 0/);
    expect(log64).not.toMatch(/started on the GPU/);
  }, 120_000);
});

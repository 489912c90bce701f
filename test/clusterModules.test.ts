/**
 * User BlockOps from kernel modules on a cluster: a worker that lists the module in --modules
 * computes its blocks (the result checked entry by entry); a worker without it refuses them with
 * the reason, which reaches the caller, and keeps running.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runBlocksOnCluster, UnsupportedError } from '../src/index.js';
import { natsServerAvailable, startNatsServer, type NatsTestServer } from './helpers/natsServer.js';
import { startPxl, type PxlProcess } from './helpers/pxlProcess.js';

const runThem = (await natsServerAvailable()) || process.env.CI === 'true';
const MODULE = fileURLToPath(new URL('./fixtures/clusterTableOp.mjs', import.meta.url));
const processes: PxlProcess[] = [];
const servers: NatsTestServer[] = [];

afterAll(async () => {
  for (const p of processes) await p.kill();
  for (const s of servers) await s.stop();
});

async function serverWithWorker(extra: string[]): Promise<{ server: NatsTestServer; worker: PxlProcess }> {
  const server = await startNatsServer();
  servers.push(server);
  const worker = startPxl(['worker', '--nats', server.url, '--cores', '1', '--id', 'mod', ...extra]);
  processes.push(worker);
  await worker.line(/connected to/);
  return { server, worker };
}

describe.skipIf(!runThem)('kernel modules on a cluster', () => {
  it('runs the BlockOp of a module on the worker\'s allow-list', async () => {
    const { server } = await serverWithWorker(['--modules', `some-other-module,${MODULE}`]);
    const result = await runBlocksOnCluster({ module: MODULE, export: 'table', params: { scale: 2 }, nRows: 150, nCols: 130, blockSide: 64, cluster: { nats: server.url } });
    expect(result.shape).toEqual([150, 130]);
    let wrong = 0;
    for (let i = 0; i < 150; i++) for (let j = 0; j < 130; j++) if (result.data[i * 130 + j] !== 2 * (1000 * i + j)) wrong++;
    expect(wrong).toBe(0);
  }, 60_000);

  it('refuses a module that is not on the allow-list, with the reason, and the worker carries on', async () => {
    const { server, worker } = await serverWithWorker([]);
    const run = runBlocksOnCluster({ module: MODULE, export: 'table', params: { scale: 1 }, nRows: 10, nCols: 10, cluster: { nats: server.url } });
    await expect(run).rejects.toThrow(UnsupportedError);
    await expect(run).rejects.toThrow(`it is not on its allow-list (start the worker with --modules ${MODULE})`);
    expect(worker.child.exitCode).toBe(null);
  }, 60_000);
});

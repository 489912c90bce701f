/**
 * User BlockOps from kernel modules on a cluster: a worker that lists the module in --modules
 * computes its blocks (the result checked entry by entry, in memory and streamed into a `.npy`
 * file, and after a coordinator killed mid-run is resumed); a worker without it refuses them with
 * the reason, which reaches the caller, and keeps running. A block that a worker finishes while
 * the server is away is delivered once the server is back.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeNpy, OptionError, runBlocksOnCluster, runWorker, UnsupportedError } from '../src/index.js';
import { natsServerAvailable, startNatsServer, type NatsTestServer } from './helpers/natsServer.js';
import { startPxl, type PxlProcess } from './helpers/pxlProcess.js';

const runThem = (await natsServerAvailable()) || process.env.CI === 'true';
const MODULE = fileURLToPath(new URL('./fixtures/clusterTableOp.mjs', import.meta.url));
const GATED = fileURLToPath(new URL('./fixtures/gatedOp.mjs', import.meta.url));
const CHILD = fileURLToPath(new URL('./fixtures/clusterModuleRun.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const processes: PxlProcess[] = [];
const servers: NatsTestServer[] = [];
const dirs: string[] = [];

afterAll(async () => {
  for (const p of processes) await p.kill();
  for (const s of servers) await s.stop();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** The values of `scale * (1000 i + j)` that are wrong in a row-major `rows x cols` array. */
function wrongEntries(data: ArrayLike<number>, rows: number, cols: number, scale: number): number {
  let wrong = 0;
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) if (data[i * cols + j] !== scale * (1000 * i + j)) wrong++;
  return wrong;
}

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
    expect(wrongEntries(result.data, 150, 130, 2)).toBe(0);
  }, 60_000);

  it('streams the matrix into a .npy file, float32 and float64, and refuses resume without out', async () => {
    const { server } = await serverWithWorker(['--modules', MODULE]);
    const dir = await mkdtemp(join(tmpdir(), 'pxl-cluster-modules-'));
    dirs.push(dir);
    for (const dtype of ['float64', 'float32'] as const) {
      const out = join(dir, `table-${dtype}.npy`);
      const file = await runBlocksOnCluster({ module: MODULE, export: 'table', params: { scale: 2 }, nRows: 150, nCols: 130, blockSide: 64, dtype, out, cluster: { nats: server.url } });
      expect(file).toMatchObject({ shape: [150, 130], dtype, layout: 'dense', blocks: 9, blocksResumed: 0 });
      const npy = decodeNpy(await readFile(out));
      expect(npy.shape).toEqual([150, 130]);
      expect(npy.dtype).toBe(dtype);
      expect(wrongEntries(npy.data as ArrayLike<number>, 150, 130, 2)).toBe(0);
    }
    expect(await readdir(dir)).toEqual(['table-float32.npy', 'table-float64.npy']);
    await expect(runBlocksOnCluster({ module: MODULE, export: 'table', nRows: 10, nCols: 10, resume: true, cluster: { nats: server.url } })).rejects.toThrow(OptionError);
    await expect(runBlocksOnCluster({ module: MODULE, export: 'table', nRows: 10, nCols: 10, out: join(dir, 'x.json'), cluster: { nats: server.url } })).rejects.toThrow(/out must name a \.npy file/);
  }, 60_000);

  it('resumes a run into a file whose coordinator was killed, computing only the blocks its journal lacks', async () => {
    const { server } = await serverWithWorker(['--modules', MODULE]);
    const dir = await mkdtemp(join(tmpdir(), 'pxl-cluster-modules-'));
    dirs.push(dir);
    const out = join(dir, 'table.npy');
    // tsx loaded into this very process (tsx's command line would run the script in a grandchild,
    // which SIGKILL of its parent leaves running).
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, server.url, MODULE, out], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let said = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        said += chunk.toString();
        // Killed once about a third of the 1,672 blocks are in (the journal is flushed every
        // 250 ms, so some of them are on disk), long before the end.
        if (Number(/block (\d+)\n$/.exec(said)?.[1] ?? 0) >= 600) resolve();
      });
      child.once('exit', (code) => reject(new Error(`the coordinator ended (${String(code)}) before it was killed: ${said.slice(-200)}`)));
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(child.pid!, 'SIGKILL');
    await exited;
    expect(existsSync(out)).toBe(false);
    const file = await runBlocksOnCluster({ module: MODULE, export: 'table', params: { scale: 3 }, nRows: 700, nCols: 600, blockSide: 16, out, resume: true, cluster: { nats: server.url } });
    expect(file.blocks).toBe(Math.ceil(700 / 16) * Math.ceil(600 / 16));
    expect(file.blocksResumed).toBeGreaterThan(0);
    expect(file.blocksResumed).toBeLessThan(file.blocks);
    expect(wrongEntries(decodeNpy(await readFile(out)).data as ArrayLike<number>, 700, 600, 3)).toBe(0);
    expect((await readdir(dir)).filter((name) => name !== 'table.npy')).toEqual([]);
  }, 90_000);

  it('runs from the command line: pxl blocks MODULE --rows N --cols M -o FILE.npy --nats URL', async () => {
    const { server } = await serverWithWorker(['--modules', MODULE]);
    const dir = await mkdtemp(join(tmpdir(), 'pxl-cluster-modules-'));
    dirs.push(dir);
    const out = join(dir, 'cli.npy');
    const run = startPxl(['blocks', MODULE, '--export', 'table', '--params', '{"scale": 5}', '--rows', '150', '--cols', '130', '--block-side', '64', '--dtype', 'float32', '-o', out, '--nats', server.url]);
    processes.push(run);
    expect(await run.exit).toEqual({ code: 0, signal: null });
    expect(run.stderr()).toMatch(/^blocks: .*clusterTableOp\.mjs \(table\), 150 x 130, 19500 pairs in [\d.]+ s .* -> .*cli\.npy$/m);
    expect(run.stderr()).toMatch(/blocks per worker: mod 9 \(100%\)/);
    const npy = decodeNpy(await readFile(out));
    expect([npy.shape, npy.dtype]).toEqual([[150, 130], 'float32']);
    expect(wrongEntries(npy.data as ArrayLike<number>, 150, 130, 5)).toBe(0);
    const bad = startPxl(['blocks', MODULE, '--params', '{scale: 5}', '--rows', '2', '--cols', '2', '-o', join(dir, 'bad.npy'), '--nats', server.url]);
    processes.push(bad);
    expect((await bad.exit).code).toBe(2);
    expect(bad.stderr()).toMatch(/^pxl: --params must be JSON, as the module's factory receives it/m);
    expect(await readdir(dir)).toEqual(['cli.npy']);
  }, 60_000);

  it('delivers a block finished while the server was away once it is back, with no error of its own', async () => {
    const server = await startNatsServer();
    servers.push(server);
    const lines: string[] = [];
    let started!: () => void;
    const blockStarted = new Promise<void>((resolve) => (started = resolve));
    let open!: () => void;
    (globalThis as { pxlGate?: Promise<void> }).pxlGate = new Promise<void>((resolve) => (open = resolve));
    const stop = new AbortController();
    const worker = runWorker({
      nats: server.url, cores: 1, modules: [GATED], verbose: true, signal: stop.signal,
      log: (line) => {
        lines.push(line);
        if (/started/.test(line)) started();
      },
    });
    try {
      const run = runBlocksOnCluster({ module: GATED, export: 'gated', nRows: 10, nCols: 10, cluster: { nats: server.url, ackWait: 2000 } });
      await blockStarted;
      await server.down();
      // The worker's client notices the lost connection and starts reconnecting before the block ends.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      open();
      await new Promise((resolve) => setTimeout(resolve, 300));
      await server.up();
      const result = await run;
      expect(Array.from(result.data).every((v) => v === 7)).toBe(true);
      expect(lines.filter((line) => /Cannot read|undefined/.test(line))).toEqual([]);
    } finally {
      stop.abort();
      await worker;
    }
  }, 60_000);

  it('refuses a module that is not on the allow-list, with the reason, and the worker carries on', async () => {
    const { server, worker } = await serverWithWorker([]);
    const run = runBlocksOnCluster({ module: MODULE, export: 'table', params: { scale: 1 }, nRows: 10, nCols: 10, cluster: { nats: server.url } });
    await expect(run).rejects.toThrow(UnsupportedError);
    await expect(run).rejects.toThrow(`it is not on its allow-list (start the worker with --modules ${MODULE})`);
    await expect(run).rejects.toThrow(/^worker mod refused block 0 of this run: this worker does not run the kernel module/);
    expect(worker.child.exitCode).toBe(null);
  }, 60_000);

  it('refuses a BlockOp that computes its blocks column-major, with the reason, and the worker carries on', async () => {
    const { server, worker } = await serverWithWorker(['--modules', MODULE]);
    const run = runBlocksOnCluster({ module: MODULE, export: 'tableByColumns', params: { scale: 1 }, nRows: 10, nCols: 10, cluster: { nats: server.url } });
    await expect(run).rejects.toThrow(UnsupportedError);
    await expect(run).rejects.toThrow(/a cluster worker sends blocks row-major: leave outputLayout out/);
    expect(worker.child.exitCode).toBe(null);
  }, 60_000);
});

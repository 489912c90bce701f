/**
 * pdist, cdist and l2Kernel across `pxl worker` processes through a real nats-server (JetStream,
 * loopback, temporary store): results byte-identical to a local run, a worker SIGKILLed while it
 * computes, a coordinator killed and resumed, a server restarted mid-run, no workers at first, an
 * item a worker refuses, a server with a max payload of 4 KiB, the same run started twice at once,
 * a worker stopped while the server is away, and addresses and credentials that cannot work.
 * Workers run from bin/pxl.js (needs the build that `npm test` makes first).
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cdist, DeviceUnavailableError, l2Kernel, OptionError, pdist, randomPcfs, runWorker, type ClusterStatus, type PcfSet } from '../src/index.js';
import { run } from '../src/cli/main.js';
import { createRun, removeRun } from '../src/cluster/runStreams.js';
import { encodeWorkItem, HEADER, runNames, COORDINATOR_CONSUMER, PROTOCOL_VERSION } from '../src/cluster/protocol.js';
import { natsServerAvailable, startNatsServer, type NatsTestServer } from './helpers/natsServer.js';
import { startPxl, type PxlProcess } from './helpers/pxlProcess.js';

const available = await natsServerAvailable();
// In CI nats-server is installed by .ci/run, so a missing one fails these tests instead of skipping them.
const runThem = available || process.env.CI === 'true';

let dir: string;
const at = (name: string): string => join(dir, name);
const processes: PxlProcess[] = [];
const servers: NatsTestServer[] = [];

function worker(server: NatsTestServer, id: string, extra: string[] = []): PxlProcess {
  const p = startPxl(['worker', '--nats', server.url, '--cores', '1', '--id', id, '--verbose', ...extra]);
  processes.push(p);
  return p;
}

async function sameBytes(a: string, b: string): Promise<boolean> {
  return (await readFile(a)).equals(await readFile(b));
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pxl-cluster-'));
});
afterAll(async () => {
  for (const p of processes) await p.kill();
  for (const s of servers) await s.stop();
  await rm(dir, { recursive: true, force: true });
});

describe.skipIf(!runThem)('a cluster of two workers', () => {
  let server: NatsTestServer;
  const X: PcfSet = randomPcfs({ n: 1200, points: 20, seed: 11 });
  const Y: PcfSet = randomPcfs({ n: 300, points: 10, seed: 12 });

  beforeAll(async () => {
    server = await startNatsServer();
    servers.push(server);
    const started = [worker(server, 'w1'), worker(server, 'w2')];
    const lines = await Promise.all(started.map((w) => w.line(/connected to/)));
    for (const line of lines) expect(line).toMatch(/: 1 core, connected to /);
  });

  it('pdist, cdist and l2Kernel write the same bytes as a local run', async () => {
    const cluster = { nats: server.url, ackWait: 2000 };
    await pdist(X, { out: at('pdist.local.npy') });
    const file = await pdist(X, { out: at('pdist.cluster.npy'), cluster });
    expect(file.blocksResumed).toBe(0);
    expect(await sameBytes(at('pdist.cluster.npy'), at('pdist.local.npy'))).toBe(true);

    await cdist(X, Y, { out: at('cdist.local.npy'), p: 2, dtype: 'float32' });
    await cdist(X, Y, { out: at('cdist.cluster.npy'), p: 2, dtype: 'float32', cluster });
    expect(await sameBytes(at('cdist.cluster.npy'), at('cdist.local.npy'))).toBe(true);

    // Blocks of 1024 x 1024 float64 values (8 MiB) exceed the 1 MiB max payload: each goes as 9 part messages.
    await l2Kernel(X, { out: at('l2.local.npy') });
    await l2Kernel(X, { out: at('l2.cluster.npy'), cluster, minBlockSide: 1024 });
    expect(await sameBytes(at('l2.cluster.npy'), at('l2.local.npy'))).toBe(true);
  }, 90_000);

  it('reports a refused item with the worker\'s reason, and the worker carries on', async () => {
    const nc = await connect({ servers: server.url });
    try {
      const jsm = await jetstreamManager(nc);
      const js = jetstream(nc);
      const id = 'feedbeef00000001';
      const names = runNames(id);
      await createRun(jsm, names, 2000);
      const item = { v: PROTOCOL_VERSION, run: id, op: { name: 'evil.module' }, rows: '', cols: '', nRows: 1, nCols: 1, mode: 'full', blockSide: 1, block: 0, ackWait: 2000 };
      await js.publish(names.workSubject, encodeWorkItem(item as never));
      const consumer = await js.consumers.get(names.resultStream, COORDINATOR_CONSUMER);
      let msg = await consumer.next({ expires: 5000 });
      while (msg === null) msg = await consumer.next({ expires: 5000 });
      expect(msg.headers?.get(HEADER.error)).toBe("this worker runs the built-in operation 'pxl.pcf' and the kernel modules on its allow-list (--modules), not \"evil.module\"");
      msg.ack();
      await removeRun(jsm, names);
    } finally {
      await nc.close();
    }
    // The workers are still there and still compute.
    await pdist(Y, { out: at('after-refusal.npy'), cluster: { nats: server.url } });
    await pdist(Y, { out: at('after-refusal.local.npy') });
    expect(await sameBytes(at('after-refusal.npy'), at('after-refusal.local.npy'))).toBe(true);
  }, 60_000);

  it('resumes a coordinator killed with SIGKILL without recomputing its journaled blocks', async () => {
    const big = at('big.json');
    expect(await run(['random-pcfs', '--n', '4000', '--points', '20', '--seed', '5', '-o', big, '-q'], { interceptSigint: false })).toBe(0);
    const args = ['pdist', big, '-o', at('resumed.npy'), '--nats', server.url, '--ack-wait', '2000', '-q'];
    const coordinator = startPxl(args);
    processes.push(coordinator);
    // The journal lists finished blocks once it is flushed (about every second).
    for (;;) {
      const journal = (await readdir(dir)).find((f) => f.startsWith('.resumed.npy.') && f.endsWith('.journal'));
      if (journal !== undefined && (await readFile(at(journal), 'utf8')).split('\n').length > 3) break;
      if (coordinator.child.exitCode !== null) throw new Error(`the coordinator ended before journaling a block: ${coordinator.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await coordinator.kill();
    const { readPcfFile } = await import('../src/index.js');
    const set = await readPcfFile(big);
    const file = await pdist(set, { out: at('resumed.npy'), resume: true, cluster: { nats: server.url, ackWait: 2000 } });
    expect(file.blocksResumed).toBeGreaterThan(0);
    expect(file.blocksResumed).toBeLessThan(file.blocks);
    await pdist(set, { out: at('resumed.local.npy') });
    expect(await sameBytes(at('resumed.npy'), at('resumed.local.npy'))).toBe(true);
  }, 120_000);
});

describe.skipIf(!runThem)('three workers, one killed', () => {
  it('survives a worker killed with SIGKILL while it computes: its block is redelivered and the file is byte-identical', async () => {
    const server = await startNatsServer();
    servers.push(server);
    const X = randomPcfs({ n: 2000, points: 20, seed: 31 });
    const pool = [worker(server, 'victim'), worker(server, 'k1'), worker(server, 'k2')];
    await Promise.all(pool.map((w) => w.line(/connected to/)));
    const victim = pool[0]!;
    const statuses: ClusterStatus[] = [];
    const running = pdist(X, { out: at('killed.npy'), p: 3, minBlockSide: 100, cluster: { nats: server.url, ackWait: 1000, onStatus: (s) => statuses.push(s) } });
    const started = victim.line(/block \d+ of run [0-9a-f]+: started/);
    // A run that ends before the victim took a block would make this test pass for nothing.
    await Promise.race([started, running.then(() => Promise.reject(new Error('the run ended before the victim started a block; make it longer')))]);
    await victim.kill();
    const file = await running;
    await pdist(X, { out: at('killed.local.npy'), p: 3 });
    expect(await sameBytes(at('killed.npy'), at('killed.local.npy'))).toBe(true);
    const finished = statuses.find((s) => s.kind === 'finished');
    expect(finished?.kind === 'finished' && finished.shares.reduce((n, s) => n + s.blocks, 0)).toBe(file.blocks);
  }, 90_000);

  it('lets a worker stopped with SIGTERM deliver its blocks in flight and exit 0', async () => {
    const server = await startNatsServer();
    servers.push(server);
    const X = randomPcfs({ n: 1500, points: 20, seed: 33 });
    const leaver = worker(server, 'leaver');
    const stayer = worker(server, 'stayer');
    await Promise.all([leaver.line(/connected to/), stayer.line(/connected to/)]);
    const running = pdist(X, { out: at('sigterm.npy'), minBlockSide: 100, cluster: { nats: server.url, ackWait: 1000 } });
    await leaver.line(/block \d+ of run [0-9a-f]+: delivered/);
    process.kill(leaver.child.pid!, 'SIGTERM');
    expect((await leaver.exit).code).toBe(0);
    expect(leaver.stderr()).not.toMatch(/could not deliver|refused/);
    await running;
    await pdist(X, { out: at('sigterm.local.npy') });
    expect(await sameBytes(at('sigterm.npy'), at('sigterm.local.npy'))).toBe(true);
  }, 60_000);

  it('hands a killed worker\'s block to a worker that joins later', async () => {
    const server = await startNatsServer();
    servers.push(server);
    const X = randomPcfs({ n: 400, points: 20, seed: 32 });
    const victim = worker(server, 'alone');
    await victim.line(/connected to/);
    const running = pdist(X, { out: at('rescued.npy'), cluster: { nats: server.url, ackWait: 1000 } });
    await victim.line(/block \d+ of run [0-9a-f]+: started/);
    await victim.kill();
    // Only the rescuer is left, so the file completes only if the victim's block came back.
    worker(server, 'rescuer');
    await running;
    await pdist(X, { out: at('rescued.local.npy') });
    expect(await sameBytes(at('rescued.npy'), at('rescued.local.npy'))).toBe(true);
  }, 60_000);
});

describe.skipIf(!runThem)('a cluster whose server restarts, or that has no workers yet', () => {
  let server: NatsTestServer;
  const X: PcfSet = randomPcfs({ n: 1500, points: 20, seed: 21 });

  beforeAll(async () => {
    server = await startNatsServer();
    servers.push(server);
  });

  it('waits for a worker, says so, and finishes once one joins', async () => {
    const statuses: ClusterStatus[] = [];
    let joined: PxlProcess | undefined;
    const running = pdist(X, {
      out: at('waited.npy'),
      cluster: {
        nats: server.url,
        onStatus: (s) => {
          statuses.push(s);
          if (s.kind === 'waiting') joined ??= worker(server, 'late');
        },
      },
    });
    await running;
    expect(statuses[0]).toEqual({ kind: 'waiting', url: server.url, seconds: expect.any(Number) as number });
    expect(statuses.some((s) => s.kind === 'workers' && s.workers.includes('late'))).toBe(true);
    await pdist(X, { out: at('waited.local.npy') });
    expect(await sameBytes(at('waited.npy'), at('waited.local.npy'))).toBe(true);
  }, 60_000);

  it('loses nothing when the server is killed and restarted on its store mid-run', async () => {
    worker(server, 'second');
    const progress: number[] = [];
    const serverStatus: boolean[] = [];
    let restarting: Promise<void> | undefined;
    const running = pdist(X, {
      out: at('restarted.npy'),
      p: 2,
      minBlockSide: 100,
      onProgress: (p) => {
        progress.push(p.blocksDone);
        if (p.blocksDone === 5) restarting = server.restart();
      },
      cluster: { nats: server.url, ackWait: 1500, onStatus: (s) => s.kind === 'server' && serverStatus.push(s.connected) },
    });
    const file = await running;
    await restarting;
    expect(progress.length).toBe(file.blocks);
    // The coordinator said that it lost the server, and that it came back.
    expect(serverStatus).toEqual([false, true]);
    await pdist(X, { out: at('restarted.local.npy'), p: 2 });
    expect(await sameBytes(at('restarted.npy'), at('restarted.local.npy'))).toBe(true);
  }, 120_000);

  it('fails with DeviceUnavailableError, instead of waiting forever, when the server comes back without its store', async () => {
    let restarting: Promise<void> | undefined;
    const running = pdist(X, {
      out: at('storeless.npy'),
      p: 3,
      minBlockSide: 100,
      onProgress: (p) => {
        if (p.blocksDone !== 3) return;
        restarting = (async () => {
          await server.down();
          await rm(server.storeDir, { recursive: true, force: true });
          await server.up();
        })();
      },
      cluster: { nats: server.url, ackWait: 1500 },
    });
    await expect(running).rejects.toThrow(DeviceUnavailableError);
    await expect(running).rejects.toThrow(/no longer has this run's streams \(deleted, or the server restarted without its store, -sd\): the \d+ blocks not yet written are lost there; run the command again$/);
    await restarting;
    expect((await readdir(dir)).filter((f) => f.includes('storeless'))).toEqual([]);
  }, 120_000);

  it('has a worker say that it lost the server and that the server is back', async () => {
    const w = worker(server, 'watching');
    await w.line(/connected to/);
    await server.down();
    try {
      await w.line(/^pxl worker: lost the NATS server at nats:\/\/127\.0\.0\.1:\d+; waiting for it to come back/);
    } finally {
      await server.up();
    }
    await w.line(/^pxl worker: the NATS server at nats:\/\/127\.0\.0\.1:\d+ is back$/);
  }, 60_000);

  it('lets a worker stopped with SIGTERM while the server is away exit 0', async () => {
    const w = worker(server, 'stranded');
    await w.line(/connected to/);
    await server.down();
    try {
      process.kill(w.child.pid!, 'SIGTERM');
      expect(await w.exit).toEqual({ code: 0, signal: null });
    } finally {
      await server.up();
    }
  }, 60_000);
});

describe.skipIf(!runThem)('a server with a max payload of 4 KiB', () => {
  it('gets each block as parts that fit, and writes the same bytes as a local run', async () => {
    const conf = at('small-payload.conf');
    await writeFile(conf, 'max_payload: 4096\n');
    const server = await startNatsServer(['-c', conf]);
    servers.push(server);
    await worker(server, 'small').line(/connected to/);
    // One diagonal block of 1000 x 1000: its lower triangle is 4 MB, about 2,000 parts.
    const X = randomPcfs({ n: 1000, points: 10, seed: 14 });
    await pdist(X, { out: at('small.local.npy') });
    await pdist(X, { out: at('small.cluster.npy'), cluster: { nats: server.url }, minBlockSide: 1000 });
    expect(await sameBytes(at('small.cluster.npy'), at('small.local.npy'))).toBe(true);
  }, 60_000);
});

describe.skipIf(!runThem)('the same run started twice', () => {
  it('refuses the second coordinator while the first runs, and the first still finishes', async () => {
    const server = await startNatsServer();
    servers.push(server);
    const X = randomPcfs({ n: 400, points: 10, seed: 31 });
    let second: Promise<unknown> | undefined;
    // With no worker yet the first coordinator waits: the second starts then, on the same run.
    const first = pdist(X, {
      out: at('twice.npy'),
      cluster: {
        nats: server.url,
        onStatus: (s) => {
          if (s.kind !== 'waiting' || second !== undefined) return;
          second = pdist(X, { out: at('twice.npy'), cluster: { nats: server.url } });
          second.then(() => undefined, () => worker(server, 'after'));
        },
      },
    });
    await first;
    await expect(second).rejects.toThrow(OptionError);
    await expect(second).rejects.toThrow(/another coordinator \(.+\) is running this same run .*; wait for it to finish, or write to another output file/);
    await pdist(X, { out: at('twice.local.npy') });
    expect(await sameBytes(at('twice.npy'), at('twice.local.npy'))).toBe(true);
    expect((await readdir(dir)).filter((f) => f.startsWith('.twice.npy'))).toEqual([]);
  }, 60_000);
});

describe.skipIf(!runThem)('addresses that cannot work', () => {
  const X = randomPcfs({ n: 10, points: 3, seed: 1 });

  it('refuses an address that is not a NATS URL before connecting', async () => {
    await expect(pdist(X, { out: at('x.npy'), cluster: { nats: 'http://127.0.0.1:4222' } })).rejects.toThrow(
      new OptionError("--nats (cluster.nats): 'http://127.0.0.1:4222' uses http://; a NATS server is reached with nats://HOST:PORT (or tls://)"),
    );
    await expect(pdist(X, { cluster: { nats: 'nats://127.0.0.1:1' }, devices: ['cpu'] })).rejects.toThrow(OptionError);
    let stderr = '';
    const io = { interceptSigint: false, stderr: { write: (s: string) => ((stderr += s), true), isTTY: false } as unknown as NodeJS.WriteStream };
    expect(await run(['worker', '--nats', ' ', '--cores', '1'], io)).toBe(2);
    expect(stderr).toBe("pxl: --nats (cluster.nats) must be the NATS server's URL, such as 'nats://127.0.0.1:4222', got ' '\n");
  });

  it('refuses credentials in the address, naming it without them', async () => {
    for (const nats of ['nats://alice:s3cret@127.0.0.1:4222', 'nats://t0ken@127.0.0.1:4222']) {
      const refused = pdist(X, { out: at('userinfo.npy'), cluster: { nats } });
      await expect(refused).rejects.toThrow(OptionError);
      await expect(refused).rejects.toThrow("--nats (cluster.nats): 'nats://***@127.0.0.1:4222' carries credentials in the address, which pxl does not read from there; give them as --nats-user with --nats-pass, or --nats-token");
      await expect(refused).rejects.not.toThrow(/s3cret|t0ken/);
    }
  });

  it('gives DeviceUnavailableError for a refused connection and an unknown host, and leaves no partial file', async () => {
    const refused = pdist(X, { out: at('refused.npy'), cluster: { nats: 'nats://127.0.0.1:1' } });
    await expect(refused).rejects.toThrow(DeviceUnavailableError);
    await expect(refused).rejects.toThrow(/^cannot connect to the NATS server at nats:\/\/127\.0\.0\.1:1: connection refused .*; check that nats-server runs there with JetStream/);
    await expect(pdist(X, { out: at('unknown.npy'), cluster: { nats: 'nats://no-such-host.invalid:4222', connectTimeout: 2 } })).rejects.toThrow(DeviceUnavailableError);
    expect((await readdir(dir)).filter((f) => f.startsWith('.refused.npy') || f.startsWith('.unknown.npy'))).toEqual([]);
  });

  it('prints the reason and exits 1 from the command line, for the coordinator and for a worker', async () => {
    let stderr = '';
    const io = { interceptSigint: false, stderr: { write: (s: string) => ((stderr += s), true), isTTY: false } as unknown as NodeJS.WriteStream };
    await run(['random-pcfs', '--n', '5', '--points', '3', '-o', at('few.json'), '-q'], { interceptSigint: false });
    expect(await run(['pdist', at('few.json'), '-o', at('cli.npy'), '--nats', 'nats://127.0.0.1:1'], io)).toBe(1);
    expect(stderr).toMatch(/^pxl: cannot connect to the NATS server at nats:\/\/127\.0\.0\.1:1: connection refused/);
    stderr = '';
    expect(await run(['pdist', at('few.json'), '-o', at('cli.json'), '--nats', 'nats://127.0.0.1:1'], io)).toBe(2);
    expect(stderr).toContain('--nats writes the result block by block into a .npy file');
    const w = startPxl(['worker', '--nats', 'nats://127.0.0.1:1']);
    processes.push(w);
    expect((await w.exit).code).toBe(1);
    expect(w.stderr()).toMatch(/^pxl: cannot connect to the NATS server at nats:\/\/127\.0\.0\.1:1/);
  });

  it('refuses a worker given half of a user and password, or a certificate without its key, before connecting', async () => {
    let stderr = '';
    const io = { interceptSigint: false, stderr: { write: (s: string) => ((stderr += s), true), isTTY: false } as unknown as NodeJS.WriteStream };
    const cert = at('cert.pem');
    await writeFile(cert, '');
    const halves: [string[], RegExp][] = [
      [['--nats-user', 'u'], /^pxl: --nats-user and --nats-pass \(cluster\.user and cluster\.pass\) go together: give both, or neither\n$/],
      [['--nats-pass', 'p'], /^pxl: --nats-user and --nats-pass .* go together/],
      [['--nats-cert', cert], /^pxl: --nats-cert and --nats-key \(cluster\.tls\.certFile and cluster\.tls\.keyFile\) go together: a client certificate needs its key\n$/],
      [['--nats-key', cert], /^pxl: --nats-cert and --nats-key .* go together/],
    ];
    for (const [flags, message] of halves) {
      stderr = '';
      expect(await run(['worker', '--nats', 'nats://127.0.0.1:1', '--cores', '1', ...flags], io)).toBe(2);
      expect(stderr).toMatch(message);
    }
    await expect(runWorker({ nats: 'nats://127.0.0.1:1', cores: 1, user: 'u' })).rejects.toThrow(OptionError);
  });
});

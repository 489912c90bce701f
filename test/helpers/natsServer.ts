/**
 * A real nats-server with JetStream for one test file: started on a free loopback port with a
 * temporary store directory, and stopped by its process id (the store removed) in `stop`. A
 * restart keeps the port and the store, as a crashed and restarted server would.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect as tcpConnect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

/** Where Debian's package puts the server; PATH is searched when it is elsewhere. */
const SERVER = process.env.NATS_SERVER ?? 'nats-server';

/** A free loopback port: the kernel's pick for a listener that is closed at once. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts TCP connections on `port`, or rejects after `ms`. */
async function waitForPort(port: number, ms: number): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = tcpConnect(port, '127.0.0.1');
      socket.once('connect', () => { socket.destroy(); resolve(true); });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > until) throw new Error(`nats-server did not listen on port ${port} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A running test server. */
export interface NatsTestServer {
  readonly url: string;
  readonly port: number;
  readonly storeDir: string;
  /** Kills the server (SIGKILL, so nothing is flushed on the way out) and starts it again on the same port and store. */
  restart(): Promise<void>;
  /** Kills the server (SIGKILL) and leaves it down until {@link up}. */
  down(): Promise<void>;
  /** Starts a server killed by {@link down} again on the same port and store. */
  up(): Promise<void>;
  /** Stops the server by pid and removes its store. Safe to call twice. */
  stop(): Promise<void>;
}

/** Whether a nats-server binary can be started here (tests skip outside CI when it cannot). */
export async function natsServerAvailable(): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(SERVER, ['--version'], { stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
  });
}

/**
 * Starts nats-server with JetStream on a free loopback port; `extraArgs` are added to its command
 * line (authentication: `--user U --pass P`, `--auth TOKEN`; TLS: `--tls --tlscert F --tlskey F`,
 * with `--tlsverify --tlscacert F` for client certificates).
 * @throws when the server does not listen within 10 s.
 */
export async function startNatsServer(extraArgs: readonly string[] = []): Promise<NatsTestServer> {
  const port = await freePort();
  const storeDir = await mkdtemp(join(tmpdir(), 'pxl-nats-'));
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    const c = spawn(SERVER, ['-js', '-sd', storeDir, '-a', '127.0.0.1', '-p', String(port), ...extraArgs], { stdio: 'ignore' });
    child = c;
    await Promise.race([
      waitForPort(port, 10_000),
      new Promise((_, reject) => c.once('exit', (code) => reject(new Error(`nats-server exited with code ${String(code)} before listening`)))),
    ]);
  };
  const kill = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (c === undefined || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((resolve) => c.once('exit', resolve));
    process.kill(c.pid!, 'SIGKILL');
    await exited;
  };
  await launch();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    async restart() {
      await kill();
      await launch();
    },
    down: kill,
    up: launch,
    async stop() {
      await kill();
      await rm(storeDir, { recursive: true, force: true });
    },
  };
}

/** A running cluster of JetStream servers. */
export interface NatsTestCluster {
  /** Every server's address, comma-separated, as pxl takes them. */
  readonly url: string;
  /** Stops every server by pid and removes their stores. */
  stop(): Promise<void>;
}

/**
 * Starts `size` nats-servers with JetStream on free loopback ports, routed to each other as one
 * cluster, and waits until they have elected the JetStream metadata leader (a stream cannot be
 * created before).
 * @throws when a server does not listen within 10 s, or no leader is elected within 30 s.
 */
export async function startNatsCluster(size: number): Promise<NatsTestCluster> {
  const ports = await Promise.all(Array.from({ length: size }, () => freePort()));
  const routePorts = await Promise.all(Array.from({ length: size }, () => freePort()));
  const routes = routePorts.map((p) => `nats://127.0.0.1:${p}`).join(',');
  const stores: string[] = [];
  const children: ChildProcess[] = [];
  const stop = async (): Promise<void> => {
    for (const c of children.splice(0)) {
      if (c.exitCode !== null || c.signalCode !== null) continue;
      const exited = new Promise((resolve) => c.once('exit', resolve));
      process.kill(c.pid!, 'SIGKILL');
      await exited;
    }
    for (const d of stores) await rm(d, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < size; i++) {
      const storeDir = await mkdtemp(join(tmpdir(), 'pxl-nats-'));
      stores.push(storeDir);
      children.push(spawn(SERVER, ['-js', '-sd', storeDir, '-a', '127.0.0.1', '-p', String(ports[i]), '-n', `n${i}`, '--cluster_name', 'pxl', '--cluster', `nats://127.0.0.1:${routePorts[i]}`, '--routes', routes], { stdio: 'ignore' }));
    }
    await Promise.all(ports.map((p) => waitForPort(p, 10_000)));
    const url = ports.map((p) => `nats://127.0.0.1:${p}`).join(',');
    const nc = await connect({ servers: url.split(',') });
    try {
      const until = Date.now() + 30_000;
      for (;;) {
        try {
          await (await jetstreamManager(nc)).getAccountInfo();
          break;
        } catch (error) {
          if (Date.now() > until) throw error;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
    } finally {
      await nc.close();
    }
    return { url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** PEM files of a test certificate authority, a server certificate for 127.0.0.1 (and localhost, the name the NATS client checks for a loopback address) and a client certificate. */
export interface TestCertificates {
  readonly ca: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly clientCert: string;
  readonly clientKey: string;
}

/** Whether the openssl command can be run here (TLS tests skip outside CI when it cannot). */
export function opensslAvailable(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes a certificate authority and a server (IP 127.0.0.1) and client certificate signed by it,
 * with `openssl` (P-256 keys, valid for a day) in `dir`.
 */
export function makeCertificates(dir: string): TestCertificates {
  const at = (name: string): string => join(dir, name);
  const ssl = (...args: string[]): void => {
    execFileSync('openssl', args, { stdio: 'ignore' });
  };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ssl('req', '-x509', ...ec, '-keyout', at('ca.key'), '-out', at('ca.pem'), '-days', '1', '-subj', '/CN=pxl test CA');
  const sign = (name: string, extensions: string): void => {
    ssl('req', ...ec, '-keyout', at(`${name}.key`), '-out', at(`${name}.csr`), '-subj', `/CN=pxl test ${name}`);
    writeFileSync(at(`${name}.ext`), extensions);
    ssl('x509', '-req', '-in', at(`${name}.csr`), '-CA', at('ca.pem'), '-CAkey', at('ca.key'), '-CAcreateserial', '-out', at(`${name}.pem`), '-days', '1', '-extfile', at(`${name}.ext`));
  };
  sign('server', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  sign('client', 'extendedKeyUsage=clientAuth\n');
  return { ca: at('ca.pem'), serverCert: at('server.pem'), serverKey: at('server.key'), clientCert: at('client.pem'), clientKey: at('client.key') };
}

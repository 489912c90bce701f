/**
 * Authentication and TLS pass through to NATS: a nats-server that wants a user and password, one
 * that wants a token, and one that speaks TLS only and verifies client certificates (made with
 * openssl in a temporary directory). In each, a `pxl worker` and the coordinator connect with the
 * right credentials and the result equals a local run's; wrong or missing credentials fail fast
 * with DeviceUnavailableError. A server in operator mode (JWTs) takes a `.creds` file.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeviceUnavailableError, OptionError, pdist, randomPcfs, type ClusterOptions } from '../src/index.js';
import { makeCredentials } from './helpers/natsCreds.js';
import { makeCertificates, natsServerAvailable, opensslAvailable, startNatsServer, type NatsTestServer } from './helpers/natsServer.js';
import { startPxl, type PxlProcess } from './helpers/pxlProcess.js';

const available = await natsServerAvailable();
const runThem = available || process.env.CI === 'true';
const withOpenssl = runThem && (opensslAvailable() || process.env.CI === 'true');

let dir: string;
const processes: PxlProcess[] = [];
const servers: NatsTestServer[] = [];
const X = randomPcfs({ n: 300, points: 10, seed: 41 });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pxl-cluster-auth-'));
  await pdist(X, { out: join(dir, 'local.npy') });
});
afterAll(async () => {
  for (const p of processes) await p.kill();
  for (const s of servers) await s.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Starts a worker with `flags`, runs pdist with `cluster` and checks the file against the local one. */
async function clusterRunMatches(server: NatsTestServer, flags: string[], cluster: Omit<ClusterOptions, 'nats'>, url = server.url): Promise<void> {
  const w = startPxl(['worker', '--nats', url, '--cores', '1', '--id', 'auth', ...flags]);
  processes.push(w);
  await w.line(/connected to/);
  const out = join(dir, `cluster-${servers.length}.npy`);
  await pdist(X, { out, cluster: { nats: url, connectTimeout: 3, ...cluster } });
  expect((await readFile(out)).equals(await readFile(join(dir, 'local.npy')))).toBe(true);
  await w.kill();
}

describe.skipIf(!runThem)('NATS authentication', () => {
  it('connects with a user and password, and refuses a wrong password', async () => {
    const server = await startNatsServer(['--user', 'pxl', '--pass', 's3cret']);
    servers.push(server);
    await clusterRunMatches(server, ['--nats-user', 'pxl', '--nats-pass', 's3cret'], { user: 'pxl', pass: 's3cret' });
    const refused = pdist(X, { out: join(dir, 'refused.npy'), cluster: { nats: server.url, user: 'pxl', pass: 'wrong', connectTimeout: 3 } });
    await expect(refused).rejects.toThrow(DeviceUnavailableError);
    await expect(refused).rejects.toThrow(/check --nats-creds, --nats-user\/--nats-pass or --nats-token/);
    const w = startPxl(['worker', '--nats', server.url]);
    processes.push(w);
    expect((await w.exit).code).toBe(1);
    expect(w.stderr()).toMatch(/^pxl: cannot connect to the NATS server at .*authori[sz]ation/i);
  }, 60_000);

  it('connects with a token, and refuses a missing one', async () => {
    const server = await startNatsServer(['--auth', 'pxl-token-1']);
    servers.push(server);
    await clusterRunMatches(server, ['--nats-token', 'pxl-token-1'], { token: 'pxl-token-1' });
    await expect(pdist(X, { out: join(dir, 'no-token.npy'), cluster: { nats: server.url, connectTimeout: 3 } })).rejects.toThrow(DeviceUnavailableError);
  }, 60_000);
});

describe.skipIf(!runThem)('a tls:// address', () => {
  it('refuses a server that offers no TLS instead of talking to it in plain text', async () => {
    const server = await startNatsServer();
    servers.push(server);
    const plain = pdist(X, { out: join(dir, 'plain.npy'), cluster: { nats: `tls://127.0.0.1:${server.port}` } });
    await expect(plain).rejects.toThrow(DeviceUnavailableError);
    await expect(plain).rejects.toThrow(/the server offers no TLS: start it with TLS .*, or give a nats:\/\/ address without the TLS options$/);
  }, 30_000);
});

describe.skipIf(!runThem)('NATS decentralized authentication (operator, account and user JWTs)', () => {
  it('connects with a .creds file, and refuses one the server does not trust', async () => {
    const creds = makeCredentials(dir);
    const server = await startNatsServer(['-c', creds.serverConfig]);
    servers.push(server);
    await clusterRunMatches(server, ['--nats-creds', creds.creds], { credsFile: creds.creds });
    const refused = pdist(X, { out: join(dir, 'foreign.npy'), cluster: { nats: server.url, credsFile: creds.foreignCreds, connectTimeout: 3 } });
    await expect(refused).rejects.toThrow(DeviceUnavailableError);
    await expect(refused).rejects.toThrow(/check --nats-creds/);
    await expect(pdist(X, { out: join(dir, 'no-creds.npy'), cluster: { nats: server.url, credsFile: join(dir, 'missing.creds'), connectTimeout: 3 } })).rejects.toThrow(/missing\.creds/);
    // A file that is no credentials file (the server's config, say) is an option error, exit 2.
    const wrong = pdist(X, { out: join(dir, 'wrong.npy'), cluster: { nats: server.url, credsFile: creds.serverConfig, connectTimeout: 3 } });
    await expect(wrong).rejects.toThrow(OptionError);
    await expect(wrong).rejects.toThrow(/holds no user JWT and seed/);
    const w = startPxl(['worker', '--nats', server.url, '--nats-creds', creds.serverConfig]);
    processes.push(w);
    expect((await w.exit).code).toBe(2);
    expect(w.stderr()).toMatch(/holds no user JWT and seed/);
  }, 60_000);
});

describe.skipIf(!withOpenssl)('NATS over TLS with client certificates', () => {
  it('connects with the CA and a client certificate, and refuses a client without one', async () => {
    const certs = makeCertificates(dir);
    const server = await startNatsServer(['--tls', '--tlscert', certs.serverCert, '--tlskey', certs.serverKey, '--tlsverify', '--tlscacert', certs.ca]);
    servers.push(server);
    const url = `tls://127.0.0.1:${server.port}`;
    await clusterRunMatches(server, ['--nats-ca', certs.ca, '--nats-cert', certs.clientCert, '--nats-key', certs.clientKey], { tls: { caFile: certs.ca, certFile: certs.clientCert, keyFile: certs.clientKey } }, url);
    await expect(pdist(X, { out: join(dir, 'no-cert.npy'), cluster: { nats: url, tls: { caFile: certs.ca }, connectTimeout: 3 } })).rejects.toThrow(DeviceUnavailableError);
  }, 60_000);

  it('says which TLS option to check: an unknown authority, a file that cannot be read, a missing client certificate', async () => {
    const certs = makeCertificates(dir);
    const server = await startNatsServer(['--tls', '--tlscert', certs.serverCert, '--tlskey', certs.serverKey, '--tlsverify', '--tlscacert', certs.ca]);
    servers.push(server);
    const url = `tls://127.0.0.1:${server.port}`;
    const client = { certFile: certs.clientCert, keyFile: certs.clientKey };
    const untrusted = pdist(X, { out: join(dir, 'untrusted.npy'), cluster: { nats: url, tls: client } });
    await expect(untrusted).rejects.toThrow(DeviceUnavailableError);
    await expect(untrusted).rejects.toThrow(/; check --nats-ca \(the authority that signed the server's certificate/);
    const missing = pdist(X, { out: join(dir, 'missing.npy'), cluster: { nats: url, tls: { ...client, caFile: join(dir, 'no-such-ca.pem') } } });
    await expect(missing).rejects.toThrow(OptionError);
    await expect(missing).rejects.toThrow(`cannot read --nats-ca (cluster.tls.caFile) ${join(dir, 'no-such-ca.pem')}: ENOENT`);
    await expect(pdist(X, { out: join(dir, 'no-cert.npy'), cluster: { nats: url, tls: { caFile: certs.ca }, connectTimeout: 1 } })).rejects.toThrow(/; a server that verifies clients also needs --nats-cert and --nats-key$/);
  }, 60_000);
});

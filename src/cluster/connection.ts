/**
 * The NATS connection of a coordinator or a worker: the server list, authentication and TLS passed
 * through to the client, a first connection that fails fast with a typed error, and reconnection
 * without limit afterwards (a restarted server is waited for, not reported as a failure).
 */
import { constants } from 'node:fs';
import { access, readFile } from 'node:fs/promises';
import { credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { DeviceUnavailableError, OptionError } from '../core/errors.js';
import { checkInteger, checkNumber, checkOptionsObject, describe } from '../core/validate.js';
import type { ClusterOptions } from '../pcf/clusterHook.js';
import { connectNats } from './natsTransport.js';
import { checkByteOrder } from './protocol.js';

/** The connection options of {@link ClusterOptions}, shared with `pxl worker`. */
export type ConnectOptions = Pick<ClusterOptions, 'nats' | 'credsFile' | 'user' | 'pass' | 'token' | 'tls' | 'connectTimeout'>;

/** Keys of {@link ClusterOptions}, for validation. */
export const CLUSTER_OPTION_KEYS = ['nats', 'credsFile', 'user', 'pass', 'token', 'tls', 'ackWait', 'replicas', 'connectTimeout', 'onStatus'] as const;

const DEFAULT_CONNECT_TIMEOUT_S = 5;

function checkString(name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw new OptionError(`cluster.${name} must be a non-empty string, got ${describe(value)}`);
  return value;
}

/**
 * The server URLs of `nats` (comma-separated), each checked to be a `nats://`, `tls://` or bare
 * `host:port` address.
 * @throws OptionError naming the address that is not one.
 */
export function serverList(nats: unknown): string[] {
  if (typeof nats !== 'string' || nats.trim() === '') throw new OptionError(`--nats (cluster.nats) must be the NATS server's URL, such as 'nats://127.0.0.1:4222', got ${describe(nats)}`);
  return nats.split(',').map((part) => {
    const server = part.trim();
    let url: URL;
    try {
      url = new URL(server.includes('://') ? server : `nats://${server}`);
    } catch {
      throw new OptionError(`--nats (cluster.nats): '${server}' is not a server address; write nats://HOST:PORT (tls://HOST:PORT for TLS)`);
    }
    if (url.username !== '' || url.password !== '') {
      // Named without its secret: error messages end up in logs.
      const shown = server.replace(/\/\/[^@/]*@/, '//***@');
      throw new OptionError(`--nats (cluster.nats): '${shown}' carries credentials in the address, which pxl does not read from there; give them as --nats-user with --nats-pass, or --nats-token (cluster.user, cluster.pass, cluster.token)`);
    }
    if (url.protocol !== 'nats:' && url.protocol !== 'tls:') throw new OptionError(`--nats (cluster.nats): '${server}' uses ${url.protocol}//; a NATS server is reached with nats://HOST:PORT (or tls://)`);
    if (url.hostname === '') throw new OptionError(`--nats (cluster.nats): '${server}' names no host; write nats://HOST:PORT`);
    return server;
  });
}

/**
 * Checks the connection options of `options` (the whole `cluster` object).
 * @throws OptionError for an unknown key or a value of the wrong type.
 */
export function checkClusterOptions(options: unknown): ClusterOptions {
  if (typeof options === 'string') throw new OptionError(`cluster must be an object such as { nats: ${JSON.stringify(options)} }, got a string`);
  const o = checkOptionsObject('cluster options', options as ClusterOptions, CLUSTER_OPTION_KEYS, { url: 'nats', server: 'nats', servers: 'nats', creds: 'credsFile', password: 'pass' });
  serverList(o.nats);
  for (const key of ['credsFile', 'user', 'pass', 'token'] as const) checkString(key, o[key]);
  if (o.tls !== undefined) {
    const tls = checkOptionsObject('cluster.tls', o.tls, ['caFile', 'certFile', 'keyFile']);
    for (const key of ['caFile', 'certFile', 'keyFile'] as const) checkString(`tls.${key}`, tls[key]);
  }
  checkPairs(o);
  if (o.ackWait !== undefined) checkInteger('cluster.ackWait', o.ackWait, 100, 3_600_000);
  if (o.replicas !== undefined) checkInteger('cluster.replicas', o.replicas, 1, 5);
  if (o.connectTimeout !== undefined) checkNumber('cluster.connectTimeout', o.connectTimeout, 0.1, 600);
  if (o.onStatus !== undefined && typeof o.onStatus !== 'function') throw new OptionError(`cluster.onStatus must be a function, got ${describe(o.onStatus)}`);
  return o;
}

/** Options that mean something only together; a worker's options come here without checkClusterOptions. */
function checkPairs(o: ConnectOptions): void {
  if ((o.user === undefined) !== (o.pass === undefined)) throw new OptionError('--nats-user and --nats-pass (cluster.user and cluster.pass) go together: give both, or neither');
  if ((o.tls?.certFile === undefined) !== (o.tls?.keyFile === undefined)) throw new OptionError('--nats-cert and --nats-key (cluster.tls.certFile and cluster.tls.keyFile) go together: a client certificate needs its key');
}

/**
 * Connects to the NATS server of `options`.
 *
 * @param name the client's name, shown by the server's monitoring (`pxl coordinator`, `pxl worker host:pid`).
 * @throws (rejects) OptionError for a malformed address or an unreadable credentials file;
 *   DeviceUnavailableError when no server answers within `connectTimeout` seconds (refused,
 *   unknown host, timeout) or the server refuses the credentials.
 */
export async function connectCluster(options: ConnectOptions, name: string): Promise<NatsConnection> {
  checkByteOrder();
  const servers = serverList(options.nats);
  checkPairs(options);
  const timeoutS = options.connectTimeout ?? DEFAULT_CONNECT_TIMEOUT_S;
  let authenticator;
  if (options.credsFile !== undefined) {
    let creds: Uint8Array;
    try {
      creds = await readFile(options.credsFile);
    } catch (error) {
      throw new OptionError(`cannot read the NATS credentials file ${options.credsFile}: ${(error as Error).message}`);
    }
    // The client parses the file only while it connects, and reports a bad one as a failed connection.
    const text = new TextDecoder().decode(creds);
    if (!text.includes('BEGIN NATS USER JWT') || !text.includes('BEGIN USER NKEY SEED')) {
      throw new OptionError(`the NATS credentials file ${options.credsFile} holds no user JWT and seed ('-----BEGIN NATS USER JWT-----', '-----BEGIN USER NKEY SEED-----'): give --nats-creds (cluster.credsFile) the .creds file made for this user, e.g. by nsc generate creds`);
    }
    authenticator = credsAuthenticator(creds);
  }
  const tls = options.tls;
  // The client would report an unreadable file as a failed connection, with the wrong advice.
  for (const [file, flag] of [[tls?.caFile, '--nats-ca (cluster.tls.caFile)'], [tls?.certFile, '--nats-cert (cluster.tls.certFile)'], [tls?.keyFile, '--nats-key (cluster.tls.keyFile)']] as const) {
    if (file === undefined) continue;
    try {
      await access(file, constants.R_OK);
    } catch (error) {
      throw new OptionError(`cannot read ${flag} ${file}: ${(error as Error).message}`);
    }
  }
  const usesTls = tls !== undefined || servers.some((server) => server.startsWith('tls://'));
  const attempts: string[] = [];
  try {
    return await connectNats({
      servers,
      name,
      timeout: Math.round(timeoutS * 1000),
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      ...(authenticator === undefined ? {} : { authenticator }),
      ...(options.user === undefined ? {} : { user: options.user, pass: options.pass }),
      ...(options.token === undefined ? {} : { token: options.token }),
      // The client takes a tls:// address for a plain one when the server offers no TLS: asking
      // for TLS makes it refuse such a server instead.
      ...(tls === undefined ? (usesTls ? { tls: {} } : {}) : { tls: { ...(tls.caFile && { caFile: tls.caFile }), ...(tls.certFile && { certFile: tls.certFile }), ...(tls.keyFile && { keyFile: tls.keyFile }) } }),
    });
  } catch (error) {
    const reason = (error as Error).message + ((error as Error).cause instanceof Error ? ` (${((error as Error).cause as Error).message})` : '');
    attempts.push(`${servers.join(', ')}: ${reason}`);
    const auth = /authori[sz]ation|authentication|credentials/i.test(reason);
    const certificate = /certificate|self[- ]signed|hostname\/ip|PEM|SSL|TLS/i.test(reason);
    const timedOut = (error as Error).name === 'TimeoutError';
    const noTls = /does not support 'tls'|tls is not available/i.test(reason);
    const hint = auth
      ? 'check --nats-creds, --nats-user/--nats-pass or --nats-token against the server\'s accounts'
      : noTls
        ? 'the server offers no TLS: start it with TLS (nats-server --tls --tlscert FILE --tlskey FILE), or give a nats:// address without the TLS options'
        : certificate
        ? 'check --nats-ca (the authority that signed the server\'s certificate, when the system does not trust it), the name in the address against the certificate, and --nats-cert/--nats-key'
        : `check that nats-server runs there with JetStream (nats-server -js) and that this machine can reach it${timedOut ? ` (no answer within ${timeoutS} s)` : ''}${timedOut && usesTls && tls?.certFile === undefined ? '; a server that verifies clients also needs --nats-cert and --nats-key' : ''}`;
    throw new DeviceUnavailableError(`cannot connect to the NATS server at ${servers.join(', ')}: ${reason}; ${hint}`, attempts, { cause: error });
  }
}

/**
 * NATS decentralized authentication for tests: an operator, an account with JetStream enabled, the
 * system account JetStream needs, and a user, as signed JWTs, with the server configuration that trusts the operator and the `.creds`
 * file that `--nats-creds` reads (the user's JWT and nkey seed), made in a temporary directory.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAccount, createOperator, createUser, type KeyPair } from '@nats-io/nkeys';

const base64url = (bytes: Uint8Array | string): string => Buffer.from(bytes).toString('base64url');

/** A NATS JWT (version 2 claims) about `subject`, signed by `issuer`. */
function jwt(issuer: KeyPair, subject: string, name: string, nats: Record<string, unknown>): string {
  const header = base64url(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' }));
  const claims: Record<string, unknown> = { iat: Math.floor(Date.now() / 1000), iss: issuer.getPublicKey(), name, sub: subject, nats: { ...nats, version: 2 } };
  claims.jti = createHash('sha256').update(JSON.stringify(claims)).digest('hex').slice(0, 52).toUpperCase();
  const body = `${header}.${base64url(JSON.stringify(claims))}`;
  return `${body}.${base64url(issuer.sign(new TextEncoder().encode(body)))}`;
}

export interface TestCredentials {
  /** nats-server configuration file (pass as `-c FILE`) trusting the operator, with the account preloaded. */
  readonly serverConfig: string;
  /** The user's `.creds` file. */
  readonly creds: string;
  /** A `.creds` file of a user signed by an account the server does not know. */
  readonly foreignCreds: string;
}

function credsFile(path: string, userJwt: string, user: KeyPair): string {
  const seed = new TextDecoder().decode(user.getSeed());
  writeFileSync(path, [
    '-----BEGIN NATS USER JWT-----', userJwt, '------END NATS USER JWT------', '',
    '************************* IMPORTANT *************************',
    'NKEY Seed printed below can be used to sign and prove identity.',
    'NKEYs are sensitive and should be treated as secrets.', '',
    '-----BEGIN USER NKEY SEED-----', seed, '------END USER NKEY SEED------', '',
  ].join('\n'), { mode: 0o600 });
  return path;
}

/** Makes the operator, account and users of a decentralized-auth server in `dir`. */
export function makeCredentials(dir: string): TestCredentials {
  const operator = createOperator();
  const account = createAccount();
  const system = createAccount();
  const unlimited = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 };
  const jetstream = { mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 };
  const operatorJwt = jwt(operator, operator.getPublicKey(), 'pxl test operator', { type: 'operator' });
  const accountJwt = jwt(operator, account.getPublicKey(), 'pxl', { type: 'account', limits: { ...unlimited, ...jetstream }, default_permissions: { pub: {}, sub: {} } });
  const systemJwt = jwt(operator, system.getPublicKey(), 'SYS', { type: 'account', limits: unlimited, default_permissions: { pub: {}, sub: {} } });
  const userClaims = { type: 'user', pub: {}, sub: {}, subs: -1, data: -1, payload: -1 };
  const user = createUser();
  const creds = credsFile(join(dir, 'pxl.creds'), jwt(account, user.getPublicKey(), 'pxl-user', userClaims), user);
  const stranger = createUser();
  const foreignCreds = credsFile(join(dir, 'foreign.creds'), jwt(createAccount(), stranger.getPublicKey(), 'stranger', userClaims), stranger);
  const serverConfig = join(dir, 'operator.conf');
  writeFileSync(serverConfig, [
    `operator: ${operatorJwt}`,
    // JetStream's internal subscriptions live in a system account; the server refuses to start without one.
    `system_account: ${system.getPublicKey()}`,
    'resolver: MEMORY',
    `resolver_preload: { ${account.getPublicKey()}: ${accountJwt}, ${system.getPublicKey()}: ${systemJwt} }`,
    '',
  ].join('\n'));
  return { serverConfig, creds, foreignCreds };
}

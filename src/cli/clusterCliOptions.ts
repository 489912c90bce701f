/**
 * The cluster side of the command line: the connection options built from the --nats-* flags, and
 * the lines a cluster run prints. Only types come from src/cluster, so loading this file does not
 * load the NATS clients.
 */
import type { ClusterOptions, ClusterStatus } from '../cluster/index.js';
import type { CommandEnv, NatsCliOptions } from './commandOptions.js';
import { formatShares, type ProgressBar } from './progress.js';
import { plural } from './wording.js';

/** The connection part of the cluster options, from the --nats-* flags. */
export function natsConnection(options: NatsCliOptions): Omit<ClusterOptions, 'nats'> {
  const tls = { ...(options.natsCa && { caFile: options.natsCa }), ...(options.natsCert && { certFile: options.natsCert }), ...(options.natsKey && { keyFile: options.natsKey }) };
  return {
    ...(options.natsCreds && { credsFile: options.natsCreds }),
    ...(options.natsUser && { user: options.natsUser }),
    ...(options.natsPass && { pass: options.natsPass }),
    ...(options.natsToken && { token: options.natsToken }),
    ...(Object.keys(tls).length > 0 && { tls }),
  };
}

/**
 * What a cluster run tells the user on stderr: waiting for workers, who joined (in the progress bar
 * once it is drawn, else as lines), each worker's share.
 */
export function clusterReporter(env: CommandEnv, quiet: boolean, bar?: ProgressBar): (status: ClusterStatus) => void {
  return (status) => {
    if (quiet || bar?.clusterStatus(status) === true) return;
    if (status.kind === 'waiting') env.io.stderr.write(`pxl: no worker on ${status.url} yet; waiting (start one with: pxl worker --nats ${status.url})\n`);
    else if (status.kind === 'server') env.io.stderr.write(status.connected ? `pxl: the NATS server at ${status.url} is back; the run goes on\n` : `pxl: lost the NATS server at ${status.url}; waiting for it to come back (the run goes on where it was)\n`);
    else if (status.kind === 'workers') env.io.stderr.write(`pxl: ${plural(status.workers.length, 'live worker')}${status.workers.length > 0 ? `: ${status.workers.join(', ')}` : ''}\n`);
    else env.io.stderr.write(`pxl: ${formatShares(status.shares)}\n`);
  };
}

/** The cluster options of a run started from the command line (pdist, cdist, l2-kernel with --nats, and blocks). */
export function clusterRun(env: CommandEnv, options: NatsCliOptions & { readonly ackWait?: number; readonly replicas?: number; readonly quiet?: boolean }, nats: string, bar: ProgressBar): ClusterOptions {
  return {
    nats,
    ...natsConnection(options),
    ...(options.ackWait !== undefined && { ackWait: options.ackWait }),
    ...(options.replicas !== undefined && { replicas: options.replicas }),
    onStatus: clusterReporter(env, options.quiet === true, bar),
  };
}

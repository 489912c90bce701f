/**
 * The `cluster` option of pdist, cdist and l2Kernel: the blocks run on `pxl worker` processes of
 * other machines through NATS JetStream instead of on this process's devices. The cluster layer
 * sits above this one, so it plugs its coordinator in here ({@link setClusterRunner}) when it is
 * imported; this file only carries the request across and names the options.
 */
import type { BlockMode, BlockProgress, FloatDType, ResultWriter, TriangleSkipMode } from '../blocks/index.js';
import type { NpyFileSink } from '../blocks/npyFileSink.js';
import { LogicError } from '../core/errors.js';
import type { PcfOp } from './integrate.js';
import type { PcfSet } from './pcfSet.js';

/** TLS settings for the NATS connection: files in PEM format. */
export interface ClusterTlsOptions {
  /** Certificate authority that signed the server's certificate. */
  readonly caFile?: string;
  /** This client's certificate, for servers that verify clients (mutual TLS); needs `keyFile`. */
  readonly certFile?: string;
  /** The private key of `certFile`. */
  readonly keyFile?: string;
}

/** What the coordinator tells its caller while a cluster run goes on. */
export type ClusterStatus =
  /** No worker has been seen for a while: the run waits for one (it never fails for lack of workers). */
  | { readonly kind: 'waiting'; readonly url: string; readonly seconds: number }
  /** The set of live workers changed: `workers` lists the ids of those that sent a heartbeat lately. */
  | { readonly kind: 'workers'; readonly workers: readonly string[] }
  /**
   * The coordinator lost its NATS server (`connected` false): the run waits for it, reconnecting,
   * and goes on where it was once it is back (`connected` true).
   */
  | { readonly kind: 'server'; readonly url: string; readonly connected: boolean }
  /** Every block is written: how many each worker delivered, in the order workers were first seen. */
  | { readonly kind: 'finished'; readonly shares: readonly { readonly worker: string; readonly blocks: number }[] };

/**
 * Where and how a pairwise operation runs on a cluster of `pxl worker` processes (see
 * docs/cluster.md). Authentication options may be combined as the server requires.
 */
export interface ClusterOptions {
  /** The NATS server, e.g. `'nats://nats.example:4222'` (several, comma-separated, for a cluster). */
  readonly nats: string;
  /** A NATS credentials file (JWT and NKey seed), as `nsc` writes it. */
  readonly credsFile?: string;
  readonly user?: string;
  readonly pass?: string;
  readonly token?: string;
  readonly tls?: ClusterTlsOptions;
  /**
   * Milliseconds a worker may hold a block without a heartbeat before it is handed to another
   * worker: how long a dead worker's blocks wait. Workers send heartbeats at a third of it while
   * they compute. Default 10000.
   */
  readonly ackWait?: number;
  /**
   * Copies the server cluster keeps of the run's streams and buckets (JetStream replicas): with 3,
   * a run survives losing one NATS server of a three-server cluster. At most the cluster's size.
   * Default 1.
   */
  readonly replicas?: number;
  /** Seconds to connect before giving up with DeviceUnavailableError. Default 5. */
  readonly connectTimeout?: number;
  /** Called when the run starts waiting for workers and when the set of live workers changes. */
  readonly onStatus?: (status: ClusterStatus) => void;
}

/** Everything the coordinator needs from a pairwise call. */
export interface ClusterRequest {
  readonly fnName: 'pdist' | 'cdist' | 'l2Kernel';
  readonly rows: PcfSet;
  readonly cols: PcfSet;
  readonly op: PcfOp;
  readonly mode: BlockMode;
  readonly skip: TriangleSkipMode;
  /** Element type of the result. */
  readonly dtype: FloatDType;
  readonly writer: ResultWriter;
  /** The file sink when the result goes to a file: it decides the blocks left to compute on resume. */
  readonly sink: NpyFileSink | undefined;
  readonly cluster: ClusterOptions;
  readonly signal: AbortSignal | undefined;
  readonly onProgress: ((progress: BlockProgress) => void) | undefined;
  readonly maxOutputElements: number | undefined;
  readonly minBlockSide: number | undefined;
}

/** Runs a request on the cluster; resolves once every block is written through `writer`. */
export type ClusterRunner = (request: ClusterRequest) => Promise<void>;

let runner: ClusterRunner | undefined;

/** @internal Installs the coordinator; the cluster layer calls it when it is loaded. */
export function setClusterRunner(run: ClusterRunner): void {
  runner = run;
}

/**
 * Hands a request to the installed coordinator.
 * @throws (rejects) LogicError when no coordinator is installed (the cluster layer was not loaded).
 */
export async function runOnCluster(request: ClusterRequest): Promise<void> {
  if (runner === undefined) throw new LogicError("the cluster option needs pxl's cluster layer; import pxl's entry point rather than its pcf modules");
  return runner(request);
}

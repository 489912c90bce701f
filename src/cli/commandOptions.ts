/**
 * The options each command's action receives from commander, as plain types: the declarations in
 * commands.ts and the implementations loaded on demand (pairwiseCommand.ts, ...) both name them,
 * and neither imports the other.
 */
import type { FloatDType } from '../blocks/floatArray.js';
import type { MatrixLayout } from './layouts.js';
import type { CliIo } from './terminal.js';

/** What every command runs with. */
export interface CommandEnv {
  readonly io: CliIo;
  /** Aborted by Ctrl-C or the caller: the command stops and writes nothing. */
  readonly signal: AbortSignal;
}

/** The --nats-* connection flags of the pairwise commands and of `pxl worker`. */
export interface NatsCliOptions {
  natsCreds?: string;
  natsUser?: string;
  natsPass?: string;
  natsToken?: string;
  natsCa?: string;
  natsCert?: string;
  natsKey?: string;
}

/** The options pdist, cdist and l2-kernel share. */
export interface CommonOptions extends NatsCliOptions {
  output: string;
  format?: 'npy' | 'json';
  /** Undefined: float64 on the CPU, float32 where a GPU takes part. */
  dtype?: FloatDType;
  cores?: number;
  device: 'cpu' | 'gpu' | 'all';
  quiet?: boolean;
  /** Lets the GPU libraries' own messages through to stderr. */
  verbose?: boolean;
  memory: number;
  resume?: boolean;
  nats?: string;
  ackWait?: number;
  replicas?: number;
}

export interface PdistOptions extends CommonOptions {
  p: number;
  layout: MatrixLayout;
}

export interface L2KernelOptions extends CommonOptions {
  layout: MatrixLayout;
}

export interface CdistCliOptions extends CommonOptions {
  p: number;
  op: 'distance' | 'l2-inner';
  /** True when --p was given on the command line (it cannot go with --op l2-inner). */
  pGiven: boolean;
}

export interface RandomOptions {
  n: number;
  points: number;
  seed: number;
  output: string;
  format?: 'json' | 'npz';
  quiet?: boolean;
}

export interface WorkerCliOptions extends NatsCliOptions {
  nats: string;
  cores?: number;
  device: 'cpu' | 'gpu' | 'all';
  id?: string;
  /** Comma-separated kernel modules (`--modules`). */
  modules?: string;
  verbose?: boolean;
  quiet?: boolean;
}

/** `pxl blocks`: a kernel module's BlockOp on a cluster. */
export interface BlocksCliOptions extends NatsCliOptions {
  export?: string;
  /** JSON text handed to the module's factory on every worker. */
  params?: string;
  rows: number;
  cols: number;
  dtype: FloatDType;
  blockSide?: number;
  output: string;
  resume?: boolean;
  memory: number;
  nats: string;
  ackWait?: number;
  replicas?: number;
  quiet?: boolean;
}

export interface InfoOptions {
  cores?: number;
  device: 'cpu' | 'gpu' | 'all';
  json?: boolean;
  verbose?: boolean;
}

import type { MessagePort } from 'node:worker_threads';
import type { KernelInfo } from '../backend.js';

/** Messages the host posts on a core's MessagePort; a core drains them when EPOCH moves. */
export type HostToCore =
  | { readonly type: 'buffer'; readonly id: number; readonly sab: SharedArrayBuffer }
  | { readonly type: 'free'; readonly id: number }
  | { readonly type: 'module'; readonly id: number; readonly url: string }
  /** A trace ring for every core (each core uses its own part), or null when tracing stops. */
  | { readonly type: 'trace'; readonly sab: SharedArrayBuffer | null; readonly capacity: number };

/**
 * A message as posted: a broadcast carries the value EPOCH has once it is announced, so that a
 * core whose port delivers only as events (a browser's) knows how far it must read.
 */
export type PostedToCore = HostToCore & { readonly epoch?: number };

/** Messages a core posts to the host (worker `parentPort`). */
export type CoreToHost =
  /** Started: the modules it imported at start (CoreInit.modules), with their kernels. */
  | { readonly type: 'ready'; readonly modules: readonly { readonly id: number; readonly kernels: KernelInfo[] }[] }
  | { readonly type: 'module'; readonly id: number; readonly kernels?: KernelInfo[]; readonly error?: { message: string; stack?: string } }
  | { readonly type: 'message'; readonly slot: number; readonly generation: number; readonly value: unknown }
  | {
      readonly type: 'kernelError';
      readonly slot: number;
      readonly generation: number;
      readonly taskIdx: number;
      readonly message: string;
      readonly stack?: string;
    };

/** What a core is started with. */
export interface CoreInit {
  readonly core: number;
  readonly cores: number;
  readonly ctl: SharedArrayBuffer;
  readonly args: SharedArrayBuffer;
  readonly port: MessagePort;
  /** Modules and buffers that exist already: a replacement core starts with them. */
  readonly modules: readonly { id: number; url: string }[];
  readonly buffers: readonly (readonly [number, SharedArrayBuffer])[];
  /** EPOCH when the core was started: `modules` and `buffers` hold every broadcast up to it. */
  readonly epoch: number;
}

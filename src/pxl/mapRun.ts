import type { LaunchArg, LaunchHandle } from '../backends/backend.js';
import type { Stream } from './stream.js';
import type { TracedExecute } from './trace.js';

/**
 * @internal One execute of a Map, from `execute()` until it settles. `phase`: 'queued' while it waits for
 * room in its stream or for its turn there, 'started' once the stream ran it, 'settled' when it
 * has ended (Idle, Cancelled or Fail). A run cancelled while queued settles at once; the stream's
 * later call of it does nothing.
 */
export interface Run {
  readonly args: readonly LaunchArg[];
  /** Aborted by cancel() or by the Map's failure; the backend withdraws or stops the launch. */
  readonly abort: AbortController;
  phase: 'queued' | 'started' | 'settled';
  readonly settled: Promise<void>;
  markSettled: () => void;
  /** The backend's handle once the launch is accepted. */
  handle: LaunchHandle | undefined;
  /** What the run enqueued on its stream, so a run settled while queued gives its room back. */
  op: (() => Promise<void>) | undefined;
  stream: Stream | undefined;
  /** Present only while the Context records an execution trace. */
  readonly trace: TracedExecute | undefined;
}

/** @internal A run in the 'queued' phase, not yet on a stream. */
export function newRun(args: readonly LaunchArg[], trace: TracedExecute | undefined): Run {
  let markSettled!: () => void;
  const settled = new Promise<void>((r) => (markSettled = r));
  return { args, abort: new AbortController(), phase: 'queued', settled, markSettled, handle: undefined, op: undefined, stream: undefined, trace };
}

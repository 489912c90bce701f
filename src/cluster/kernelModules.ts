/**
 * Kernel modules on a cluster: a module exports a {@link ClusterOpFactory} that makes a BlockOp for
 * a run; the coordinator names the module and the export in each work item, and a worker imports it
 * only when the name is on its own allow-list (`pxl worker --modules`), never because a message
 * asks. Both sides spell the module the same way: a package name, or a path that exists on every
 * machine (a relative path is resolved against the worker's working directory).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BlockMode, BlockOp, FloatDType } from '../blocks/index.js';
import { UnsupportedError } from '../core/errors.js';
import type { ModuleItemOp } from './protocol.js';

/** What a factory learns about the run it makes a BlockOp for. */
export interface ClusterOpSetup {
  /** The parameters the coordinator gave (JSON). */
  readonly params: unknown;
  readonly nRows: number;
  readonly nCols: number;
  readonly mode: BlockMode;
  /** Element type of the result: `outputBuffer` must return arrays of it. */
  readonly dtype: FloatDType;
  /** Devices of the worker: `initStorage` is called with 0 .. devices - 1. */
  readonly devices: number;
}

/**
 * The export of a kernel module that a cluster runs: makes the run's BlockOp on each worker. Its
 * `execBlock` runs on the worker's main thread unless it hands work to threads itself; a block
 * that keeps the event loop busy longer than the ack wait is handed to another worker.
 *
 * @example
 * export const table: ClusterOpFactory = ({ params }) => ({
 *   initStorage: (_device, s) => ({ out: [new Float64Array(s.maxBlockElements), new Float64Array(s.maxBlockElements)] }),
 *   outputBuffer: (storage, slot) => storage.out[slot],
 *   async execBlock(storage, block, slot) { ... },
 *   disposeStorage() {},
 * });
 */
export type ClusterOpFactory = (setup: ClusterOpSetup) => BlockOp<unknown> | Promise<BlockOp<unknown>>;

/**
 * The module spellings of `--modules`, checked.
 * @throws UnsupportedError for an empty name.
 */
export function checkModuleList(modules: readonly string[] | undefined): readonly string[] {
  const list = modules ?? [];
  for (const m of list) if (typeof m !== 'string' || m.trim() === '') throw new UnsupportedError('--modules lists an empty module name');
  return list.map((m) => m.trim());
}

/** What `import()` takes for `spec`: a file URL for a path, the name itself for a package. */
function importable(spec: string): string {
  return spec.startsWith('.') || spec.startsWith('/') ? pathToFileURL(resolve(spec)).href : spec;
}

/**
 * The factory `op` names, imported when its module is on `allowed`.
 * @throws (rejects) UnsupportedError when the module is not allowed, cannot be imported, or its
 *   export is not a function.
 */
export async function loadClusterOp(op: ModuleItemOp, allowed: readonly string[]): Promise<ClusterOpFactory> {
  if (!allowed.includes(op.module)) {
    throw new UnsupportedError(`this worker does not run the kernel module ${JSON.stringify(op.module)}: it is not on its allow-list (start the worker with --modules ${op.module})`);
  }
  let mod: Record<string, unknown>;
  try {
    mod = (await import(importable(op.module))) as Record<string, unknown>;
  } catch (error) {
    throw new UnsupportedError(`the kernel module ${op.module} cannot be imported on this worker: ${(error as Error).message}`);
  }
  const factory = mod[op.export];
  if (typeof factory !== 'function') throw new UnsupportedError(`the kernel module ${op.module} has no function export ${JSON.stringify(op.export)}`);
  return factory as ClusterOpFactory;
}

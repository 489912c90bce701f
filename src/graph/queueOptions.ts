import { OptionError } from '../core/errors.js';
import { checkBoolean, checkFunction, checkInteger, checkOptionsObject, describe } from '../core/validate.js';
import { Job } from '../pxl/job.js';
import type { GraphWarning, TaskRecord } from './task.js';
import type { UninitializedReadPolicy } from './taskGraph.js';

/** Options of `Context.createQueue`. */
export interface QueueOptions {
  /**
   * The Job whose cores run the queue's kernels; load kernel modules into it or with `q.load`.
   * Default: a new Job of every free Sub, destroyed with the queue.
   */
  job?: Job;
  /** Chunks each kernel task is split into, in [1, 1024]. Default: the Job's core count. */
  chunks?: number;
  /** Tasks running at once, in [1, 1024]; ready tasks beyond it wait in submission order. Default 16. */
  maxTasksInFlight?: number;
  /** Reads of never-written points: `'warn'` (default) reports through `onWarning`, `'throw'` refuses the task, `'ignore'`. */
  uninitializedReads?: UninitializedReadPolicy;
  /** Receives the graph's warnings. Default: `process.emitWarning`. */
  onWarning?: (warning: GraphWarning) => void;
  /** Receives every task the graph builds (kernels, fences, buffer inits, horizons), as it is submitted. */
  onTask?: (task: TaskRecord) => void;
  /**
   * Checks every indexed read and write of a kernel's accessor arguments against the region the
   * accessor's range mapper declares for the chunk, and fails the task with the buffer, the index and
   * the declared region at the first access outside it. Slow (every access goes through a proxy):
   * for debugging. Default false.
   */
  debugBounds?: boolean;
  /**
   * Critical-path length between horizons, which keep the graph's tracking state bounded, from 1
   * to 2^30: a horizon is made once the longest dependency chain has grown by this many tasks.
   * Default 4.
   */
  horizonStep?: number;
  /** Largest execution front (tasks nothing depends on yet) before a horizon is made anyway, in [1, 2^30]. Default 64. */
  horizonMaxParallelism?: number;
}

/** Options of `Queue.buffer`. */
export interface BufferOptions {
  /** Initial contents, row-major, one value per element; copied at the call. Default: unwritten (zeros). */
  init?: ArrayLike<number> | ArrayLike<bigint>;
  /** A name for diagnostics: `buffer B0 'grid'`. */
  name?: string;
}

const QUEUE_OPTIONS: readonly (keyof QueueOptions)[] = ['job', 'chunks', 'maxTasksInFlight', 'uninitializedReads', 'onWarning', 'onTask', 'debugBounds', 'horizonStep', 'horizonMaxParallelism'];
const BUFFER_OPTIONS: readonly (keyof BufferOptions)[] = ['init', 'name'];

const DEFAULT_IN_FLIGHT = 16;

/** {@link QueueOptions} after {@link resolveQueueOptions}: defaults filled in where they do not depend on the Job. */
export interface ResolvedQueueOptions {
  readonly job: Job | undefined;
  readonly chunks: number | undefined;
  readonly maxTasksInFlight: number;
  readonly uninitializedReads: UninitializedReadPolicy | undefined;
  readonly onWarning: ((warning: GraphWarning) => void) | undefined;
  readonly onTask: ((task: TaskRecord) => void) | undefined;
  readonly debugBounds: boolean;
  readonly horizonStep: number | undefined;
  readonly horizonMaxParallelism: number | undefined;
}

/**
 * Checks the options of `createQueue` before the queue takes anything (a Job, Subs), so a bad
 * option leaves the Context as it was; `uninitializedReads`, `horizonStep` and `horizonMaxParallelism` are checked by the
 * task graph, which the queue builds before it takes a Job.
 * @throws {OptionError} for options that are not an object, an unknown option (naming the nearest),
 *   or an option of the wrong type or out of range.
 */
export function resolveQueueOptions(options: QueueOptions | undefined): ResolvedQueueOptions {
  const o = checkOptionsObject('createQueue options', options, QUEUE_OPTIONS);
  if (o.job !== undefined && !(o.job instanceof Job)) throw new OptionError(`job must be a Job made by ctx.createJob(), got ${describe(o.job)}`);
  return {
    job: o.job,
    chunks: o.chunks === undefined ? undefined : checkInteger('chunks', o.chunks, 1, 1024),
    maxTasksInFlight: checkInteger('maxTasksInFlight', o.maxTasksInFlight ?? DEFAULT_IN_FLIGHT, 1, 1024),
    // The task graph checks these two when the queue builds it, which is before it takes a Job.
    uninitializedReads: o.uninitializedReads,
    onWarning: o.onWarning === undefined ? undefined : checkFunction('onWarning', o.onWarning),
    onTask: o.onTask === undefined ? undefined : checkFunction('onTask', o.onTask),
    debugBounds: o.debugBounds === undefined ? false : checkBoolean('debugBounds', o.debugBounds),
    horizonStep: o.horizonStep,
    horizonMaxParallelism: o.horizonMaxParallelism,
  };
}

/**
 * Checks the options of `Queue.buffer`: an object (or left out) with only `init` and `name`, and a
 * name that is a string. `init` itself is checked against the buffer's size and element type where
 * it is copied.
 * @throws {OptionError} for options that are not an object, an unknown option, or a name that is
 *   not a string.
 */
export function checkBufferOptions(options: BufferOptions | undefined): BufferOptions {
  const o = checkOptionsObject('buffer options', options, BUFFER_OPTIONS);
  if (o.name !== undefined && typeof o.name !== 'string') throw new OptionError(`buffer option name must be a string, got ${describe(o.name)}`);
  return o;
}

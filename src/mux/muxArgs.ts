/**
 * Argument checks shared by the public calls of mux/ (CommandBuffer, CommandQueue, dispatch): each
 * runs at the top of its call, before anything is recorded or dispatched, and throws a typed error
 * naming the call, the argument, what was given and what to pass instead. Messages are built only
 * on failure: these checks sit on recording paths that run once per command.
 */
import { ArgumentError, StateError } from '../core/errors.js';
import { describe } from '../core/validate.js';
import { Context } from '../pxl/context.js';
import { Job } from '../pxl/job.js';

/**
 * The Context and optional Job a command buffer or command queue is made for.
 * @throws ArgumentError when `context` is not a Context or `job` is neither a Job nor left out;
 *   StateError when the Job belongs to another Context.
 */
export function checkContextAndJob(what: string, context: unknown, job: unknown): void {
  if (!(context instanceof Context)) throw new ArgumentError(`${what}: context must be a Context from createContext(), got ${describe(context)}`);
  if (job === undefined) return;
  if (!(job instanceof Job)) throw new ArgumentError(`${what}: job must be a Job from ctx.createJob() (or left out for a ${what} without kernel launches), got ${describe(job)}`);
  if (job.owner !== context) throw new StateError(`${what}: the Job belongs to another Context; create it with this Context's createJob()`);
}

/** A kernel name for a launch. @throws ArgumentError unless it is a non-empty string. */
export function checkKernelName(op: string, kernel: unknown): void {
  if (typeof kernel !== 'string' || kernel === '') {
    throw new ArgumentError(`${op}: kernel must be the name of a kernel of the Job's modules (a non-empty string), got ${describe(kernel)}`);
  }
}

/** A host callback run as a command. @throws ArgumentError unless it is a function. */
export function checkCommandCallback(op: string, fn: unknown): void {
  if (typeof fn !== 'function') throw new ArgumentError(`${op}: fn must be a function to run as a command, got ${describe(fn)}`);
}

import { OptionError, UnsupportedError } from '../core/errors.js';
import { checkOneOf, describe } from '../core/validate.js';
import type { FloatDType } from '../blocks/index.js';
import { Context } from '../pxl/context.js';
import { Job } from '../pxl/job.js';

/**
 * Which devices a pairwise operation runs on: its `devices` option, or the single-device options
 * `context`, `jobs` and `device`, resolved and checked synchronously, so every option error (and
 * the float64 refusal when a GPU takes part) comes before any Context is opened.
 */

/**
 * The options that pick devices, as `PairwiseOptions` (operations.ts) declares them; named here so
 * this file does not import the operations that import it.
 */
export interface DeviceOptions {
  readonly dtype?: FloatDType | undefined;
  readonly context?: Context | undefined;
  readonly jobs?: readonly Job[] | undefined;
  readonly device?: 'cpu' | 'gpu' | undefined;
  readonly devices?: readonly (Job | Context | 'cpu' | 'gpu')[] | undefined;
}

/** Which backend a device runs on. */
export type DeviceKind = 'cpu' | 'gpu';

/** One device entry, resolved: of which kind, and on which Context (undefined: one opened for the call). */
type DeviceEntry =
  | { readonly kind: DeviceKind; readonly job: Job; readonly context: Context }
  | { readonly kind: DeviceKind; readonly job?: undefined; readonly context: Context | undefined };

/** The devices a call runs on, in the order their blocks are numbered; checked before any work. */
export interface DevicePlan {
  readonly entries: readonly DeviceEntry[];
  /** Whether a GPU takes part, and whether only GPUs do. */
  readonly gpu: boolean;
  readonly gpuOnly: boolean;
}

function kindOf(ctx: Context): DeviceKind {
  return ctx.getAttribute('backend') === 'webgpu' ? 'gpu' : 'cpu';
}

function contextOf(job: Job, what: string): Context {
  const owner = job.owner;
  if (!(owner instanceof Context)) throw new OptionError(`${what} is a Job whose Context cannot be found`);
  return owner;
}

/**
 * Resolves `devices`, or `context`, `jobs` and `device`, into device entries, synchronously, so
 * option errors (and the float64 refusal) come before any Context is opened.
 */
export function planDevices(options: DeviceOptions): DevicePlan {
  const entries = options.devices === undefined ? legacyEntries(options) : deviceEntries(options);
  const gpu = entries.some((e) => e.kind === 'gpu');
  return { entries, gpu, gpuOnly: gpu && entries.every((e) => e.kind === 'gpu') };
}

function deviceEntries(options: DeviceOptions): DeviceEntry[] {
  const devices = options.devices!;
  const clash = (['context', 'jobs', 'device'] as const).filter((k) => options[k] !== undefined);
  if (clash.length > 0) throw new OptionError(`devices replaces ${clash.join(' and ')}: list every Job or Context in devices instead`);
  if (!Array.isArray(devices) || devices.length === 0) throw new OptionError(`devices must be a non-empty array of Jobs, Contexts, 'cpu' or 'gpu', got ${describe(devices)}`);
  const seen = new Set<unknown>();
  return devices.map((d: unknown, i): DeviceEntry => {
    const what = `devices[${i}]`;
    if (seen.has(d)) throw new OptionError(`${what} is listed twice; list each Job, Context, 'cpu' and 'gpu' once (a Context already runs on all its free Subs)`);
    seen.add(d);
    if (d === 'cpu' || d === 'gpu') return { kind: d, context: undefined };
    if (d instanceof Context) return { kind: kindOf(d), context: d };
    if (d instanceof Job) {
      const context = contextOf(d, what);
      return { kind: kindOf(context), job: d, context };
    }
    throw new OptionError(`${what} must be a Job, a Context, 'cpu' or 'gpu', got ${describe(d)}`);
  });
}

/** The single-device options: `context` and `jobs` on it, or `device`. */
function legacyEntries(options: DeviceOptions): DeviceEntry[] {
  const device = options.device === undefined ? undefined : checkOneOf('device', options.device, ['cpu', 'gpu']);
  const ctx = options.context;
  const jobs = options.jobs;
  if (ctx !== undefined) {
    const backend = ctx.getAttribute('backend');
    if (device !== undefined && (device === 'gpu') !== (backend === 'webgpu')) {
      throw new OptionError(`device '${device}' does not match the context, whose backend is '${backend}'; pass a context of that kind or leave device out`);
    }
  }
  if (jobs === undefined) return [{ kind: ctx !== undefined ? kindOf(ctx) : device ?? 'cpu', context: ctx }];
  if (jobs.length === 0) throw new OptionError('jobs must list at least one Job');
  return jobs.map((job, i) => {
    const what = `jobs[${i}]`;
    if (!(job instanceof Job)) throw new OptionError(`${what} must be a Job, got ${describe(job)}`);
    const context = contextOf(job, what);
    if (ctx !== undefined && context !== ctx) throw new OptionError(`${what} is a Job of another Context than context; pass Jobs of context, or list Jobs of several Contexts in devices`);
    const kind = kindOf(context);
    if (device !== undefined && device !== kind) throw new OptionError(`device '${device}' does not match ${what}, a Job of a '${context.getAttribute('backend')}' Context; leave device out`);
    return { kind, job, context };
  });
}

/** The dtype to convert the input to: the caller's, or float32 when a GPU takes part (no float64 in WGSL). */
export function requestedDtype(plan: DevicePlan, options: DeviceOptions): FloatDType | undefined {
  if (!plan.gpu) return options.dtype;
  if (options.dtype === 'float64') {
    throw new UnsupportedError(
      plan.gpuOnly
        ? "dtype 'float64' cannot run on the GPU: WGSL has no 64-bit floats; pass dtype: 'float32', or device: 'cpu' for float64"
        : "dtype 'float64' cannot run when a GPU is one of the devices: WGSL has no 64-bit floats, so a run with a GPU computes in float32; pass dtype: 'float32', or only CPU devices for float64",
    );
  }
  return 'float32';
}

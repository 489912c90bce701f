/**
 * Every error pxl raises is a {@link PxlError} with a stable `code`, so callers can branch on
 * `err.code` instead of parsing messages. Failures from below are wrapped with context and keep the
 * original as `cause`.
 */

/** Stable error codes, one per error class. */
export type PxlErrorCode =
  | 'PXL_INVALID_OPTION'
  | 'PXL_INVALID_ARGUMENT'
  | 'PXL_KERNEL_NOT_FOUND'
  | 'PXL_MODULE_LOAD'
  | 'PXL_KERNEL_FAILED'
  | 'PXL_CORE_DIED'
  | 'PXL_OUT_OF_MEMORY'
  | 'PXL_NO_SUB_AVAILABLE'
  | 'PXL_INVALID_STATE'
  | 'PXL_PCF_INVALID'
  | 'PXL_INPUT_FORMAT'
  | 'PXL_CANCELLED'
  | 'PXL_NO_DEVICE'
  | 'PXL_UNSUPPORTED'
  | 'PXL_LOGIC'
  | 'PXL_INVALID_GEOMETRY'
  | 'PXL_RANGE_MAPPER'
  | 'PXL_TASK_GRAPH'
  | 'PXL_COMMAND_BUFFER';

/** Base class of all pxl errors. */
export class PxlError extends Error {
  readonly code: PxlErrorCode;
  constructor(code: PxlErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** An option passed to a pxl call is out of range or incompatible with another option. */
export class OptionError extends PxlError {
  constructor(message: string) {
    super('PXL_INVALID_OPTION', message);
  }
}

/** A kernel argument cannot be passed (unsupported kind, too many, foreign pointer, bad shape). */
export class ArgumentError extends PxlError {
  /** Zero-based position of the offending argument, when one argument is at fault. */
  readonly argIndex: number | undefined;
  constructor(message: string, argIndex?: number) {
    super('PXL_INVALID_ARGUMENT', message);
    this.argIndex = argIndex;
  }
}

/** `buildMap` named a kernel the Job's modules do not export. */
export class KernelNotFoundError extends PxlError {
  readonly kernel: string;
  readonly available: readonly string[];
  constructor(kernel: string, available: readonly string[]) {
    const list = available.length > 0 ? available.map((n) => `'${n}'`).join(', ') : '(none)';
    super('PXL_KERNEL_NOT_FOUND', `kernel '${kernel}' is not exported by the loaded modules; available kernels: ${list}`);
    this.kernel = kernel;
    this.available = available;
  }
}

/** A kernel module could not be imported on the MU cores. */
export class ModuleLoadError extends PxlError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('PXL_MODULE_LOAD', message, options);
  }
}

/** A kernel threw. The Map that ran it is now in the terminal Fail state. */
export class KernelError extends PxlError {
  readonly kernel: string;
  readonly taskIdx: number;
  /** The kernel's own error message and stack, as thrown on the MU core. */
  readonly kernelMessage: string;
  readonly kernelStack: string | undefined;
  constructor(kernel: string, taskIdx: number, kernelMessage: string, kernelStack?: string) {
    super('PXL_KERNEL_FAILED', `kernel '${kernel}' threw at task ${taskIdx}: ${kernelMessage}`);
    this.kernel = kernel;
    this.taskIdx = taskIdx;
    this.kernelMessage = kernelMessage;
    this.kernelStack = kernelStack;
    if (kernelStack !== undefined) this.stack = `${this.name}: ${this.message}\n  -- kernel stack --\n${kernelStack}`;
  }
}

/**
 * The worker thread behind an MU core exited while it ran a kernel. Only the launch that had the
 * batch in progress on that core fails; `mapId` and `tasks` (first and last task of that batch)
 * say which. The core has been replaced, unless it kept dying and was given up (`replaced` false).
 */
export class CoreDiedError extends PxlError {
  readonly core: number;
  readonly kernel: string | undefined;
  readonly mapId: number | undefined;
  readonly tasks: readonly [number, number] | undefined;
  readonly replaced: boolean;
  constructor(core: number, kernel: string | undefined, reason: string, options?: { cause?: unknown; mapId?: number; tasks?: readonly [number, number]; replaced?: boolean }) {
    const tasks = options?.tasks;
    const range = tasks === undefined ? '' : tasks[0] === tasks[1] ? `, task ${tasks[0]}` : `, tasks ${tasks[0]}-${tasks[1]}`;
    const map = options?.mapId === undefined ? '' : ` (Map ${options.mapId}${range})`;
    const what = kernel === undefined ? '' : ` while running kernel '${kernel}'${map}`;
    const replaced = options?.replaced ?? true;
    const after = replaced ? 'the core was replaced and the next execute can run' : 'the core was given up; create a new Context';
    super('PXL_CORE_DIED', `MU core ${core} died${what}: ${reason}; ${after}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.core = core;
    this.kernel = kernel;
    this.mapId = options?.mapId;
    this.tasks = tasks;
    this.replaced = replaced;
  }
}

/** An allocation does not fit in the device memory that is left. */
export class OutOfMemoryError extends PxlError {
  readonly requested: number;
  readonly available: number;
  /** `message` replaces the default one where the backend knows better what ran out and what to do. */
  constructor(requested: number, available: number, message?: string) {
    super('PXL_OUT_OF_MEMORY', message ?? `cannot allocate ${requested} bytes: only ${available} bytes of device memory are available (raise memorySize in createContext, or memFree unused allocations)`);
    this.requested = requested;
    this.available = available;
  }
}

/** A Job asked for more Subs than the device has free. */
export class NoSubAvailableError extends PxlError {
  constructor(message: string) {
    super('PXL_NO_SUB_AVAILABLE', message);
  }
}

/** An object was used after it was destroyed, or in a state that forbids the call. */
export class StateError extends PxlError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('PXL_INVALID_STATE', message, options);
  }
}

/** A piecewise constant function is malformed; `pcfIndex` says which one. */
export class PcfError extends PxlError {
  readonly pcfIndex: number;
  constructor(pcfIndex: number, message: string) {
    super('PXL_PCF_INVALID', `PCF ${pcfIndex}: ${message}`);
    this.pcfIndex = pcfIndex;
  }
}

/** An input or output file is malformed or cannot be used. */
export class InputFormatError extends PxlError {
  readonly file: string | undefined;
  constructor(message: string, file?: string, options?: { cause?: unknown }) {
    super('PXL_INPUT_FORMAT', file === undefined ? message : `${file}: ${message}`, options);
    this.file = file;
  }
}

/** Work was stopped through an AbortSignal before it finished; nothing partial was kept. */
export class CancelledError extends PxlError {
  constructor(message = 'the operation was cancelled', options?: { cause?: unknown }) {
    super('PXL_CANCELLED', message, options);
  }
}

/**
 * No device of the requested kind could be opened (no GPU adapter, no driver). `attempts` lists what
 * was tried and why each failed; the message also says what to install.
 */
export class DeviceUnavailableError extends PxlError {
  readonly attempts: readonly string[];
  constructor(message: string, attempts: readonly string[], options?: { cause?: unknown }) {
    super('PXL_NO_DEVICE', message, options);
    this.attempts = attempts;
  }
}

/**
 * The backend cannot run what was asked of it: a kernel with no body for that backend, or a data
 * type the device lacks (WGSL has no 64-bit floats). The message says what to use instead.
 */
export class UnsupportedError extends PxlError {
  constructor(message: string) {
    super('PXL_UNSUPPORTED', message);
  }
}

/** An internal invariant was broken: a bug in pxl, never a user mistake. */
export class LogicError extends PxlError {
  constructor(message: string) {
    super('PXL_LOGIC', message);
  }
}

/** Asserts an internal invariant. User input is validated elsewhere with specific errors. */
export function invariant(condition: unknown, message: string): asserts condition {
  if (!condition) throw new LogicError(`invariant violated: ${message}`);
}

/**
 * A range, point, subrange, chunk, box or region is malformed (a negative or fractional coordinate,
 * a chunk outside its global size), or values of different dimensionalities were combined.
 */
export class GeometryError extends PxlError {
  constructor(message: string) {
    super('PXL_INVALID_GEOMETRY', message);
  }
}

/**
 * A range mapper does not fit the kernel and buffer it was given, or returned something that is not
 * a subrange, box or region of the buffer's dimensionality. The message names the mapper and both
 * dimensionalities; `task` and `buffer` name the task (`T3 'stencil'`) and buffer (`B0 'grid'`)
 * when the error comes from a submitted task.
 */
export class RangeMapperError extends PxlError {
  readonly mapper: string;
  readonly kernelDims: number;
  readonly bufferDims: number;
  readonly task: string | undefined;
  readonly buffer: string | undefined;
  constructor(mapper: string, kernelDims: number, bufferDims: number, message: string, options?: { cause?: unknown; task?: string; buffer?: string }) {
    super('PXL_RANGE_MAPPER', message, options);
    this.mapper = mapper;
    this.kernelDims = kernelDims;
    this.bufferDims = bufferDims;
    this.task = options?.task;
    this.buffer = options?.buffer;
  }
}

/**
 * The buffer points a {@link TaskGraphError} is about: a `Region` (declared by its shape here because
 * core/region.ts imports this module).
 */
export interface ErrorRegion {
  readonly kind: 'region';
  readonly dims: number;
  readonly boxes: readonly object[];
}

/**
 * A task of the task graph cannot be built or did not run: producer accesses of different chunks
 * overlap, a read of never-written data under the 'throw' policy, a kernel that failed, or a task
 * whose dependency failed. `task` and `buffer` name the task (`T3`) and buffer (`B0`) at fault where
 * one is, and `region` holds the buffer points at fault (the overlap, the never-written points); the
 * failure from below, if any, is the `cause`.
 */
export class TaskGraphError extends PxlError {
  readonly task: string | undefined;
  readonly buffer: string | undefined;
  readonly region: ErrorRegion | undefined;
  constructor(message: string, where: { task?: string; buffer?: string; region?: ErrorRegion } = {}, options?: { cause?: unknown }) {
    super('PXL_TASK_GRAPH', message, options);
    this.task = where.task;
    this.buffer = where.buffer;
    this.region = where.region;
  }
}

/**
 * A dispatched command buffer did not complete. `reason` is `'failed'` when its command number
 * `commandIndex` (of kind `command`) failed, with the failure from below as `cause`; `'upstream'`
 * when a semaphore it waited on was failed by an earlier dispatch, so none of its commands ran
 * (the upstream failure is the `cause`). The code is that of a failed kernel, the closest stable
 * code pxl has for work that did not complete.
 */
export class CommandBufferError extends PxlError {
  readonly reason: 'failed' | 'upstream';
  readonly commandIndex: number | undefined;
  readonly command: string | undefined;
  constructor(message: string, where: { reason: 'failed' | 'upstream'; commandIndex?: number; command?: string }, options?: { cause?: unknown }) {
    super('PXL_COMMAND_BUFFER', message, options);
    this.reason = where.reason;
    this.commandIndex = where.commandIndex;
    this.command = where.command;
  }
}

import type { PxlError } from '../core/errors.js';
import type { DType } from '../core/dtype.js';
import type { Topology } from '../core/topology.js';
import type { CorePlan } from '../pxl/launchPlan.js';

/**
 * The one interface every backend implements. `pxl/` talks only to this: it allocates memory in the
 * backend's memory space and launches kernels over a planned set of cores. Nothing above this file
 * imports a backend module directly, except the factory that picks one.
 */

/** How a kernel wants to be called: once per task, or once per batch with a bound closure. */
export type KernelForm = 'task' | 'batch' | 'group';

export interface KernelInfo {
  readonly name: string;
  readonly form: KernelForm;
  /**
   * True when the kernel's function (a task kernel's `run`, a batch kernel's `bind`, a group
   * kernel's generator) is declared `async`: cores call kernels synchronously and cannot await
   * it, so building a Map of it is refused.
   */
  readonly async?: boolean;
  /**
   * How many arguments a launch of the kernel must pass, where the backend can tell: CPU cores read
   * the declared parameters of a task kernel's function, a batch kernel's `bind`, or a group
   * kernel's generator after `local` (see cpu/kernelParams.ts). `exact` is false when a default or
   * rest parameter makes `count` only the least. Absent where unknown, as on the webgpu backend,
   * which checks arguments against the WGSL `params` instead.
   */
  readonly params?: { readonly count: number; readonly exact: boolean };
}

export interface ModuleInfo {
  readonly id: number;
  readonly url: string;
  /** Sorted by name; a launch names a kernel by its index here. */
  readonly kernels: readonly KernelInfo[];
}

/**
 * The hidden first launch argument of a work-group kernel (KernelMap puts it in front of the user's
 * arguments as a constant): the ND-range's dimensions, global sizes and work-group sizes, 1 for
 * dimensions the range does not have.
 */
export interface GroupGeometry {
  readonly dims: number;
  readonly g0: number;
  readonly g1: number;
  readonly g2: number;
  readonly l0: number;
  readonly l1: number;
  readonly l2: number;
}

/** A constant parameter: broadcast to every invocation. */
export type ConstantValue = number | bigint | boolean | { readonly [key: string]: ConstantValue };

/** One kernel parameter after validation, in the form a backend encodes. */
export type LaunchArg =
  | { readonly kind: 'constant'; readonly value: ConstantValue }
  | { readonly kind: 'pointer'; readonly buffer: number; readonly byteOffset: number; readonly byteLength: number }
  | {
      readonly kind: 'ndarray';
      readonly buffer: number;
      readonly byteOffset: number;
      readonly dtype: DType;
      readonly shape: readonly number[];
      /** True when each task gets its own slice along the leading dimension. */
      readonly sliced: boolean;
    };

export interface LaunchRequest {
  /** Unique per launch; batch records of execution traces name their launch by it. */
  readonly launchId: number;
  readonly module: number;
  readonly kernel: number;
  readonly kernelName: string;
  /** Identifies the Map, so cores can keep its bound arguments across launches. */
  readonly mapId: number;
  /** A stable object owned by the Map; the backend may attach per-Map state to it (a WeakMap key). */
  readonly mapToken: object;
  readonly taskCount: number;
  readonly batchSize: number;
  readonly args: readonly LaunchArg[];
  /** Which batches each core runs: the output of `planLaunch`. */
  readonly cores: readonly CorePlan[];
  /** Called on the host for each `mu.message()` a kernel sends, before `done` settles. */
  readonly onMessage: (value: unknown) => void;
  /**
   * A launch of this backend that must finish before this one starts. The backend orders them
   * wherever it can without a host round trip (on CPU cores, the cores wait for it). When that
   * launch fails or is cancelled, this one runs no batch and reports `cancelled`.
   */
  readonly after?: LaunchHandle;
  /**
   * Cancels the launch when aborted, wherever it is: a launch still waiting for the backend (for a
   * free launch slot) is withdrawn and reports `cancelled` without running; a published one skips
   * the batches no core has started. The backend reads it at the moment it publishes the launch,
   * so an abort before that point can never let a batch start.
   */
  readonly signal?: AbortSignal;
}

export type LaunchOutcome =
  | { readonly kind: 'completed' }
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'failed'; readonly error: PxlError };

/** A launch accepted by the backend. */
export interface LaunchHandle {
  /** Settles once every core has finished or skipped its batches; never rejects. */
  readonly done: Promise<LaunchOutcome>;
  /** Skips batches no core has started; batches in flight drain. */
  cancel(): void;
  /** Batches started and finished so far. */
  progress(): { issued: number; done: number };
}

/** One batch as a core ran it, for execution traces. Times are ms since the epoch. */
export interface BatchRecord {
  readonly launchId: number;
  readonly core: number;
  readonly batch: number;
  readonly start: number;
  readonly end: number;
}

export interface Backend {
  readonly name: 'cpu' | 'webgpu';
  readonly topology: Topology;
  /** Bytes of device memory the backend manages in total. */
  readonly memorySize: number;
  /** Bytes currently allocated. */
  readonly allocatedBytes: number;
  allocate(bytes: number): number;
  /**
   * Takes host shared memory as a buffer without copying it, where the backend's memory is host
   * memory its threads share (the CPU cores); absent elsewhere. `free` gives it back.
   */
  adopt?(buffer: SharedArrayBuffer): number;
  free(buffer: number): void;
  write(buffer: number, byteOffset: number, src: Uint8Array): Promise<void>;
  read(buffer: number, byteOffset: number, dst: Uint8Array): Promise<void>;
  /** Host-visible memory of a buffer, where the backend has one (CPU: the SharedArrayBuffer). */
  hostBuffer(buffer: number): SharedArrayBuffer | undefined;
  loadModule(url: string): Promise<ModuleInfo>;
  /**
   * Throws ArgumentError when validated arguments still cannot travel in one launch (too large for
   * the launch descriptor, a bigint wider than 64 bits). `execute` calls it so such arguments reject
   * the execute itself instead of failing the Map later, inside the launch.
   *
   * With `kernel` (the module id and kernel index a launch would name), a backend also checks the
   * arguments against that kernel's declared signature where it has one (the webgpu backend: the
   * WGSL `params`), and throws UnsupportedError for a kernel it can never run (a work-group kernel
   * on the webgpu backend). Backends without signatures ignore it.
   */
  checkArgs(args: readonly LaunchArg[], kernel?: { readonly module: number; readonly kernel: number }): void;
  launch(request: LaunchRequest): Promise<LaunchHandle>;
  /**
   * Starts or stops recording batch records. Off by default, and free when off: cores then run
   * the loop without timestamps.
   */
  setTracing(on: boolean): void;
  /** Batch records made since the last drain, and how many were lost to a full trace buffer. */
  drainTrace(): { records: BatchRecord[]; dropped: number };
  /** Backend-specific figures reported by `Context.getAttribute`. */
  describe(): Record<string, string | number>;
  /**
   * Ends every core and releases the device. Launches in flight and module loads still pending
   * fail with `error` (the Context's destroy error) where given.
   */
  destroy(error?: PxlError): Promise<void>;
}

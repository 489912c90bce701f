/**
 * pxl: a parallel kernel-execution runtime. Write a data-parallel kernel once, run it on every CPU
 * core over shared memory.
 *
 * @packageDocumentation
 */
export { createContext, Context, Attributes } from './pxl/context.js';
export type { ContextOptions, Attribute } from './pxl/context.js';
export { Job } from './pxl/job.js';
export { KernelMap } from './pxl/kernelMap.js';
export { KernelModule } from './pxl/kernelModule.js';
export { Stream, DefaultStreamLimit } from './pxl/stream.js';
export { DevicePtr } from './pxl/devicePtr.js';
export { NDArray } from './pxl/ndarray.js';
export { Result } from './pxl/result.js';
export type { ExecuteStatus, Progress } from './pxl/result.js';
export { MaxTaskCount, DefaultBatchSize, LocalityMode, planLaunch } from './pxl/launchPlan.js';
export type { LaunchPlan, LaunchShape, CorePlan } from './pxl/launchPlan.js';
export { MaxKernelParams } from './pxl/arguments.js';
export type { KernelArg, ConstantObject } from './pxl/arguments.js';
export type { Topology } from './core/topology.js';
export type { DType, TypedArrayOf } from './core/dtype.js';
export {
  PxlError,
  OptionError,
  ArgumentError,
  KernelNotFoundError,
  ModuleLoadError,
  KernelError,
  CoreDiedError,
  OutOfMemoryError,
  NoSubAvailableError,
  StateError,
  PcfError,
  InputFormatError,
  CancelledError,
  LogicError,
} from './core/errors.js';
export type { PxlErrorCode } from './core/errors.js';

/**
 * The public API that Node and browsers share: src/index.ts (Node) and src/browser.ts (the
 * browser bundle) export all of it, each adding what only its platform has.
 */
export { createContext, Context, Attributes } from './pxl/context.js';
export type { ContextOptions, Attribute } from './pxl/context.js';
export { Job } from './pxl/job.js';
export { KernelMap } from './pxl/kernelMap.js';
export { KernelModule } from './pxl/kernelModule.js';
export { Stream, DefaultStreamLimit } from './pxl/stream.js';
export type { ChromeTrace, TraceEvent } from './pxl/trace.js';
export { DevicePtr } from './pxl/devicePtr.js';
export { NDArray } from './pxl/ndarray.js';
export { Result } from './pxl/result.js';
export type { ExecuteStatus, Progress } from './pxl/result.js';
export { MaxTaskCount, DefaultBatchSize, LocalityMode, planLaunch } from './pxl/launchPlan.js';
export type { LaunchPlan, LaunchShape, CorePlan } from './pxl/launchPlan.js';
export { MaxKernelParams } from './pxl/arguments.js';
export type { KernelArg, ConstantObject } from './pxl/arguments.js';
export type { Topology } from './core/topology.js';
export { DTYPES } from './core/dtype.js';
export type { AnyTypedArray, DType, TypedArrayMap, TypedArrayOf } from './core/dtype.js';
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
  DeviceUnavailableError,
  UnsupportedError,
  LogicError,
} from './core/errors.js';
export type { PxlErrorCode } from './core/errors.js';

// Pairwise PCF operations and their results.
export { pdist, cdist, l2Kernel } from './pcf/operations.js';
export type { PairwiseOptions, DistanceOptions, CdistOptions, PdistOptions, L2KernelOptions, PcfInput, PairwiseDevice } from './pcf/operations.js';
export { destroyDefaultContext } from './pcf/defaultContext.js';
export { Pcf, integrationLimit, FLOAT32_MAX } from './pcf/pcf.js';
export type { PcfArray, PcfDtype, PcfFromOptions } from './pcf/pcf.js';
export { pcfSetFrom, pcfSetFromNested, pcfAt, MAX_SET_BREAKPOINTS } from './pcf/pcfSet.js';
export type { PcfSet, PcfLike, PcfData, PcfSetOptions } from './pcf/pcfSet.js';
export { lpDistance, lpNorm, l2InnerProduct } from './pcf/distance.js';
export { parsePcfJson } from './pcf/io.js';
export { parsePcfNpz, type ReadPcfNpzOptions, type ParsePcfNpzOptions } from './pcf/npz.js';
export type { ParsePcfOptions } from './pcf/io.js';
export { encodeNpy, decodeNpy } from './pcf/npy.js';
export type { NpyArray, NpyData } from './pcf/npy.js';
export { randomPcfs } from './pcf/random.js';
export type { RandomPcfsOptions } from './pcf/random.js';
// Each result class from its own module: blocks/index.js also brings the file sinks, which need Node.
export { DistanceMatrix, condensedIndex } from './blocks/distanceMatrix.js';
export { SymmetricMatrix } from './blocks/symmetricMatrix.js';
export { DenseTensor } from './blocks/denseTensor.js';
export type { BlockProgress, FloatArray, FloatDType } from './blocks/index.js';

// The task graph: queues, buffers, accessors and range mappers.
export { Queue } from './graph/queue.js';
export type { QueueOptions, BufferOptions } from './graph/queue.js';
export { GraphBuffer } from './graph/buffer.js';
export type { BufferId, ElementSpec, ElementType, DTypeOfSpec, DTypeOfClass } from './graph/buffer.js';
export { CommandGroup } from './graph/commandGroup.js';
export type { GraphKernelArg, HostView, HostTaskHandle, HostTaskFn, HostTaskOptions, MapperFor, KernelArgsFor } from './graph/commandGroup.js';
export { Accessor } from './graph/accessor.js';
export * as access from './graph/mappers.js';
export { defineRangeMapper, applyRangeMapper, checkRangeMapper, clampedBox } from './graph/rangeMapper.js';
export type { RangeMapper, AnyRangeMapper, MapperResult, MapperInfo, ServedKernelDims } from './graph/rangeMapper.js';
export { accessOf, isProducer, isConsumer } from './graph/accessMode.js';
export type { Access, AccessMode, AccessOptions } from './graph/accessMode.js';
export { split } from './graph/split.js';
export type { SplitOptions } from './graph/split.js';
export { checkLaunchShape } from './graph/launchShape.js';
export { Reduction } from './graph/reduction.js';
export type { ReductionOp, ReductionOptions } from './graph/reduction.js';
export type { KernelLaunchShape, CheckedKernelLaunchShape, KernelLaunchDims } from './graph/launchShape.js';
export { CoherenceTable, HOST_MEMORY, memorySpace } from './graph/coherence.js';
export type { MemorySpace, MemorySpaceId, MemorySpaceKind, Copy, Holders } from './graph/coherence.js';
export { formatTaskId, taskLabel, dependencyTasks, formatDependency } from './graph/task.js';
export type { TaskId, TaskKind, TaskRecord, Dependency, DataDependency, OrderDependency, DependencyKind, BufferAccess, TaskCopy, GraphWarning } from './graph/task.js';
export type { UninitializedReadPolicy } from './graph/taskGraph.js';
export { range } from './core/range.js';
export type { Range } from './core/range.js';
export { id } from './core/id.js';
export type { Id } from './core/id.js';
export { subrange } from './core/subrange.js';
export type { Subrange } from './core/subrange.js';
export { chunk } from './core/chunk.js';
export type { Chunk } from './core/chunk.js';
export { box, boxOf, emptyBox } from './core/box.js';
export type { Box } from './core/box.js';
export { region, regionOf, union, intersection, difference, isEmpty, area, contains, equals, boundingBox, formatRegion, emptyRegion } from './core/region.js';
export type { Region, IndexSet } from './core/region.js';
export type { Coords, CoordsInput, Dims, DimsOf } from './core/dims.js';
export type { RegionEntry } from './graph/regionMap.js';
export { GeometryError, RangeMapperError, TaskGraphError } from './core/errors.js';
export type { ErrorRegion } from './core/errors.js';
export { CommandBuffer, dispatch, Fence, Semaphore } from './mux/index.js';
export type { Command, CommandBufferState, CommandCallback, DispatchOptions, FenceState, SemaphoreState } from './mux/index.js';
export type { NDRange } from './core/ndRange.js';
export { CommandBufferError } from './core/errors.js';
export { CommandQueue, COMMAND_QUEUE_DEFAULTS } from './mux/index.js';
export type { CommandQueueOptions, EnqueueReadOptions } from './mux/index.js';

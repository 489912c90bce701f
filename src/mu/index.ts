/**
 * The kernel-side API, imported by kernel modules (`import { mu, defineKernel } from 'pxl/mu'`).
 * These functions are meaningful only while a kernel runs on an MU core.
 */
import { dmaRead, dmaWait, dmaWrite } from './dma.js';
import { barrier, getGlobalId, getGlobalSize, getGroupId, getLocalId, getLocalSize, getNumGroups } from './groupKernel.js';
import { muState } from './state.js';

export { defineKernel } from './kernel.js';
export type {
  BatchKernel,
  BatchKernelBind,
  BatchKernelSpec,
  KernelDefinition,
  TaskKernel,
  TaskKernelFn,
  TaskKernelSpec,
  WgslElementType,
  WgslKernel,
  WgslOnlyKernelSpec,
  WgslParamType,
  WgslScalarType,
} from './kernel.js';
export { NDView, PointerView } from './views.js';
export { defineChunkKernel, CHUNK_ROW } from './chunkKernel.js';
export type { ChunkView, ChunkKernelFn, ChunkKernelSpec } from './chunkKernel.js';
export type { AnyTypedArray } from '../core/dtype.js';
export { defineGroupKernel, barrier, getLocalId, getGroupId, getGlobalId, getLocalSize, getGlobalSize, getNumGroups } from './groupKernel.js';
export type { GroupKernel, GroupKernelFn, GroupKernelSpec, LocalArrays, LocalArraySpec, LocalDTypes, LocalSpecs } from './groupKernel.js';
export { dmaRead, dmaWrite, dmaWait, DmaEvent } from './dma.js';
export type { DmaExtent, DmaStride, DmaStrides } from './dma.js';
export type { SyncPoint } from './state.js';

/**
 * Index of the running task, in [0, getTaskCount()). In a batch kernel: the batch's first task. In
 * a group kernel ({@link defineGroupKernel}): the flat index of the work-group, dimension 0 fastest.
 */
export function getTaskIdx(): number {
  return muState.taskIdx;
}

/** The Map's taskCount; for a group kernel, the number of work-groups. */
export function getTaskCount(): number {
  return muState.taskCount;
}

/**
 * Sends a value to the host's message callback (`Map.setMessageCallback`). The value is
 * structured-cloned; every message of a launch is delivered before the launch completes.
 */
export function message(value: unknown): void {
  muState.send(value);
}

/**
 * The kernel-side API as one namespace, mirroring PXL's `mu::`: task ids, messages, and for group
 * kernels the work-item ids, barriers and DMA.
 *
 * @example
 * ```ts
 * import { defineGroupKernel, mu, type NDView } from 'pxl/mu';
 * export const rotate = defineGroupKernel({
 *   local: { tile: { dtype: 'float32', length: (l) => l[0]! } },
 *   run: function* (local, data: NDView<Float32Array>) {
 *     const l = mu.getLocalId(0), n = mu.getLocalSize(0);
 *     local.tile[l] = data.data[mu.getGlobalId(0)]!;
 *     yield mu.barrier();
 *     data.data[mu.getGlobalId(0)] = local.tile[(l + 1) % n]!;
 *   },
 * });
 * ```
 */
export const mu = Object.freeze({
  getTaskIdx,
  getTaskCount,
  message,
  barrier,
  getLocalId,
  getGroupId,
  getGlobalId,
  getLocalSize,
  getGlobalSize,
  getNumGroups,
  dmaRead,
  dmaWrite,
  dmaWait,
});

/**
 * The kernel-side API, imported by kernel modules (`import { mu, defineKernel } from 'pxl/mu'`).
 * These functions are meaningful only while a kernel runs on an MU core.
 */
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

/** Index of the running task, in [0, getTaskCount()). In a batch kernel: the batch's first task. */
export function getTaskIdx(): number {
  return muState.taskIdx;
}

/** The Map's taskCount. */
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

/** The kernel-side API as one namespace, mirroring PXL's `mu::`. */
export const mu = Object.freeze({ getTaskIdx, getTaskCount, message });

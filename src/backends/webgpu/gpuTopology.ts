/// <reference types="@webgpu/types" />
import type { Topology } from '../../core/topology.js';

/**
 * The GPU in PXL terms. A launch runs each batch on one invocation, and the hardware schedules
 * invocations, so:
 * - one Sub: the whole GPU is one scheduling domain, so a Context has one Job at a time on it;
 * - a Cluster is a workgroup, its MU cores the workgroup's invocations (`coresPerCluster` is the
 *   workgroup size, at most 64 and within the adapter's limits);
 * - `clustersPerSub` is enough workgroups for one invocation per batch of the largest launch
 *   (MaxTaskCount batches of one task), so every planned core is a real invocation.
 * Locality modes change nothing on a GPU: invocation b runs batch b.
 */
export interface GpuShape {
  readonly topology: Topology;
  /** Invocations per workgroup of every pipeline. */
  readonly workgroupSize: number;
}

/** Preferred workgroup size: a multiple of every vendor's SIMD width (32 or 64). */
const WORKGROUP = 64;

/** The topology and workgroup size of a device with these limits. @example gpuShape(device.limits, MaxTaskCount).workgroupSize // 64 */
export function gpuShape(limits: GPUSupportedLimits, maxBatches: number): GpuShape {
  const workgroupSize = Math.max(1, Math.min(WORKGROUP, limits.maxComputeWorkgroupSizeX, limits.maxComputeInvocationsPerWorkgroup));
  return {
    workgroupSize,
    topology: Object.freeze({ subs: 1, clustersPerSub: Math.ceil(maxBatches / workgroupSize), coresPerCluster: workgroupSize }),
  };
}

/**
 * Device memory a Context may allocate when the caller does not say: WebGPU does not report the
 * GPU's memory, so this is four of the largest storage bindings.
 */
export function defaultGpuMemorySize(limits: GPUSupportedLimits): number {
  return 4 * limits.maxStorageBufferBindingSize;
}

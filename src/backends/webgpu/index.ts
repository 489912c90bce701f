/**
 * The webgpu backend: kernels' WGSL bodies on a GPU through WebGPU (Dawn's `webgpu` package in
 * Node, `navigator.gpu` in browsers). Only the Context factory imports this folder, and lazily, so
 * CPU-only programs never load Dawn.
 */
export { WebGpuBackend, TRANSFER_HISTORY, type TransferStats, type WebGpuBackendOptions } from './webgpuBackend.js';
export type { LaunchTransfer } from './gpuLaunch.js';
export { MESSAGE_CAPACITY } from './wgslSignature.js';
export { acquireGpuDevice, type GpuDevice } from './gpuDevice.js';

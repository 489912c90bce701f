/// <reference types="@webgpu/types" />
import { StateError, type PxlError } from '../../core/errors.js';
import type { BatchRecord, LaunchHandle, LaunchOutcome } from '../backend.js';
import type { GpuMemory } from './gpuMemory.js';
import type { CompiledKernel } from './kernelProgram.js';
import type { BoundArgs } from './launchArgs.js';
import { prepareDescriptor, type DescriptorSlot } from './launchDescriptor.js';
import { createMessageRing, deliverMessages } from './messageRing.js';
import { ARGS_BINDING, CHUNK_BINDING } from './wgslSignature.js';

/**
 * Runs one launch as a sequence of dispatches ("chunks") of consecutive batches, one invocation per
 * batch (for a group kernel: one workgroup per work-group of the batches). Chunks are submitted at
 * most {@link CHUNKS_IN_FLIGHT} ahead of the one the GPU finished, which is what makes cancellation
 * and progress work on a device that cannot be interrupted:
 * `cancel()` stops submitting (submitted chunks drain), `progress()` counts the batches of
 * submitted and of finished chunks.
 *
 * Each chunk reads its batch range from its own 16-byte slot of one uniform buffer, chosen with a
 * dynamic offset, so all chunks share one bind group.
 */

/** What a launch needs of its backend: the device, its memory, and how to report and stop. */
export interface LaunchEnvironment {
  readonly device: GPUDevice;
  readonly memory: GpuMemory;
  readonly workgroupSize: number;
  /** Settles with the reason once the backend is destroyed or its device lost; never rejects. */
  readonly closed: Promise<PxlError>;
  /** Receives one record per finished dispatch (see WebGpuBackend.setTracing). */
  readonly record: (record: BatchRecord) => void;
}

/** What startLaunch needs of a launch request. */
export interface LaunchShape {
  readonly launchId: number;
  readonly kernelName: string;
  readonly taskCount: number;
  readonly batchSize: number;
  /** Receives the values of `message()` calls, in HostFinalize, before `done` settles. */
  readonly onMessage?: (value: unknown) => void;
}

/** What one launch moved between host and GPU; see `WebGpuBackend.transferStats`. */
export interface LaunchTransfer {
  readonly launchId: number;
  readonly kernelName: string;
  /** Bytes written from the host in HostInit: the launch descriptor, where it changed. */
  readonly uploadedBytes: number;
  /** Bytes read back to the host in HostFinalize. */
  readonly downloadedBytes: number;
  /**
   * The device ranges the launch binds, one per array argument: exactly the argument's bytes (an
   * NDArray's elements, a pointer's bytes to the end of its allocation), and whether the kernel
   * may write them (declared read_write).
   */
  readonly bound: readonly { readonly name: string; readonly buffer: number; readonly byteOffset: number; readonly byteLength: number; readonly writable: boolean }[];
}

/** Chunks submitted ahead of the last finished one: enough to keep the GPU fed between them. */
export const CHUNKS_IN_FLIGHT = 2;

/** Most dispatches one launch is split into; fewer for small launches. */
export const MAX_CHUNKS = 8;

/**
 * Batches per dispatch: every batch in one dispatch up to 1024, else an eighth of them rounded up to
 * a multiple of `workgroupSize` (whole workgroups; 1 for group kernels, whose workgroups are
 * work-groups), so a long launch can be cancelled and report progress in steps.
 * @example chunkBatches(100, 64) // 100; chunkBatches(1 << 20, 64) // 131072
 */
export function chunkBatches(batchCount: number, workgroupSize: number): number {
  if (batchCount <= 1024) return Math.max(1, batchCount);
  const eighth = Math.ceil(batchCount / MAX_CHUNKS);
  return Math.ceil(eighth / workgroupSize) * workgroupSize;
}

/**
 * Submits a launch's dispatches and returns its handle. `descriptorSlot` is the Map's descriptor
 * slot (see launchDescriptor.ts); `report` receives what the launch moved, once, when it has ended
 * (before `done` settles).
 * @throws ArgumentError when an argument's allocation was freed (before anything is submitted).
 */
export function startLaunch(
  env: LaunchEnvironment,
  kernel: CompiledKernel,
  bound: BoundArgs,
  shape: LaunchShape,
  descriptorSlot?: DescriptorSlot,
  report?: (transfer: LaunchTransfer) => void,
): LaunchHandle {
  const batchCount = Math.ceil(shape.taskCount / shape.batchSize);
  const transfer = (uploadedBytes: number, downloadedBytes: number): LaunchTransfer => ({
    launchId: shape.launchId,
    kernelName: shape.kernelName,
    uploadedBytes,
    downloadedBytes,
    bound: bound.storage.map((s) => ({ name: s.name, buffer: s.buffer, byteOffset: s.range.byteOffset, byteLength: s.range.byteLength, writable: s.writable })),
  });
  if (batchCount === 0) {
    report?.(transfer(0, 0));
    return { done: Promise.resolve({ kind: 'completed' }), cancel: () => {}, progress: () => ({ issued: 0, done: 0 }) };
  }
  const { device, workgroupSize } = env;
  // A group kernel's workgroup is one work-group, so its chunks need not be whole workgroups of batches.
  const perChunk = chunkBatches(batchCount, kernel.unit === 'group' ? 1 : workgroupSize);
  const chunks = Math.ceil(batchCount / perChunk);
  const slot = Math.max(16, device.limits.minUniformBufferOffsetAlignment);

  // Resolve the storage buffers first: a freed one throws here, before anything is allocated.
  const storage = bound.storage.map((s) => {
    const buffer = env.memory.buffer(s.buffer);
    // Only a zero-length array at the very end of its allocation can overhang (bindings are at
    // least 4 bytes); it reads nothing, so binding an earlier aligned range is harmless.
    const align = device.limits.minStorageBufferOffsetAlignment;
    const offset = s.offset + s.size <= buffer.size ? s.offset : Math.max(0, buffer.size - s.size - ((buffer.size - s.size) % align));
    return { binding: s.binding, resource: { buffer, offset, size: s.size } };
  });

  const chunkData = new Uint32Array((chunks * slot) / 4);
  for (let c = 0; c < chunks; c++) {
    const at = (c * slot) / 4;
    chunkData[at] = c * perChunk;
    chunkData[at + 1] = Math.min((c + 1) * perChunk, batchCount);
    chunkData[at + 2] = shape.batchSize;
    chunkData[at + 3] = shape.taskCount;
  }
  const descriptor = prepareDescriptor(device, shape.kernelName, descriptorSlot, bound.uniform, new Uint8Array(chunkData.buffer));
  const { args: argsBuffer, chunks: chunkBuffer } = descriptor;
  const ring = kernel.messageBinding === undefined ? undefined : createMessageRing(device, shape.kernelName);
  let downloaded = 0;

  // Error scopes nest per device, so each push is popped before anything else can run.
  device.pushErrorScope('validation');
  const bindGroup = device.createBindGroup({
    label: `pxl ${shape.kernelName}`,
    layout: kernel.layout,
    entries: [
      { binding: CHUNK_BINDING, resource: { buffer: chunkBuffer, offset: 0, size: 16 } },
      { binding: ARGS_BINDING, resource: { buffer: argsBuffer } },
      ...storage,
      ...(ring === undefined ? [] : [{ binding: kernel.messageBinding!, resource: { buffer: ring.buffer } }]),
    ],
  });
  const scopes: Promise<GPUError | null>[] = [quiet(device.popErrorScope())];

  let cancelled = false;
  let issued = 0;
  let done = 0;

  const submit = (c: number): void => {
    const first = c * perChunk;
    const end = Math.min(first + perChunk, batchCount);
    // Workgroups: one per workgroupSize batches, or one per work-group of a group kernel.
    const groups = kernel.unit === 'group' ? Math.min(end * shape.batchSize, shape.taskCount) - first * shape.batchSize : Math.ceil((end - first) / workgroupSize);
    const x = Math.min(groups, device.limits.maxComputeWorkgroupsPerDimension);
    device.pushErrorScope('validation');
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(kernel.pipeline);
    pass.setBindGroup(0, bindGroup, [c * slot]);
    pass.dispatchWorkgroups(x, Math.ceil(groups / x));
    pass.end();
    device.queue.submit([encoder.finish()]);
    scopes.push(quiet(device.popErrorScope()));
  };

  const run = async (): Promise<LaunchOutcome> => {
    const closed = env.closed.then((error) => ({ closed: error }));
    const finished: Promise<number>[] = [];
    try {
      for (let c = 0; c < chunks && !cancelled; c++) {
        submit(c);
        const end = Math.min((c + 1) * perChunk, batchCount);
        issued = end;
        const start = performance.timeOrigin + performance.now();
        const record = { launchId: shape.launchId, core: c % CHUNKS_IN_FLIGHT, batch: c * perChunk, start };
        finished.push(
          quiet(
            device.queue.onSubmittedWorkDone().then(() => {
              env.record({ ...record, end: performance.timeOrigin + performance.now() });
              return end;
            }),
          ),
        );
        if (finished.length >= CHUNKS_IN_FLIGHT) {
          const r = await Promise.race([finished.shift()!, closed]);
          if (typeof r !== 'number') return { kind: 'failed', error: r.closed };
          done = r;
        }
      }
      for (const f of finished) {
        const r = await Promise.race([f, closed]);
        if (typeof r !== 'number') return { kind: 'failed', error: r.closed };
        done = r;
      }
      for (const scope of scopes) {
        const error = await scope;
        if (error !== null) return { kind: 'failed', error: new StateError(`launch of kernel '${shape.kernelName}' was refused by the GPU: ${error.message}`) };
      }
      // HostFinalize: what the kernel sent with message(), also from a cancelled launch's batches.
      if (ring !== undefined) {
        const r = await Promise.race([quiet(ring.read()), closed]);
        if (!('values' in r)) return { kind: 'failed', error: r.closed };
        downloaded += r.bytes;
        deliverMessages(shape.kernelName, r, shape.onMessage);
      }
      return cancelled ? { kind: 'cancelled' } : { kind: 'completed' };
    } catch (err) {
      return { kind: 'failed', error: new StateError(`launch of kernel '${shape.kernelName}' failed on the GPU: ${err instanceof Error ? err.message : String(err)}`) };
    } finally {
      descriptor.release();
      ring?.destroy();
      report?.(transfer(descriptor.uploadedBytes, downloaded));
    }
  };

  return {
    done: run(),
    cancel: () => {
      cancelled = true;
    },
    progress: () => ({ issued, done }),
  };
}

/**
 * `promise`, marked as handled: once the backend closes, a launch stops awaiting its remaining
 * chunks and scopes, which may then reject with the device gone; that must not surface as an
 * unhandled rejection. Awaiting the returned promise still sees the rejection.
 */
function quiet<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

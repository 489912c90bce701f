/// <reference types="@webgpu/types" />
import { Usage } from './gpuMemory.js';

/**
 * What a launch moves between host and GPU in HostInit. Device memory on this backend is GPU
 * buffers that the host fills and reads only with explicit copies (`copyToDevice`,
 * `copyFromDevice`), so a launch never copies NDArray or pointer data: the only host data it
 * uploads is its descriptor, the PxlArgs uniform (constants and the figures of each array) and the
 * dispatch table (each dispatch's batch range). A Map keeps its descriptor buffers between
 * launches and writes them again only when their bytes changed, so re-executing a Map with the
 * same arguments uploads nothing.
 *
 * Ownership: a Map's slot is used by one launch at a time (`busy`); a second launch of the same Map
 * in flight at once (possible on two streams) gets buffers of its own, destroyed when it ends, so
 * it cannot overwrite a descriptor that the first one's later dispatches still read.
 */

/** The descriptor buffers a Map keeps between launches (attached to its `mapToken`). */
export interface DescriptorSlot {
  busy: boolean;
  args?: { readonly buffer: GPUBuffer; readonly bytes: Uint8Array };
  chunks?: { readonly buffer: GPUBuffer; readonly bytes: Uint8Array };
}

/** One launch's descriptor buffers, and how many bytes it wrote to make them current. */
export interface Descriptor {
  readonly args: GPUBuffer;
  readonly chunks: GPUBuffer;
  readonly uploadedBytes: number;
  /** Returns the slot, or destroys buffers that belong to no slot. Call once, when the launch ends. */
  release(): void;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The descriptor buffers of one launch, written only where their bytes differ from what the slot
 * holds. `slot` undefined or busy: fresh buffers, written in full and destroyed at release.
 */
export function prepareDescriptor(device: GPUDevice, label: string, slot: DescriptorSlot | undefined, args: Uint8Array<ArrayBuffer>, chunks: Uint8Array<ArrayBuffer>): Descriptor {
  const owned = slot !== undefined && !slot.busy ? slot : undefined;
  const temporary: GPUBuffer[] = [];
  let uploadedBytes = 0;
  const current = (key: 'args' | 'chunks', bytes: Uint8Array<ArrayBuffer>): GPUBuffer => {
    const kept = owned?.[key];
    if (kept !== undefined && sameBytes(kept.bytes, bytes)) return kept.buffer;
    let buffer: GPUBuffer;
    if (kept !== undefined && kept.bytes.byteLength === bytes.byteLength) {
      buffer = kept.buffer;
    } else {
      kept?.buffer.destroy();
      buffer = device.createBuffer({ label: `pxl ${label} ${key}`, size: bytes.byteLength, usage: Usage.UNIFORM | Usage.COPY_DST });
      if (owned === undefined) temporary.push(buffer);
    }
    device.queue.writeBuffer(buffer, 0, bytes);
    uploadedBytes += bytes.byteLength;
    if (owned !== undefined) owned[key] = { buffer, bytes: bytes.slice() };
    return buffer;
  };
  const argsBuffer = current('args', args);
  const chunkBuffer = current('chunks', chunks);
  if (owned !== undefined) owned.busy = true;
  let released = false;
  return {
    args: argsBuffer,
    chunks: chunkBuffer,
    uploadedBytes,
    release: () => {
      if (released) return;
      released = true;
      if (owned !== undefined) owned.busy = false;
      for (const b of temporary) b.destroy();
    },
  };
}

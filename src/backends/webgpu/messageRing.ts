/// <reference types="@webgpu/types" />
import { MAP_READ, Usage } from './gpuMemory.js';
import { MESSAGE_CAPACITY } from './wgslSignature.js';

/**
 * `message(value: u32)` from WGSL. A launch of a kernel that calls it binds a zero-filled storage
 * ring of its own: word 0 counts the calls (atomically, past the capacity too), then
 * {@link MESSAGE_CAPACITY} slots of (task index, value). In HostFinalize, after the last dispatch,
 * the host reads the counter and then only the slots that were filled, and delivers the values to
 * the Map's message callback before the launch completes: grouped by task index (ascending), each
 * task's in the order it sent them. Calls beyond the capacity are dropped and reported with one
 * process warning per launch.
 *
 * Only the main thread touches a ring; it belongs to one launch and is destroyed when it ends.
 */

/** What a launch's kernel sent, read back from its ring. */
export interface ReadMessages {
  /** Values in delivery order. */
  readonly values: readonly number[];
  /** Calls made, the dropped ones included. */
  readonly sent: number;
  /** Bytes read back from the GPU. */
  readonly bytes: number;
}

/** One launch's message ring. */
export interface MessageRing {
  readonly buffer: GPUBuffer;
  /** Reads what the launch sent, after all of its submitted dispatches. */
  read(): Promise<ReadMessages>;
  destroy(): void;
}

/** Creates the ring of one launch. */
export function createMessageRing(device: GPUDevice, label: string): MessageRing {
  const buffer = device.createBuffer({ label: `pxl ${label} messages`, size: 4 * (1 + 2 * MESSAGE_CAPACITY), usage: Usage.STORAGE | Usage.COPY_SRC });
  const readWords = async (offset: number, count: number): Promise<Uint32Array> => {
    const staging = device.createBuffer({ size: 4 * count, usage: Usage.MAP_READ | Usage.COPY_DST });
    try {
      const encoder = device.createCommandEncoder();
      encoder.copyBufferToBuffer(buffer, 4 * offset, staging, 0, 4 * count);
      device.queue.submit([encoder.finish()]);
      await staging.mapAsync(MAP_READ);
      const words = new Uint32Array(staging.getMappedRange().slice(0));
      staging.unmap();
      return words;
    } finally {
      staging.destroy();
    }
  };
  return {
    buffer,
    read: async () => {
      const sent = (await readWords(0, 1))[0]!;
      const kept = Math.min(sent, MESSAGE_CAPACITY);
      if (kept === 0) return { values: [], sent, bytes: 4 };
      const slots = await readWords(1, 2 * kept);
      const order = Array.from({ length: kept }, (_, i) => i);
      // Stable: slots of one task keep the order the task filled them in.
      order.sort((a, b) => slots[2 * a]! - slots[2 * b]!);
      return { values: order.map((i) => slots[2 * i + 1]!), sent, bytes: 4 + 8 * kept };
    },
    destroy: () => buffer.destroy(),
  };
}

/**
 * Hands read messages to the Map's callback, in order, and warns once about dropped ones. A
 * throwing callback does not stop delivery (the CPU backend ignores such throws too).
 */
export function deliverMessages(kernelName: string, read: ReadMessages, onMessage: ((value: unknown) => void) | undefined): void {
  for (const value of read.values) {
    try {
      onMessage?.(value);
    } catch {
      // The callback's own failure; the launch itself succeeded.
    }
  }
  const dropped = read.sent - read.values.length;
  if (dropped > 0) {
    const text = `kernel '${kernelName}' sent ${read.sent} messages in one launch, but the GPU message buffer holds ${MESSAGE_CAPACITY}: ${dropped} were dropped (send fewer, or launch fewer tasks at a time)`;
    const proc = (globalThis as { process?: { emitWarning?: (w: string, o: { code: string }) => void } }).process;
    if (proc?.emitWarning !== undefined) proc.emitWarning(text, { code: 'PXL_MESSAGES_DROPPED' });
    else console.warn(text);
  }
}

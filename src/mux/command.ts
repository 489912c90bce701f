/**
 * The commands a command buffer records, in a file of their own: the buffer records them, and its
 * dependency graph (commandOrder.ts) and its runner (commandRunner.ts) read them, so both of those
 * import this file rather than the buffer.
 */
import type { KernelArg } from '../pxl/arguments.js';
import type { DevicePtr } from '../pxl/devicePtr.js';
import type { KernelMap } from '../pxl/kernelMap.js';

/** A host callback run as a command: it may return a promise, which the buffer awaits. */
export type CommandCallback = () => void | Promise<void>;

/** What a command buffer recorded, as a discriminated union on `kind` (read-only descriptions). */
export type Command =
  | { readonly kind: 'write'; readonly dst: DevicePtr; readonly offset: number; readonly size: number; readonly data: Uint8Array }
  | { readonly kind: 'read'; readonly src: DevicePtr; readonly offset: number; readonly size: number; readonly dst: Uint8Array }
  | { readonly kind: 'copy'; readonly src: DevicePtr; readonly srcOffset: number; readonly dst: DevicePtr; readonly dstOffset: number; readonly size: number }
  | { readonly kind: 'fill'; readonly dst: DevicePtr; readonly offset: number; readonly size: number; readonly pattern: Uint8Array }
  | { readonly kind: 'launch'; readonly kernel: string; readonly global: readonly number[]; readonly local: readonly number[]; readonly taskCount: number; readonly args: readonly KernelArg[]; readonly map: KernelMap }
  | { readonly kind: 'callback'; readonly fn: CommandCallback };

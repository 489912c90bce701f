import { ArgumentError } from '../core/errors.js';
import { describe } from '../core/validate.js';

/**
 * A pointer into device memory returned by `Context.memAlloc`. It is an opaque handle: the bytes
 * are reached through `copyToDevice`/`copyFromDevice`, an {@link NDArray}, or `Context.hostView`.
 * Pointer arithmetic is `ptr.add(bytes)`.
 */
export class DevicePtr {
  /** @internal */ readonly owner: object;
  /** @internal */ readonly buffer: number;
  /** @internal */ readonly allocation: { freed: boolean; readonly byteLength: number };
  readonly byteOffset: number;

  /** @internal */
  constructor(owner: object, buffer: number, allocation: { freed: boolean; readonly byteLength: number }, byteOffset = 0) {
    this.owner = owner;
    this.buffer = buffer;
    this.allocation = allocation;
    this.byteOffset = byteOffset;
  }

  /** Bytes from this pointer to the end of its allocation. */
  get byteLength(): number {
    return this.allocation.byteLength - this.byteOffset;
  }

  get freed(): boolean {
    return this.allocation.freed;
  }

  /** A pointer `bytes` further into the same allocation. */
  add(bytes: number): DevicePtr {
    if (!Number.isInteger(bytes) || bytes < 0 || bytes > this.byteLength) {
      throw new ArgumentError(`cannot offset a device pointer by ${describe(bytes)} bytes: it must be an integer in [0, ${this.byteLength}]`);
    }
    return new DevicePtr(this.owner, this.buffer, this.allocation, this.byteOffset + bytes);
  }
}

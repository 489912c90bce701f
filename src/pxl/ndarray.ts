import { dtypeSize, isDType, type DType, DTYPE_NAMES } from '../core/dtype.js';
import { ArgumentError } from '../core/errors.js';
import { describe } from '../core/validate.js';
import { DevicePtr } from './devicePtr.js';

/**
 * A typed, shaped, row-major view over device memory. Passed to `execute`, it is sliced along
 * its leading dimension for task kernels, so task `i` receives the view of row `i`.
 *
 * @example
 * ```ts
 * const ptr = ctx.memAlloc(rows * cols * 8);
 * const m = new NDArray(ptr, 'float64', [rows, cols]);
 * ```
 */
export class NDArray<D extends DType = DType> {
  readonly ptr: DevicePtr;
  readonly dtype: D;
  readonly shape: readonly number[];
  /** Number of elements. */
  readonly size: number;

  /**
   * @throws ArgumentError when the pointer is not a live DevicePtr, or the shape is malformed,
   *   reaches past the end of the pointer's allocation or is misaligned.
   */
  constructor(ptr: DevicePtr, dtype: D, shape: readonly number[]) {
    if (!(ptr instanceof DevicePtr)) throw new ArgumentError('NDArray needs a DevicePtr from Context.memAlloc as its first argument');
    if (ptr.freed) throw new ArgumentError('NDArray: the device pointer was freed with memFree; allocate a new one');
    if (!isDType(dtype)) throw new ArgumentError(`NDArray dtype must be one of ${DTYPE_NAMES.join(', ')}, got ${String(dtype)}`);
    if (!Array.isArray(shape)) throw new ArgumentError(`NDArray shape must be an array of 1 to 16 non-negative integers, got ${describe(shape)}`);
    if (shape.length === 0 || shape.length > 16 || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
      throw new ArgumentError(`NDArray shape must be 1 to 16 non-negative integers, got [${String(shape)}]`);
    }
    const elem = dtypeSize(dtype);
    if (ptr.byteOffset % elem !== 0) {
      throw new ArgumentError(`NDArray of ${dtype} needs a pointer aligned to ${elem} bytes, got byte offset ${ptr.byteOffset}`);
    }
    const size = shape.reduce((p, d) => p * d, 1);
    if (size * elem > ptr.byteLength) {
      throw new ArgumentError(`NDArray of shape [${shape.join(', ')}] ${dtype} needs ${size * elem} bytes, but the pointer reaches only ${ptr.byteLength}: allocate more or change the shape`);
    }
    this.ptr = ptr;
    this.dtype = dtype;
    this.shape = Object.freeze([...shape]);
    this.size = size;
  }

  get byteLength(): number {
    return this.size * dtypeSize(this.dtype);
  }
}

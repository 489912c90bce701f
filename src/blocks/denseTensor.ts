/**
 * A dense n-dimensional result in row-major order: the output of cdist, whose shape is the row
 * inputs' shape followed by the column inputs' shape. Because row-major offsets of that shape equal
 * `row * nCols + col` of the flattened 2-D matrix, block writers need not know the batch axes.
 */
import { OptionError } from '../core/errors.js';
import { checkInteger, describe } from '../core/validate.js';
import { type FloatArray, type FloatDType, floatDTypeOf, floatStorage } from './floatArray.js';

function checkShape(shape: readonly number[]): number {
  if (!Array.isArray(shape)) throw new OptionError(`shape must be an array of integers >= 0, got ${describe(shape)}`);
  let size = 1;
  shape.forEach((extent, axis) => {
    size *= checkInteger(`shape[${axis}]`, extent, 0, Number.MAX_SAFE_INTEGER);
  });
  return size;
}

/**
 * A row-major tensor of float32 or float64 values.
 *
 * @example
 * const t = new DenseTensor([2, 3]);
 * t.data[1 * 3 + 2] = 5;
 * t.get(1, 2); // 5
 */
export class DenseTensor {
  readonly #shape: readonly number[];
  readonly #data: FloatArray;

  /**
   * A zero-filled tensor of `dtype`, or a tensor over existing row-major `data` (not copied).
   *
   * @param init a dtype (default `'float64'`) or the data itself.
   * @throws {OptionError} when an extent is not an integer >= 0, the dtype is unknown, or `data`
   * is not a Float32Array or Float64Array of the shape's size.
   * @example
   * new DenseTensor([2, 3], 'float32');
   * new DenseTensor([2], new Float64Array([1, 2]));
   */
  constructor(shape: readonly number[], init: FloatDType | FloatArray = 'float64') {
    this.#data = floatStorage(init, checkShape(shape), `shape [${shape.join(', ')}]`);
    this.#shape = Object.freeze([...shape]);
  }

  get shape(): readonly number[] {
    return this.#shape;
  }

  get dtype(): FloatDType {
    return floatDTypeOf(this.#data);
  }

  /** Number of elements: the product of the extents (1 for a rank-0 tensor). */
  get size(): number {
    return this.#data.length;
  }

  /** The row-major storage; writes through it change the tensor. */
  get data(): FloatArray {
    return this.#data;
  }

  /**
   * The element at `idx`, one index per axis.
   *
   * @throws {OptionError} when the index count differs from the rank or an index is out of range.
   */
  get(...idx: number[]): number {
    if (idx.length !== this.#shape.length) {
      throw new OptionError(`get needs ${this.#shape.length} indices for shape [${this.#shape.join(', ')}], got ${idx.length}`);
    }
    let offset = 0;
    for (let axis = 0; axis < idx.length; axis++) {
      const extent = this.#shape[axis] as number;
      offset = offset * extent + checkInteger(`index ${axis}`, idx[axis], 0, extent - 1);
    }
    return this.#data[offset] as number;
  }
}

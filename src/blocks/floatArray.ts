/**
 * Results of pairwise operations are float32 or float64 scalars. This file names those two element
 * types once, so output containers, writers and block buffers agree on them.
 */
import { OptionError } from '../core/errors.js';
import { checkOneOf, describe } from '../core/validate.js';

/** Element type of a pairwise result. */
export type FloatDType = 'float32' | 'float64';

/** Storage of a pairwise result or of one block's result buffer. */
export type FloatArray = Float32Array | Float64Array;

/** Every {@link FloatDType}, for validation. */
export const FLOAT_DTYPES: readonly FloatDType[] = ['float32', 'float64'];

/**
 * A zero-filled array of `length` elements of `dtype`.
 *
 * @throws {OptionError} when `dtype` is neither `'float32'` nor `'float64'`.
 */
export function allocFloatArray(dtype: FloatDType, length: number): FloatArray {
  return checkOneOf('dtype', dtype, FLOAT_DTYPES) === 'float32' ? new Float32Array(length) : new Float64Array(length);
}

/** The dtype of a float array: `'float32'` for a Float32Array, else `'float64'`. */
export function floatDTypeOf(array: FloatArray): FloatDType {
  return array instanceof Float32Array ? 'float32' : 'float64';
}

/**
 * Storage for a result container: a fresh zero-filled array when `init` is a dtype, or `init`
 * itself (not copied) after checking it is a float array of exactly `length` elements.
 *
 * @param need what the length is for, for the error message, e.g. "shape [2, 3]".
 * @throws {OptionError} for an unknown dtype, a non-float array or a wrong length.
 */
export function floatStorage(init: FloatDType | FloatArray, length: number, need: string): FloatArray {
  if (typeof init === 'string') return allocFloatArray(init, length);
  if (!(init instanceof Float32Array || init instanceof Float64Array)) {
    throw new OptionError(`data must be a Float32Array or Float64Array, got ${describe(init)}`);
  }
  if (init.length !== length) throw new OptionError(`data has ${init.length} elements but ${need} needs ${length}`);
  return init;
}

/**
 * Where a pairwise result lives in an `.npy` file: the header NumPy reads first, then the
 * elements in C order. A layout maps pair (i, j) of the block schedule's matrix to an element
 * offset, so a finished block can be written straight to its final place without the rest of the
 * matrix existing anywhere.
 */
import { OptionError, UnsupportedError } from '../core/errors.js';
import { checkInteger, checkOneOf, describe } from '../core/validate.js';
import { FLOAT_DTYPES, type FloatDType } from './floatArray.js';

/**
 * How a result file is laid out:
 * - `'square'`: the full symmetric `n x n` matrix; each block fills both triangles (pdist, l2Kernel).
 * - `'condensed'`: scipy's condensed vector of the pairs i < j, as `scipy.spatial.distance.pdist`
 *   returns it (pdist only: the diagonal is not stored, so it must be zero).
 * - `'dense'`: every pair of an `nRows x nCols` matrix, row-major, with any shape whose product is
 *   `nRows * nCols` (cdist's `[...X.shape, ...Y.shape]`).
 */
export type FileLayout = 'square' | 'condensed' | 'dense';

/** Every {@link FileLayout}, for validation. */
export const FILE_LAYOUTS: readonly FileLayout[] = ['square', 'condensed', 'dense'];

/** The arithmetic of one result file, computed once; see {@link npyFileLayout}. */
export interface NpyFileLayout {
  readonly kind: FileLayout;
  readonly dtype: FloatDType;
  /** Rows and columns of the pairwise matrix the blocks cut. */
  readonly nRows: number;
  readonly nCols: number;
  /** The array's shape as NumPy sees it. */
  readonly shape: readonly number[];
  /** The `.npy` header; the data start right after it, at a multiple of 64 bytes. */
  readonly header: Uint8Array;
  /** Bytes per element: 4 or 8. */
  readonly elementBytes: number;
  /** Elements in the file. */
  readonly elements: number;
  /** Size of the whole file in bytes, header included. */
  readonly bytes: number;
}

/** The magic string every `.npy` file starts with: `"\x93NUMPY"`. */
export const NPY_MAGIC: readonly number[] = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59];
/** Bytes before a v1.0 header's dict: magic, 2 version bytes, uint16 header length. */
export const NPY_PREAMBLE = 10;
const ALIGN = 64;

/**
 * The `.npy` v1.0 header of a C-order array of `type` and `shape`, the one place pxl writes it
 * (`encodeNpy`, result files and `.npz` members all use it): magic, version, length, a Python
 * dict padded with spaces to a multiple of 64 bytes and ended by a newline. The data follows it
 * directly. `type` is a float dtype (`'float64'` is `'<f8'`, `'float32'` is `'<f4'`) or a NumPy
 * type string such as `'<i8'`.
 *
 * @throws {OptionError} for a `type` that is neither, or when the header would exceed the 65535
 *   bytes v1.0 allows.
 * @example npyHeader('float64', [3, 3]).length // 128, as np.save writes it
 * @example npyHeader('<i8', [3]).length // 128
 */
export function npyHeader(type: FloatDType | string, shape: readonly number[]): Uint8Array {
  const descr = type === 'float64' ? '<f8' : type === 'float32' ? '<f4' : type;
  if (typeof descr !== 'string' || !/^[<>|=][a-zA-Z]\d{0,2}$/.test(descr)) {
    throw new OptionError(`npyHeader: type must be 'float64', 'float32' or a NumPy type string such as '<i8', got ${describe(type)}`);
  }
  const dims = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${dims}, }`;
  const total = NPY_PREAMBLE + dict.length + 1;
  dict = dict + ' '.repeat((ALIGN - (total % ALIGN)) % ALIGN) + '\n';
  if (dict.length > 0xffff) throw new OptionError(`shape has too many dimensions for an .npy v1.0 header (${shape.length})`);
  const bytes = new Uint8Array(NPY_PREAMBLE + dict.length);
  bytes.set(NPY_MAGIC, 0);
  bytes[6] = 1;
  bytes[8] = dict.length & 0xff;
  bytes[9] = dict.length >>> 8;
  for (let k = 0; k < dict.length; k++) bytes[NPY_PREAMBLE + k] = dict.charCodeAt(k);
  return bytes;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * The layout of a result file of `kind` over an `nRows x nCols` pair matrix.
 *
 * @param shape for `'dense'`: the array shape, product `nRows * nCols` (default `[nRows, nCols]`).
 *   Square and condensed files are `[n, n]` and `[n * (n - 1) / 2]`.
 * @throws {OptionError} for an unknown kind or dtype, a non-square symmetric layout, or a shape
 *   that does not hold `nRows * nCols` elements; {@link UnsupportedError} on a big-endian host,
 *   whose typed arrays are not in `.npy`'s byte order.
 * @example
 * npyFileLayout('condensed', 'float64', 4, 4).shape // [6]
 * npyFileLayout('dense', 'float32', 6, 4, [2, 3, 4]).bytes // 128 + 96
 */
export function npyFileLayout(kind: FileLayout, dtype: FloatDType, nRows: number, nCols: number, shape?: readonly number[]): NpyFileLayout {
  checkOneOf('layout', kind, FILE_LAYOUTS);
  checkOneOf('dtype', dtype, FLOAT_DTYPES);
  checkInteger('nRows', nRows, 0, Number.MAX_SAFE_INTEGER);
  checkInteger('nCols', nCols, 0, Number.MAX_SAFE_INTEGER);
  if (!LITTLE_ENDIAN) throw new UnsupportedError('result files are written from little-endian memory only; this host is big-endian');
  if (kind !== 'dense' && nRows !== nCols) throw new OptionError(`a ${kind} result file needs a square matrix, got ${nRows} x ${nCols}`);
  let dims: readonly number[];
  if (kind === 'square') dims = [nRows, nRows];
  else if (kind === 'condensed') dims = [(nRows * (nRows - 1)) / 2];
  else {
    dims = shape ?? [nRows, nCols];
    const product = Array.isArray(dims) ? dims.reduce((a: number, b: number) => a * b, 1) : NaN;
    if (!Array.isArray(dims) || dims.some((d) => !Number.isSafeInteger(d) || d < 0) || product !== nRows * nCols) {
      throw new OptionError(`shape ${describe(shape)} must be a list of integers >= 0 whose product is ${nRows} x ${nCols} = ${nRows * nCols}`);
    }
  }
  const header = npyHeader(dtype, dims);
  const elementBytes = dtype === 'float64' ? 8 : 4;
  const elements = dims.reduce((a, b) => a * b, 1);
  return Object.freeze({ kind, dtype, nRows, nCols, shape: Object.freeze([...dims]), header, elementBytes, elements, bytes: header.length + elements * elementBytes });
}

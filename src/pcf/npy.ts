import { NPY_MAGIC as MAGIC, NPY_PREAMBLE as PREAMBLE, npyHeader } from '../blocks/npyLayout.js';
import { ArgumentError, InputFormatError, OptionError, OutOfMemoryError } from '../core/errors.js';
import { describe } from '../core/validate.js';

export { npyHeader };

/**
 * NumPy `.npy` files (format version 1.0) for results: a magic string, a little-endian uint16
 * header length, a Python-dict header padded with spaces and ended by `\n` so the data starts at a
 * multiple of 64 bytes, then the raw little-endian elements in C (row-major) order. The header is
 * written by blocks/npyLayout.ts's `npyHeader` (re-exported here), the one writer of it.
 */

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Elements of an .npy file this module reads and writes. */
export type NpyData = Float64Array | Float32Array;

/** A decoded .npy file. */
export interface NpyArray {
  readonly dtype: 'float64' | 'float32';
  readonly shape: number[];
  readonly data: NpyData;
}

/**
 * Encodes `data` with logical `shape` as an .npy v1.0 file (`'<f8'` or `'<f4'`,
 * `fortran_order: False`).
 *
 * @throws ArgumentError when `data` is not a Float64Array or Float32Array; OptionError when the
 *   shape is not a list of non-negative integers whose product is `data.length`; OutOfMemoryError
 *   when the file would not fit in one buffer.
 * @example encodeNpy(new Float64Array([1, 2, 3, 4, 5, 6]), [2, 3])
 */
export function encodeNpy(data: NpyData, shape: readonly number[]): Uint8Array {
  if (!(data instanceof Float64Array) && !(data instanceof Float32Array)) {
    throw new ArgumentError(`encodeNpy: data must be a Float64Array or a Float32Array, got ${describe(data)}`);
  }
  if (!Array.isArray(shape)) throw new OptionError(`shape must be a list of non-negative integers, got ${describe(shape)}`);
  let product = 1;
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 0) throw new OptionError(`shape must be a list of non-negative integers, got [${shape.join(', ')}]`);
    product *= d;
  }
  if (product !== data.length) {
    throw new OptionError(`shape [${shape.join(', ')}] holds ${product} elements, but data has ${data.length}`);
  }
  const head = npyHeader(data instanceof Float64Array ? '<f8' : '<f4', shape);
  const dataStart = head.length;
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(dataStart + data.byteLength);
  } catch (err) {
    // V8 caps one buffer (2^32 elements on Node 20) below what the data may need.
    if (!(err instanceof RangeError)) throw err;
    throw new OutOfMemoryError(dataStart + data.byteLength, 0, `encodeNpy: an .npy file of ${dataStart + data.byteLength} bytes does not fit in one buffer (${err.message}); write the array in parts`);
  }
  bytes.set(head, 0);
  if (LITTLE_ENDIAN) {
    bytes.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), dataStart);
  } else {
    const view = new DataView(bytes.buffer, dataStart);
    const size = data.BYTES_PER_ELEMENT;
    for (let k = 0; k < data.length; k++) {
      if (size === 8) view.setFloat64(k * 8, data[k]!, true);
      else view.setFloat32(k * 4, data[k]!, true);
    }
  }
  return bytes;
}

/** What an .npy header says, as read by {@link parseNpyHeader}. */
export interface NpyHeader {
  /** NumPy's type string, e.g. `'<f8'`. */
  readonly descr: string;
  readonly fortranOrder: boolean;
  readonly shape: number[];
  /** Offset of the first data byte from the start of the file. */
  readonly dataStart: number;
}

/**
 * Reads the header at the start of `bytes`, which may hold only a prefix of the file (the data
 * need not be there): for files read in pieces. Any descr is returned; the caller checks it.
 *
 * @returns undefined while `bytes` is too short to hold the whole header.
 * @throws InputFormatError for a bad magic string, an unknown version or a malformed header.
 */
export function parseNpyHeader(bytes: Uint8Array): NpyHeader | undefined {
  if (bytes.length < PREAMBLE) {
    if (MAGIC.some((b, k) => k < bytes.length && bytes[k] !== b)) throw new InputFormatError('not an .npy file: bad magic string');
    return undefined;
  }
  if (MAGIC.some((b, k) => bytes[k] !== b)) throw new InputFormatError('not an .npy file: bad magic string');
  const major = bytes[6]!;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let headerStart: number;
  let headerLength: number;
  if (major === 1) {
    headerStart = PREAMBLE;
    headerLength = view.getUint16(8, true);
  } else if (major === 2 || major === 3) {
    if (bytes.length < 12) return undefined;
    headerStart = 12;
    headerLength = view.getUint32(8, true);
  } else {
    throw new InputFormatError(`unsupported .npy version ${major}.${bytes[7]}`);
  }
  const dataStart = headerStart + headerLength;
  if (dataStart > bytes.length) return undefined;
  let header = '';
  for (let k = headerStart; k < dataStart; k++) header += String.fromCharCode(bytes[k]!);
  const descr = /'descr':\s*'([^']*)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
  const shapeMatch = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (descr === undefined || fortran === undefined || shapeMatch === undefined) throw new InputFormatError(`malformed .npy header ${JSON.stringify(header.trim())}`);
  const shape = shapeMatch.split(',').map((s) => s.trim()).filter((s) => s !== '').map(Number);
  if (shape.some((d) => !Number.isSafeInteger(d) || d < 0)) throw new InputFormatError(`malformed .npy shape (${shapeMatch})`);
  return { descr, fortranOrder: fortran === 'True', shape, dataStart };
}

/**
 * Decodes an .npy file holding little-endian float64 or float32 in C order (what
 * {@link encodeNpy} writes; versions 1.0 and 2.0).
 *
 * @throws InputFormatError for anything else, saying what was found; ArgumentError when `bytes`
 *   is not a Uint8Array.
 */
export function decodeNpy(bytes: Uint8Array): NpyArray {
  if (!(bytes instanceof Uint8Array)) throw new ArgumentError(`decodeNpy: bytes must be a Uint8Array (or a Node Buffer) of an .npy file, got ${describe(bytes)}`);
  if (bytes.length < PREAMBLE || MAGIC.some((b, k) => bytes[k] !== b)) throw new InputFormatError('not an .npy file: bad magic string');
  const major = bytes[6]!;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let headerStart: number;
  let headerLength: number;
  if (major === 1) {
    headerStart = PREAMBLE;
    headerLength = view.getUint16(8, true);
  } else if (major === 2 && bytes.length >= 12) {
    headerStart = 12;
    headerLength = view.getUint32(8, true);
  } else {
    throw new InputFormatError(`unsupported .npy version ${major}.${bytes[7]}`);
  }
  const dataStart = headerStart + headerLength;
  if (dataStart > bytes.length) throw new InputFormatError('truncated .npy file: the header runs past the end');
  let header = '';
  for (let k = headerStart; k < dataStart; k++) header += String.fromCharCode(bytes[k]!);
  const descr = /'descr':\s*'([^']*)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
  const shapeMatch = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (descr !== '<f8' && descr !== '<f4') throw new InputFormatError(`unsupported .npy dtype ${descr ?? '(none)'}; expected '<f8' or '<f4'`);
  if (fortran !== 'False') throw new InputFormatError('unsupported .npy layout: only fortran_order False is read');
  if (shapeMatch === undefined) throw new InputFormatError('malformed .npy header: no shape');
  const shape = shapeMatch.split(',').map((s) => s.trim()).filter((s) => s !== '').map(Number);
  if (shape.some((d) => !Number.isInteger(d) || d < 0)) throw new InputFormatError(`malformed .npy shape (${shapeMatch})`);
  const count = shape.reduce((a, b) => a * b, 1);
  const size = descr === '<f8' ? 8 : 4;
  if (bytes.length - dataStart !== count * size) {
    throw new InputFormatError(`.npy data has ${bytes.length - dataStart} bytes, but shape (${shape.join(', ')}) of ${descr} needs ${count * size}`);
  }
  let data: NpyData;
  if (LITTLE_ENDIAN) {
    // A fresh, exactly sized buffer: aligned for any element size, whatever `bytes` is (a Node
    // Buffer's slice() is a view into a shared pool, not a copy).
    const copy = new Uint8Array(bytes.length - dataStart);
    copy.set(bytes.subarray(dataStart));
    data = size === 8 ? new Float64Array(copy.buffer, 0, count) : new Float32Array(copy.buffer, 0, count);
  } else {
    data = size === 8 ? new Float64Array(count) : new Float32Array(count);
    for (let k = 0; k < count; k++) data[k] = size === 8 ? view.getFloat64(dataStart + 8 * k, true) : view.getFloat32(dataStart + 4 * k, true);
  }
  return { dtype: size === 8 ? 'float64' : 'float32', shape, data };
}

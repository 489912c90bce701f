/**
 * Element types of device memory. Each dtype names a TypedArray constructor; its numeric code is
 * what travels in launch descriptors.
 */
export const DTYPES = {
  float64: Float64Array,
  float32: Float32Array,
  int32: Int32Array,
  uint32: Uint32Array,
  int16: Int16Array,
  uint16: Uint16Array,
  int8: Int8Array,
  uint8: Uint8Array,
  bigint64: BigInt64Array,
  biguint64: BigUint64Array,
} as const;

/** Name of an element type: `'float64'`, `'int32'`, ... */
export type DType = keyof typeof DTYPES;

/** TypedArrays by dtype, over any buffer (device memory is a SharedArrayBuffer). */
export interface TypedArrayMap {
  float64: Float64Array<ArrayBufferLike>;
  float32: Float32Array<ArrayBufferLike>;
  int32: Int32Array<ArrayBufferLike>;
  uint32: Uint32Array<ArrayBufferLike>;
  int16: Int16Array<ArrayBufferLike>;
  uint16: Uint16Array<ArrayBufferLike>;
  int8: Int8Array<ArrayBufferLike>;
  uint8: Uint8Array<ArrayBufferLike>;
  bigint64: BigInt64Array<ArrayBufferLike>;
  biguint64: BigUint64Array<ArrayBufferLike>;
}

/** The TypedArray class that holds elements of dtype `D`, e.g. `Float64Array` for `'float64'`. */
export type TypedArrayOf<D extends DType> = TypedArrayMap[D];

/** Any TypedArray pxl can place over device memory. */
export type AnyTypedArray = TypedArrayOf<DType>;

/** The dtype whose TypedArray class is `T` (`'float64'` for `Float64Array`). */
export type DTypeOf<T extends AnyTypedArray> = { [D in DType]: TypedArrayOf<D> extends T ? (T extends TypedArrayOf<D> ? D : never) : never }[DType];

export const DTYPE_NAMES = Object.keys(DTYPES) as DType[];

/** Bytes per element of `dtype`. */
export function dtypeSize(dtype: DType): number {
  return DTYPES[dtype].BYTES_PER_ELEMENT;
}

export function isDType(value: unknown): value is DType {
  return typeof value === 'string' && Object.hasOwn(DTYPES, value);
}

/** Numeric code of a dtype, stable across threads. */
export function dtypeCode(dtype: DType): number {
  return DTYPE_NAMES.indexOf(dtype);
}

export function dtypeFromCode(code: number): DType {
  const name = DTYPE_NAMES[code];
  if (name === undefined) throw new RangeError(`unknown dtype code ${code}`);
  return name;
}

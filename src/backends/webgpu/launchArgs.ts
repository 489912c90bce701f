import type { DType } from '../../core/dtype.js';
import { ArgumentError } from '../../core/errors.js';
import { describe } from '../../core/validate.js';
import type { ConstantValue, LaunchArg } from '../backend.js';
import { MAX_DIMS, typeText, type SignatureParam, type StorageElement, type WgslSignature } from './wgslSignature.js';

/**
 * Binds one launch's arguments to a WGSL kernel's declared parameters: encodes constants and
 * storage figures into the PxlArgs uniform, and says which range of which buffer each storage
 * binding covers. Every mismatch is an ArgumentError naming the argument, its declared type and
 * what to pass instead.
 */

/** One array argument as a launch binds it. */
export interface StorageBinding {
  readonly binding: number;
  readonly argIndex: number;
  readonly name: string;
  readonly buffer: number;
  /** Byte range of the buffer bound, aligned as the device requires. */
  readonly offset: number;
  readonly size: number;
  /** The argument's own bytes within the buffer (the binding may start below, for alignment). */
  readonly range: { readonly byteOffset: number; readonly byteLength: number };
  readonly writable: boolean;
}

/** A launch's encoded arguments: the PxlArgs uniform and the storage bindings. */
export interface BoundArgs {
  readonly uniform: Uint8Array<ArrayBuffer>;
  readonly storage: readonly StorageBinding[];
}

/** The device limits binding depends on. */
export interface BindLimits {
  readonly minStorageBufferOffsetAlignment: number;
  readonly maxStorageBufferBindingSize: number;
}

/** WGSL element type of each dtype the webgpu backend can bind. */
const ELEMENT_OF: Partial<Record<DType, StorageElement>> = { float32: 'f32', int32: 'i32', uint32: 'u32' };

/**
 * Arguments the webgpu backend can never bind, whatever the kernel: NDArrays of dtypes WGSL lacks,
 * pointers not on a 32-bit word. Checked at execute, so such arguments reject the execute itself.
 */
export function checkGpuArgs(args: readonly LaunchArg[]): void {
  args.forEach((a, i) => {
    if (a.kind === 'ndarray' && ELEMENT_OF[a.dtype] === undefined) throw unsupportedDtype(a.dtype, i);
    if (a.kind === 'pointer' && a.byteOffset % 4 !== 0) {
      throw new ArgumentError(`argument ${i} is a device pointer ${a.byteOffset} bytes into its allocation; WGSL storage is addressed in 32-bit words, so the offset must be a multiple of 4`, i);
    }
  });
}

function unsupportedDtype(dtype: DType, i: number): ArgumentError {
  const why = dtype === 'float64' ? 'WGSL has no 64-bit floats: store the data as float32' : 'WGSL storage holds 32-bit words: store the data as int32, uint32 or float32';
  return new ArgumentError(`argument ${i} is a ${dtype} NDArray, which the webgpu backend cannot bind (${why})`, i);
}

/**
 * Encodes one launch's arguments for a kernel's WGSL signature. Pure: `checkArgs` runs it at
 * execute() to find mismatches before the launch is queued, and `launch` runs it again to bind.
 * A sliced NDArray's leading dimension is the launch's taskCount (`execute` checked it).
 *
 * @throws ArgumentError naming the argument, its declared type and what to pass instead: wrong
 *   count, a constant for an array or the reverse, an element type that differs, an integer out of
 *   range, a struct with missing or extra fields, an array larger than one storage binding, or a
 *   writable array that overlaps another argument.
 * @example bindArgs('fill_rows', wgslSignature(spec), launchArgs, device.limits)
 */
export function bindArgs(kernelName: string, signature: WgslSignature, args: readonly LaunchArg[], limits: BindLimits): BoundArgs {
  const params = signature.params;
  if (args.length !== params.length) {
    const names = params.map((p) => p.name).join(', ');
    throw new ArgumentError(`kernel '${kernelName}' declares ${params.length} WGSL parameter${params.length === 1 ? '' : 's'} (${names || 'none'}), but execute() passed ${args.length} argument${args.length === 1 ? '' : 's'}`);
  }
  const uniform = new Uint8Array(signature.uniformBytes);
  const view = new DataView(uniform.buffer);
  const storage: StorageBinding[] = [];
  params.forEach((p, i) => {
    const arg = args[i]!;
    const what = `argument ${i} ('${p.name}', declared ${typeText(p)})`;
    if (p.kind === 'storage') {
      if (arg.kind === 'constant') throw new ArgumentError(`${what} must be an NDArray or a device pointer, got a constant`, i);
      storage.push(bindStorage(p, arg, i, what, view, limits));
      return;
    }
    if (arg.kind !== 'constant') throw new ArgumentError(`${what} must be a constant, got ${arg.kind === 'pointer' ? 'a device pointer' : 'an NDArray'}`, i);
    if (p.kind === 'scalar') {
      writeScalar(view, p.offset, p.type, arg.value, what, i);
      return;
    }
    const value = arg.value;
    if (typeof value !== 'object') throw new ArgumentError(`${what} must be a plain object with fields ${p.fields.map((f) => f.name).join(', ')}, got ${describe(value)}`, i);
    const extra = Object.keys(value).filter((k) => !p.fields.some((f) => f.name === k));
    if (extra.length > 0) throw new ArgumentError(`${what} has field${extra.length === 1 ? '' : 's'} ${extra.join(', ')} that the kernel does not declare`, i);
    p.fields.forEach((f, k) => writeScalar(view, p.offset + 4 * k, f.type, value[f.name], `${what}, field ${f.name}`, i));
  });
  checkAliasing(kernelName, storage);
  return { uniform, storage };
}

function writeScalar(view: DataView, offset: number, type: string, value: ConstantValue | undefined, what: string, i: number): void {
  const fail = (expected: string): never => {
    throw new ArgumentError(`${what} must be ${expected}, got ${value === undefined ? 'nothing' : describe(value)}`, i);
  };
  switch (type) {
    case 'f32':
      if (typeof value !== 'number') fail('a number');
      view.setFloat32(offset, value as number, true);
      return;
    case 'bool':
      if (typeof value !== 'boolean') fail('a boolean');
      view.setUint32(offset, value === true ? 1 : 0, true);
      return;
    default: {
      const [min, max] = type === 'i32' ? [-(2 ** 31), 2 ** 31 - 1] : [0, 2 ** 32 - 1];
      const n = typeof value === 'bigint' ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) fail(`an integer in [${min}, ${max}]`);
      if (type === 'i32') view.setInt32(offset, n as number, true);
      else view.setUint32(offset, n as number, true);
    }
  }
}

function bindStorage(
  p: Extract<SignatureParam, { kind: 'storage' }>,
  arg: Exclude<LaunchArg, { kind: 'constant' }>,
  i: number,
  what: string,
  view: DataView,
  limits: BindLimits,
): StorageBinding {
  let bytes: number;
  let size: number;
  let stride: number;
  let dims: readonly number[];
  if (arg.kind === 'ndarray') {
    const element = ELEMENT_OF[arg.dtype];
    if (element === undefined) throw unsupportedDtype(arg.dtype, i);
    if (element !== p.element) throw new ArgumentError(`${what} is a ${arg.dtype} NDArray; pass ${p.element === 'f32' ? 'float32' : p.element === 'i32' ? 'int32' : 'uint32'} data or change the declared type`, i);
    const total = arg.shape.reduce((a, d) => a * d, 1);
    bytes = total * 4;
    if (arg.sliced) {
      dims = arg.shape.slice(1);
      size = total / Math.max(1, arg.shape[0]!);
      stride = size;
    } else {
      dims = arg.shape;
      size = total;
      stride = 0;
    }
  } else {
    if (arg.byteOffset % 4 !== 0) throw new ArgumentError(`${what} is a device pointer ${arg.byteOffset} bytes into its allocation; it must be on a 32-bit word (a multiple of 4)`, i);
    size = Math.floor(arg.byteLength / 4);
    bytes = size * 4;
    stride = 0;
    dims = [size];
  }
  const align = limits.minStorageBufferOffsetAlignment;
  const offset = arg.byteOffset - (arg.byteOffset % align);
  const span = Math.max(4, arg.byteOffset + bytes - offset);
  if (span > limits.maxStorageBufferBindingSize) {
    throw new ArgumentError(`${what} spans ${span} bytes, but this GPU binds at most ${limits.maxStorageBufferBindingSize} bytes per storage buffer (maxStorageBufferBindingSize): split the work over smaller arrays`, i);
  }
  const v = p.offset;
  view.setUint32(v, (arg.byteOffset - offset) / 4, true);
  view.setUint32(v + 4, size, true);
  view.setUint32(v + 8, stride, true);
  view.setUint32(v + 12, dims.length, true);
  dims.slice(0, MAX_DIMS).forEach((d, k) => view.setUint32(v + 16 + 4 * k, d, true));
  return { binding: p.binding, argIndex: i, name: p.name, buffer: arg.buffer, offset, size: span, range: { byteOffset: arg.byteOffset, byteLength: bytes }, writable: p.writable };
}

/** WebGPU refuses a writable binding that overlaps any other binding of the same buffer in one dispatch. */
function checkAliasing(kernelName: string, storage: readonly StorageBinding[]): void {
  for (let a = 0; a < storage.length; a++) {
    for (let b = a + 1; b < storage.length; b++) {
      const x = storage[a]!;
      const y = storage[b]!;
      if (x.buffer !== y.buffer || !(x.writable || y.writable)) continue;
      if (x.offset < y.offset + y.size && y.offset < x.offset + x.size) {
        const w = x.writable ? x : y;
        throw new ArgumentError(
          `arguments ${x.argIndex} ('${x.name}') and ${y.argIndex} ('${y.name}') of kernel '${kernelName}' overlap in device memory, and '${w.name}' is read_write: ` +
            'a GPU launch cannot write memory that another argument also binds; pass disjoint allocations (or ranges that do not share an aligned block), or one argument',
          w.argIndex,
        );
      }
    }
  }
}

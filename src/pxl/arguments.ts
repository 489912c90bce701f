import { ArgumentError } from '../core/errors.js';
import { describe } from '../core/validate.js';
import type { ConstantValue, KernelForm, LaunchArg } from '../backends/backend.js';
import { DevicePtr } from './devicePtr.js';
import { NDArray } from './ndarray.js';

/** Most kernel parameters one launch takes; a plain object of constants counts as one. */
export const MaxKernelParams = 9;

/** A value `KernelMap.execute` accepts as one kernel parameter. */
export type KernelArg = number | bigint | boolean | ConstantObject | DevicePtr | NDArray;
export interface ConstantObject {
  readonly [key: string]: number | bigint | boolean | ConstantObject;
}

const CONSTANT_HINT = 'constants may be numbers, bigints, booleans, or plain objects of those';

/**
 * Classifies and checks the arguments of one execute. `owner` is the Context the Map belongs to:
 * pointers and NDArrays from another Context are refused.
 */
export function toLaunchArgs(args: readonly unknown[], owner: object, form: KernelForm, taskCount: number): LaunchArg[] {
  if (args.length > MaxKernelParams) {
    throw new ArgumentError(`execute() takes at most ${MaxKernelParams} kernel parameters, got ${args.length}: group constants into one plain object, which counts as one parameter`);
  }
  return args.map((arg, i): LaunchArg => {
    if (arg instanceof DevicePtr) {
      checkPointer(arg, owner, i, 'a device pointer');
      return { kind: 'pointer', buffer: arg.buffer, byteOffset: arg.byteOffset, byteLength: arg.byteLength };
    }
    if (arg instanceof NDArray) {
      checkPointer(arg.ptr, owner, i, 'an NDArray');
      const sliced = form === 'task';
      if (sliced && arg.shape[0] !== taskCount) {
        throw new ArgumentError(`argument ${i} is an NDArray with leading dimension ${arg.shape[0]}, but the Map's taskCount is ${taskCount}: each task receives one slice along the leading dimension, so the two must be equal`, i);
      }
      return { kind: 'ndarray', buffer: arg.ptr.buffer, byteOffset: arg.ptr.byteOffset, dtype: arg.dtype, shape: arg.shape, sliced };
    }
    return { kind: 'constant', value: toConstant(arg, i, `argument ${i}`) };
  });
}

function checkPointer(ptr: DevicePtr, owner: object, i: number, what: string): void {
  if (ptr.owner !== owner) {
    throw new ArgumentError(`argument ${i} is ${what} from another Context: allocate it with this Map's Context, or copy the data across`, i);
  }
  if (ptr.freed) throw new ArgumentError(`argument ${i} is ${what} whose memory was freed with memFree`, i);
}

function toConstant(value: unknown, i: number, path: string): ConstantValue {
  switch (typeof value) {
    case 'number':
    case 'bigint':
    case 'boolean':
      return value;
    case 'object': {
      if (value === null) break;
      if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer || value instanceof SharedArrayBuffer) {
        throw new ArgumentError(`${path} is ${describe(value)}: host memory cannot be passed to a kernel; copy it to device memory (memAlloc, copyToDevice) and pass an NDArray or the pointer`, i);
      }
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) break;
      const out: Record<string, ConstantValue> = {};
      for (const [k, v] of Object.entries(value)) out[k] = toConstant(v, i, `${path}.${k}`);
      return out;
    }
    default:
      break;
  }
  throw new ArgumentError(`${path} is ${describe(value)}, which cannot be passed to a kernel: ${CONSTANT_HINT}, device pointers, or NDArrays`, i);
}

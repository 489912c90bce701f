import { OptionError } from '../../core/errors.js';
import type { GroupGeometry, LaunchArg } from '../backend.js';
import { lengthConstant, RANGE_BYTES, type GroupSignature, type GroupWgsl } from './wgslGroupProgram.js';

/**
 * Host-side preparation of a group kernel's launch on the webgpu backend: reading the range from
 * the hidden geometry argument KernelMap puts in front of the user's arguments, checking the
 * work-group against the adapter's limits, computing the pipeline's override constants (the
 * work-group size and each local array's length) and writing the range into the uniform.
 */

const KEYS = ['dims', 'g0', 'g1', 'g2', 'l0', 'l1', 'l2'] as const;

/** `arg` as the geometry argument, or undefined when it is not one. */
export function asGeometry(arg: LaunchArg | undefined): GroupGeometry | undefined {
  if (arg?.kind !== 'constant' || typeof arg.value !== 'object') return undefined;
  const v = arg.value as Record<string, unknown>;
  if (Object.keys(v).length !== KEYS.length || !KEYS.every((k) => typeof v[k] === 'number')) return undefined;
  return v as unknown as GroupGeometry;
}

/** The device limits a work-group must fit. */
export interface GroupLimits {
  readonly maxComputeInvocationsPerWorkgroup: number;
  readonly maxComputeWorkgroupSizeX: number;
  readonly maxComputeWorkgroupSizeY: number;
  readonly maxComputeWorkgroupSizeZ: number;
  readonly maxComputeWorkgroupStorageSize: number;
}

/** The work-group size as the Map's range has it: one entry per dimension. */
function localSize(g: GroupGeometry): number[] {
  return [g.l0, g.l1, g.l2].slice(0, g.dims);
}

/**
 * Each local array's length for this work-group size, from the kernel's spec.
 * @throws OptionError when a length function returns something other than an integer ≥ 0.
 */
export function localLengths(kernelName: string, spec: GroupWgsl, g: GroupGeometry): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, a] of Object.entries(spec.local)) {
    const n = typeof a.length === 'function' ? a.length(localSize(g)) : a.length;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
      throw new OptionError(`kernel '${kernelName}': local array '${name}': its length function returned ${String(n)} for work-group size [${localSize(g).join(', ')}]; it must return an integer ≥ 0`);
    }
    out[name] = n;
  }
  return out;
}

/** Bytes of workgroup memory the local arrays take, as WebGPU counts them (each rounded up to 16). */
export function localBytes(lengths: Readonly<Record<string, number>>): number {
  return Object.values(lengths).reduce((sum, n) => sum + Math.ceil((4 * Math.max(1, n)) / 16) * 16, 0);
}

/**
 * Checks that a work-group of this range fits the GPU, and returns the pipeline's override
 * constants for it: `pxl_l0..2` and `pxl_len_<name>` (at least 1: WGSL arrays are never empty).
 * @throws OptionError naming the limit and the value: a work-group with more work-items than
 *   maxComputeInvocationsPerWorkgroup, a size above maxComputeWorkgroupSizeX/Y/Z, or local arrays
 *   above maxComputeWorkgroupStorageSize bytes.
 * @example groupConstants('sum', spec, { dims: 1, g0: 4096, g1: 1, g2: 1, l0: 64, l1: 1, l2: 1 }, device.limits)
 */
export function groupConstants(kernelName: string, spec: GroupWgsl, g: GroupGeometry, limits: GroupLimits): Record<string, number> {
  const size = `work-group size [${localSize(g).join(', ')}]`;
  const items = g.l0 * g.l1 * g.l2;
  if (items > limits.maxComputeInvocationsPerWorkgroup) {
    throw new OptionError(`kernel '${kernelName}': ${size} has ${items} work-items, but this GPU runs at most ${limits.maxComputeInvocationsPerWorkgroup} per workgroup (maxComputeInvocationsPerWorkgroup): build the Map with a smaller local size`);
  }
  const axes = [
    ['X', g.l0, limits.maxComputeWorkgroupSizeX],
    ['Y', g.l1, limits.maxComputeWorkgroupSizeY],
    ['Z', g.l2, limits.maxComputeWorkgroupSizeZ],
  ] as const;
  axes.forEach(([axis, l, max], d) => {
    if (l > max) throw new OptionError(`kernel '${kernelName}': ${size} is ${l} along dimension ${d}, but this GPU allows at most ${max} (maxComputeWorkgroupSize${axis}): build the Map with a smaller local size`);
  });
  const lengths = localLengths(kernelName, spec, g);
  const bytes = localBytes(lengths);
  if (bytes > limits.maxComputeWorkgroupStorageSize) {
    const list = Object.entries(lengths).map(([name, n]) => `${name}: ${n} × 4 bytes`).join(', ');
    throw new OptionError(`kernel '${kernelName}': its local arrays take ${bytes} bytes for ${size} (${list}), but this GPU gives a workgroup at most ${limits.maxComputeWorkgroupStorageSize} bytes (maxComputeWorkgroupStorageSize): build the Map with a smaller local size`);
  }
  const constants: Record<string, number> = { pxl_l0: g.l0, pxl_l1: g.l1, pxl_l2: g.l2 };
  for (const [name, n] of Object.entries(lengths)) constants[lengthConstant(name)] = Math.max(1, n);
  return constants;
}

/** Writes the range (global sizes, group counts) into a bound uniform at the signature's `pxl_range`. */
export function writeRange(uniform: Uint8Array<ArrayBuffer>, signature: GroupSignature, g: GroupGeometry): void {
  const view = new Uint32Array(uniform.buffer, uniform.byteOffset + signature.rangeOffset, RANGE_BYTES / 4);
  view.set([g.g0, g.g1, g.g2, 1, g.g0 / g.l0, g.g1 / g.l1, g.g2 / g.l2, 1]);
}

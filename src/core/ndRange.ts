/**
 * ND-ranges: the launch geometry of work-group kernels and command-buffer launches. `global`
 * work-items per dimension are grouped into work-groups of `local` work-items. Flattening is
 * row-major with dimension 0 fastest: item `i` of a 3-D range is
 * `(i % g0, ⌊i / g0⌋ % g1, ⌊i / (g0·g1)⌋)`, and groups and items within a group flatten the same way.
 */
import { OptionError } from './errors.js';
import { checkOptionsObject, describe } from './validate.js';

/**
 * An ND-range of 1 to 3 dimensions: `global` work-items, grouped into work-groups of `local`.
 *
 * @example A 2-D range of 16 × 24 work-items in work-groups of 8 × 8 (2 × 3 groups):
 * ```ts
 * const map = job.buildMap('matmul_tiled', { global: [16, 24], local: [8, 8] });
 * ```
 */
export interface NDRange {
  /** Work-items per dimension, dimension 0 first (fastest-varying when flattened). */
  readonly global: readonly number[];
  /** Work-group size per dimension, each dividing its `global` size. Default: 1 in every dimension. */
  readonly local?: readonly number[];
}

/** An {@link NDRange} after {@link checkNDRange}: `local` filled in, counts computed, arrays frozen. */
export interface CheckedNDRange {
  readonly global: readonly number[];
  readonly local: readonly number[];
  /** Work-items in the range: the product of `global`. */
  readonly taskCount: number;
  /** Work-groups in the range: the product of `global[d] / local[d]`. */
  readonly groupCount: number;
}

const NDRANGE_KEYS: readonly (keyof NDRange)[] = ['global', 'local'];

/**
 * Validates an ND-range. `op` names the call in messages (`'launch'`, `'buildMap'`).
 *
 * @param maxTaskCount - Most work-items the range may have. Default: no limit beyond safe integers.
 * @throws OptionError when the range is not an object or has a key other than `global` and
 *   `local`, when `global` is not 1 to 3 integers ≥ 1, when `local` has another number of
 *   dimensions, when a `local[d]` is not an integer ≥ 1 dividing `global[d]`, or when the range has
 *   more than `maxTaskCount` work-items.
 * @example
 * ```ts
 * checkNDRange({ global: [4096], local: [64] }, 'buildMap'); // { global: [4096], local: [64], taskCount: 4096, groupCount: 64 }
 * checkNDRange({ global: [10], local: [3] }, 'buildMap');    // throws OptionError
 * ```
 */
export function checkNDRange(range: NDRange, op: string, maxTaskCount = Number.MAX_SAFE_INTEGER): CheckedNDRange {
  if (range === null || typeof range !== 'object' || Array.isArray(range)) {
    throw new OptionError(`${op}: the range must be an ND-range object { global: [sizes], local?: [sizes] }, got ${describe(range)}`);
  }
  for (const key of Object.keys(range)) {
    // Builds its message (naming the nearest key) only for a key that is neither.
    if (key !== 'global' && key !== 'local') checkOptionsObject(`${op} range`, range, NDRANGE_KEYS);
  }
  const global = range.global;
  if (!Array.isArray(global) || global.length < 1 || global.length > 3) {
    throw new OptionError(`${op}: global must be an array of 1 to 3 sizes, got ${Array.isArray(global) ? `${global.length} dimensions` : describe(global)}`);
  }
  const local = range.local ?? global.map(() => 1);
  if (!Array.isArray(local) || local.length !== global.length) {
    throw new OptionError(`${op}: local has ${Array.isArray(local) ? local.length : 'no'} dimensions but global has ${global.length}; give one work-group size per dimension`);
  }
  let taskCount = 1;
  let groupCount = 1;
  for (let d = 0; d < global.length; d++) {
    const g: unknown = global[d];
    const l: unknown = local[d];
    if (typeof g !== 'number' || !Number.isInteger(g) || g < 1) throw new OptionError(`${op}: global[${d}] must be an integer ≥ 1, got ${String(g)}`);
    if (typeof l !== 'number' || !Number.isInteger(l) || l < 1 || g % l !== 0) {
      throw new OptionError(`${op}: local[${d}] must be an integer ≥ 1 dividing global[${d}] = ${g}, got ${String(l)}`);
    }
    taskCount *= g;
    groupCount *= g / l;
  }
  if (taskCount > maxTaskCount) throw new OptionError(`${op}: the range has ${taskCount} work-items; at most ${maxTaskCount} (MaxTaskCount) are supported`);
  return { global: Object.freeze([...global] as number[]), local: Object.freeze([...local] as number[]), taskCount, groupCount };
}

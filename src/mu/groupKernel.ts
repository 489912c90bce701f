/**
 * Work-group kernels: kernels whose work-items cooperate through work-group local memory, barriers
 * and DMA. On CPU cores each work-item is a coroutine (a generator); a core runs one group at a
 * time, stepping its work-items to their next `yield mu.barrier()` in local-id order, and groups run
 * in parallel across cores. See docs/work-groups.md for the model and the authoring rules.
 */
import { isDType, type DType, type TypedArrayOf } from '../core/dtype.js';
import { KERNEL } from './kernel.js';
import { muState, notYielded, type GroupContext, type SyncPoint } from './state.js';

/**
 * One array of work-group local memory: its element type and its length in elements, fixed or
 * computed from the launch's work-group size (`localSize`, one entry per dimension of the range).
 */
export interface LocalArraySpec<D extends DType = DType> {
  readonly dtype: D;
  readonly length: number | ((localSize: readonly number[]) => number);
}

/** The element types of a group kernel's local arrays, by array name. */
export interface LocalDTypes {
  readonly [name: string]: DType;
}

/** The local memory spec of a group kernel: one {@link LocalArraySpec} per array name. */
export type LocalSpecs<L extends LocalDTypes = LocalDTypes> = { readonly [K in keyof L]: LocalArraySpec<L[K]> };

/** The typed arrays a group kernel's work-items receive as `local`, one per local array. */
export type LocalArrays<L extends LocalDTypes = LocalDTypes> = { readonly [K in keyof L]: TypedArrayOf<L[K]> };

/**
 * The body of a group kernel: a generator function called once per work-item with the group's
 * local arrays and the launch's arguments (NDArrays whole as NDViews, device pointers as
 * PointerViews, constants as values). It yields only `mu.barrier()` and `mu.dmaWait(...)`.
 */
export type GroupKernelFn<L extends LocalDTypes = LocalDTypes, A extends unknown[] = never[]> = (local: LocalArrays<L>, ...args: A) => Iterator<SyncPoint, void, unknown>;

/** What {@link defineGroupKernel} takes. */
export interface GroupKernelSpec<L extends LocalDTypes, A extends unknown[]> {
  /** Work-group local memory, allocated once per core and shared by the work-items of a group. Default: none. */
  readonly local?: LocalSpecs<L>;
  /** The work-item body, a generator function (`function*`). */
  readonly run: GroupKernelFn<L, A>;
}

/** A work-group kernel, made by {@link defineGroupKernel}. */
export interface GroupKernel {
  /** @internal */
  readonly [KERNEL]: 'group';
  readonly run: GroupKernelFn<LocalDTypes, never[]>;
  readonly local: Readonly<LocalSpecs>;
  /** Group kernels have no WGSL body: they run on CPU cores only. */
  readonly wgsl?: undefined;
}

const GeneratorFunction = Object.getPrototypeOf(function* () {}) as object;

/**
 * Defines a work-group kernel. Build its Map over an ND-range,
 * `job.buildMap(name, { global, local })`: the Map's tasks are its work-groups (`getTaskIdx()` is
 * the flat group index, `getTaskCount()` the number of groups), and `run` is called once per
 * work-item. Authoring rules (docs/work-groups.md):
 * - a barrier is written `yield mu.barrier()`; `mu.barrier()` without `yield` is an error;
 * - every work-item of a group reaches the same sequence of `yield mu.barrier()` and
 *   `yield mu.dmaWait(...)` (uniform control flow), else the group fails with a divergence error;
 * - local memory is shared by the group's work-items and its contents are undefined when a group
 *   starts (it is reused across groups): write before you read;
 * - the work-items of a group run interleaved on one core, in local-id order between sync points;
 *   different groups run in parallel on different cores.
 *
 * @example Sum of each 64-element block, by tree reduction in local memory:
 * ```ts
 * export const block_sum = defineGroupKernel({
 *   local: { partial: { dtype: 'float32', length: (l) => l[0]! } },
 *   run: function* (local, src: NDView<Float32Array>, sums: NDView<Float32Array>) {
 *     const l = mu.getLocalId(0);
 *     local.partial[l] = src.data[mu.getGlobalId(0)]!;
 *     yield mu.barrier();
 *     for (let s = mu.getLocalSize(0) / 2; s > 0; s >>= 1) {
 *       if (l < s) local.partial[l]! += local.partial[l + s]!;
 *       yield mu.barrier();
 *     }
 *     if (l === 0) sums.data[mu.getGroupId(0)] = local.partial[0]!;
 *   },
 * });
 * ```
 * @throws TypeError when `run` is not a generator function, or a local array has an unknown dtype
 *   or a length that is neither an integer ≥ 0 nor a function (the message names the array).
 */
export function defineGroupKernel<L extends LocalDTypes = Record<never, DType>, A extends unknown[] = never[]>(spec: GroupKernelSpec<L, A>): GroupKernel {
  if (spec === null || typeof spec !== 'object') throw new TypeError('defineGroupKernel expects { local?: { name: { dtype, length } }, run: function* (local, ...args) { ... } }');
  const { run, local } = spec as { run?: unknown; local?: unknown };
  if (typeof run !== 'function' || Object.getPrototypeOf(run) !== GeneratorFunction) {
    throw new TypeError('defineGroupKernel: run must be a generator function, `function* (local, ...args) { ... }`, so that its work-items can wait at `yield mu.barrier()`');
  }
  const arrays: Record<string, LocalArraySpec> = {};
  if (local !== undefined) {
    if (local === null || typeof local !== 'object') throw new TypeError('defineGroupKernel: local must be an object of { dtype, length } by array name');
    for (const [name, a] of Object.entries(local as Record<string, Partial<LocalArraySpec> | null>)) {
      if (a === null || typeof a !== 'object' || !isDType(a.dtype)) throw new TypeError(`defineGroupKernel: local array '${name}' needs a dtype ('float32', 'int32', ...), got ${String(a?.dtype)}`);
      const n = a.length;
      if (typeof n !== 'function' && !(typeof n === 'number' && Number.isInteger(n) && n >= 0)) {
        throw new TypeError(`defineGroupKernel: local array '${name}' needs a length: an integer ≥ 0 or a function of the work-group size, got ${String(n)}`);
      }
      arrays[name] = Object.freeze({ dtype: a.dtype, length: n });
    }
  }
  return Object.freeze({ [KERNEL]: 'group' as const, run: run as GroupKernelFn, local: Object.freeze(arrays) });
}

function group(op: string): GroupContext {
  const g = muState.group;
  if (g === undefined) throw new Error(`mu.${op}() works only in a kernel defined with defineGroupKernel`);
  return g;
}

const BARRIER: SyncPoint = Object.freeze({ kind: 'barrier' as const });

/**
 * A work-group barrier: write `yield mu.barrier()`. Every work-item of the group reaches it before
 * any goes past it, and every write to local or device memory made before it by any work-item of
 * the group is visible after it to all of them.
 *
 * @returns The sync point the work-item must yield.
 * @throws Error outside a group kernel ("mu.barrier() works only in a kernel defined with
 *   defineGroupKernel, as `yield mu.barrier()`"), or when the work-item's previous `mu.barrier()`
 *   or `mu.dmaWait()` was not yielded.
 * @example
 * ```ts
 * local.tile[mu.getLocalId(0)] = src.data[mu.getGlobalId(0)]!;
 * yield mu.barrier();
 * const right = local.tile[(mu.getLocalId(0) + 1) % mu.getLocalSize(0)]!;
 * ```
 */
export function barrier(): SyncPoint {
  const g = muState.group;
  if (g === undefined) throw new Error('mu.barrier() works only in a kernel defined with defineGroupKernel, as `yield mu.barrier()`');
  if (g.pending !== undefined) throw notYielded(g);
  g.pending = BARRIER;
  return BARRIER;
}

/**
 * The work-item's index within its group along dimension `d` (0, 1 or 2; dimension 0 varies
 * fastest). 0 for a dimension the range does not have.
 * @throws Error outside a group kernel.
 * @example `const x = mu.getLocalId(0), y = mu.getLocalId(1);`
 */
export function getLocalId(d: number): number {
  return group('getLocalId').localId[d] ?? 0;
}

/**
 * The index of the work-item's group along dimension `d`: `getGlobalId(d) / getLocalSize(d)`,
 * rounded down. 0 for a dimension the range does not have.
 * @throws Error outside a group kernel.
 * @example `const tileRow = mu.getGroupId(1) * mu.getLocalSize(1);`
 */
export function getGroupId(d: number): number {
  return group('getGroupId').groupId[d] ?? 0;
}

/**
 * The work-item's index in the whole range along dimension `d`:
 * `getGroupId(d) * getLocalSize(d) + getLocalId(d)`. 0 for a dimension the range does not have.
 * @throws Error outside a group kernel.
 * @example `out.data[mu.getGlobalId(1) * mu.getGlobalSize(0) + mu.getGlobalId(0)] = 1;`
 */
export function getGlobalId(d: number): number {
  return group('getGlobalId').globalId[d] ?? 0;
}

/**
 * The work-group size along dimension `d` (`local[d]` of the range); 1 for a dimension the range
 * does not have.
 * @throws Error outside a group kernel.
 * @example `const items = mu.getLocalSize(0) * mu.getLocalSize(1);`
 */
export function getLocalSize(d: number): number {
  return group('getLocalSize').localSize[d] ?? 1;
}

/**
 * The range's size along dimension `d` (`global[d]`); 1 for a dimension the range does not have.
 * @throws Error outside a group kernel.
 * @example `const width = mu.getGlobalSize(0);`
 */
export function getGlobalSize(d: number): number {
  return group('getGlobalSize').globalSize[d] ?? 1;
}

/**
 * The number of work-groups along dimension `d` (`global[d] / local[d]`); 1 for a dimension the
 * range does not have.
 * @throws Error outside a group kernel.
 * @example `const last = mu.getGroupId(0) === mu.getNumGroups(0) - 1;`
 */
export function getNumGroups(d: number): number {
  return group('getNumGroups').numGroups[d] ?? 1;
}

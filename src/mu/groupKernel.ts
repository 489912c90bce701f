/**
 * Work-group kernels: kernels whose work-items cooperate through work-group local memory, barriers
 * and DMA. On CPU cores each work-item is a coroutine (a generator); a core runs one group at a
 * time, stepping its work-items to their next `yield mu.barrier()` in local-id order, and groups run
 * in parallel across cores. With a `wgsl` body, the webgpu backend runs each group as a WebGPU
 * workgroup (src/backends/webgpu/wgslGroupProgram.ts). See docs/work-groups.md for the model and
 * the authoring rules.
 */
import { isDType, type DType, type TypedArrayOf } from '../core/dtype.js';
import { KERNEL } from './brand.js';
import { checkWgsl, checkWgslName, type WgslChecker, type WgslElementType, type WgslKernel } from './wgslSpec.js';
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

/** What {@link defineGroupKernel} takes: `run`, `wgsl`, or both. */
export interface GroupKernelSpec<L extends LocalDTypes, A extends unknown[]> {
  /** Work-group local memory, allocated once per core and shared by the work-items of a group. Default: none. */
  readonly local?: LocalSpecs<L>;
  /** The work-item body, a generator function (`function*`). Without it the kernel runs on the GPU only. */
  readonly run?: GroupKernelFn<L, A>;
  /**
   * A WGSL body for the webgpu backend, run once per work-item in a WebGPU workgroup (default: none,
   * CPU cores only): a {@link WgslKernel} (`params`, `body`, `declarations`) plus `local`, the
   * work-group local arrays the body uses, declared as `var<workgroup>` arrays. Each `local` entry
   * is an element type (`'f32'`, `'i32'`, `'u32'`), whose length comes from this kernel's `local`
   * spec of the same name, or `{ type, length }` with a length of its own (an integer or a function
   * of the work-group size, as in {@link LocalArraySpec}). In scope in the body, besides the
   * parameters (as a WgslKernel body gets them, NDArrays whole): `barrier()`, `local_id(d)`,
   * `group_id(d)`, `global_id(d)`, `local_size(d)`, `global_size(d)`, `num_groups(d)` (all `u32`),
   * `task_idx()` (the flat group index) and `task_count()`. DMA calls have no WGSL form: copy into
   * local arrays cooperatively, then `barrier()`. See docs/webgpu.md.
   */
  readonly wgsl?: WgslKernel & {
    readonly local?: { readonly [name: string]: WgslElementType | { readonly type: WgslElementType; readonly length: LocalArraySpec['length'] } };
  };
}

/** A work-group kernel, made by {@link defineGroupKernel}. */
export interface GroupKernel {
  /** @internal */
  readonly [KERNEL]: 'group';
  readonly run: GroupKernelFn<LocalDTypes, never[]>;
  readonly local: Readonly<LocalSpecs>;
  /** The WGSL body, its local arrays resolved to `{ type, length }`; undefined: CPU cores only. */
  readonly wgsl?: WgslKernel & { readonly local: { readonly [name: string]: { readonly type: WgslElementType; readonly length: LocalArraySpec['length'] } } };
}

/** Names the mu API takes in a group kernel's WGSL body. */
const GROUP_CHECKER: WgslChecker = {
  who: 'defineGroupKernel',
  reserved: ['task_idx', 'task_count', 'barrier', 'local_id', 'group_id', 'global_id', 'local_size', 'global_size', 'num_groups'],
};

const WGSL_ONLY = 'this kernel has only a WGSL body, so it runs on the webgpu backend only: give its defineGroupKernel a run generator function (`function* (local, ...args) { ... }`) to run it on CPU cores';

/** The CPU body of a WGSL-only group kernel: a clear failure at the first step of a work-item. */
function* wgslOnly(): Iterator<SyncPoint, void, unknown> {
  throw new Error(WGSL_ONLY);
}

const ELEMENTS = new Set<string>(['f32', 'i32', 'u32']);

function checkLength(n: unknown, what: string): LocalArraySpec['length'] {
  if (typeof n !== 'function' && !(typeof n === 'number' && Number.isInteger(n) && n >= 0)) {
    throw new TypeError(`defineGroupKernel: ${what} needs a length: an integer ≥ 0 or a function of the work-group size, got ${String(n)}`);
  }
  return n as LocalArraySpec['length'];
}

/** Validates a group kernel's WGSL spec and resolves each local array's length. */
function checkGroupWgsl(value: unknown, arrays: Readonly<Record<string, LocalArraySpec>>): NonNullable<GroupKernel['wgsl']> {
  const base = checkWgsl(value, GROUP_CHECKER);
  const raw = (value as { local?: unknown }).local;
  const local: Record<string, { readonly type: WgslElementType; readonly length: LocalArraySpec['length'] }> = {};
  if (raw !== undefined) {
    if (raw === null || typeof raw !== 'object') throw new TypeError("defineGroupKernel: wgsl.local must be an object of element types ('f32', 'i32', 'u32') or { type, length } by array name");
    for (const [name, entry] of Object.entries(raw as Record<string, unknown>)) {
      checkWgslName(name, 'local array', GROUP_CHECKER);
      if (name in base.params) throw new TypeError(`defineGroupKernel: wgsl local array '${name}' has the name of a parameter; give it another`);
      const spec = typeof entry === 'string' ? { type: entry, length: arrays[name]?.length } : (entry as { type?: unknown; length?: unknown } | null);
      if (spec === null || typeof spec !== 'object' || typeof spec.type !== 'string' || !ELEMENTS.has(spec.type)) {
        throw new TypeError(`defineGroupKernel: wgsl local array '${name}' needs an element type 'f32', 'i32' or 'u32' (or { type, length }), got ${typeof entry === 'string' ? `'${entry}'` : String(spec?.type)}`);
      }
      if (typeof entry === 'string' && spec.length === undefined) {
        throw new TypeError(`defineGroupKernel: wgsl local array '${name}' takes its length from the kernel's local spec, which has no array '${name}': declare it in local, or write { type: '${entry}', length }`);
      }
      local[name] = Object.freeze({ type: spec.type as WgslElementType, length: checkLength(spec.length, `wgsl local array '${name}'`) });
    }
  }
  return Object.freeze({ ...base, local: Object.freeze(local) });
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
 * @example The same kernel with a WGSL body too, so one module serves CPU cores and the GPU
 * (`{ local?, wgsl }` without `run` is a kernel for the GPU only):
 * ```ts
 * export const block_sum = defineGroupKernel({
 *   local: { partial: { dtype: 'float32', length: (l) => l[0]! } },
 *   run: function* (local, src: NDView<Float32Array>, sums: NDView<Float32Array>) { ... },
 *   wgsl: {
 *     params: { src: 'array<f32>', sums: 'array<f32, read_write>' },
 *     local: { partial: 'f32' },
 *     body: `
 *       let l = local_id(0u);
 *       partial[l] = src[src_offset + global_id(0u)];
 *       barrier();
 *       for (var s = local_size(0u) / 2u; s > 0u; s = s / 2u) {
 *         if (l < s) { partial[l] = partial[l] + partial[l + s]; }
 *         barrier();
 *       }
 *       if (l == 0u) { sums[sums_offset + group_id(0u)] = partial[0]; }`,
 *   },
 * });
 * ```
 * @throws TypeError when neither `run` nor `wgsl` is given, `run` is not a generator function, a
 *   local array has an unknown dtype or a length that is neither an integer ≥ 0 nor a function, or
 *   `wgsl` is malformed: its params as for defineKernel (the mu names `barrier`, `local_id`, ... are
 *   reserved too), a `local` entry that is not f32/i32/u32, has no length, or takes a parameter's
 *   name (the message names the array or parameter).
 */
export function defineGroupKernel<L extends LocalDTypes = Record<never, DType>, A extends unknown[] = never[]>(spec: GroupKernelSpec<L, A>): GroupKernel {
  if (spec === null || typeof spec !== 'object') throw new TypeError('defineGroupKernel expects { local?: { name: { dtype, length } }, run: function* (local, ...args) { ... }, wgsl?: { params, body } }');
  const { run, local, wgsl } = spec as { run?: unknown; local?: unknown; wgsl?: unknown };
  if (run === undefined && wgsl === undefined) {
    throw new TypeError('defineGroupKernel needs run (a generator function, for CPU cores), wgsl ({ params, body }, for the GPU), or both');
  }
  if (run !== undefined && (typeof run !== 'function' || Object.getPrototypeOf(run) !== GeneratorFunction)) {
    throw new TypeError('defineGroupKernel: run must be a generator function, `function* (local, ...args) { ... }`, so that its work-items can wait at `yield mu.barrier()`');
  }
  const arrays: Record<string, LocalArraySpec> = {};
  if (local !== undefined) {
    if (local === null || typeof local !== 'object') throw new TypeError('defineGroupKernel: local must be an object of { dtype, length } by array name');
    for (const [name, a] of Object.entries(local as Record<string, Partial<LocalArraySpec> | null>)) {
      if (a === null || typeof a !== 'object' || !isDType(a.dtype)) throw new TypeError(`defineGroupKernel: local array '${name}' needs a dtype ('float32', 'int32', ...), got ${String(a?.dtype)}`);
      arrays[name] = Object.freeze({ dtype: a.dtype, length: checkLength(a.length, `local array '${name}'`) });
    }
  }
  const body = (run ?? wgslOnly) as GroupKernelFn;
  const extra = wgsl === undefined ? {} : { wgsl: checkGroupWgsl(wgsl, arrays) };
  return Object.freeze({ [KERNEL]: 'group' as const, run: body, local: Object.freeze(arrays), ...extra });
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

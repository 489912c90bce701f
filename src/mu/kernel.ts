/**
 * Kernel definitions. A kernel module's exports are its kernels, registered under their export
 * names: a plain function is a task kernel; `defineKernel` adds the batch form and WGSL bodies.
 */

import type { GroupKernel } from './groupKernel.js';

/** @internal Brands kernel definitions; registered, so copies of this module agree on it. */
export const KERNEL = Symbol.for('pxl.kernel');

/** Called once per task; `getTaskIdx()` says which. NDArray arguments arrive as the task's slice. */
export type TaskKernelFn = (...args: never[]) => void;

/**
 * Called once per launch on each core with the launch's arguments (NDArrays whole, not sliced); returns
 * the function the core calls for each of its batches with the half-open task range
 * `[firstTask, endTask)`. Binding arrays once into a closure lets V8 treat them as constants in
 * the hot loop, which is markedly faster than receiving them as arguments per task.
 */
export type BatchKernelBind = (...args: never[]) => (firstTask: number, endTask: number) => void;

/** WGSL scalar types a constant parameter may have (`bool` travels as a u32). */
export type WgslScalarType = 'f32' | 'i32' | 'u32' | 'bool';

/** Element types of a storage parameter; atomics need `read_write`. */
export type WgslElementType = 'f32' | 'i32' | 'u32';

/**
 * The WGSL type of one kernel parameter:
 * - a scalar (`'f32'`, `'i32'`, `'u32'`, `'bool'`) for a number, bigint or boolean constant;
 * - an object of scalars (`{ first: 'u32', scale: 'f32' }`) for a plain-object constant, seen in
 *   WGSL as a struct named `<param>_t`;
 * - `'array<T>'` (read-only) or `'array<T, read_write>'` for an NDArray or a device pointer, with
 *   `T` one of `f32`, `i32`, `u32`, or `atomic<i32>`/`atomic<u32>` (read_write only).
 */
export type WgslParamType =
  | WgslScalarType
  | `array<${WgslElementType}>`
  | `array<${WgslElementType | `atomic<${'i32' | 'u32'}>`}, read_write>`
  | { readonly [field: string]: WgslScalarType };

/**
 * A kernel's WGSL body, so the webgpu backend can run it. `body` is the statements of a function
 * run once per task (`return;` ends the task). In scope there:
 * - `task_idx()` and `task_count()`, the mu API;
 * - every constant parameter as a `let` of its declared type;
 * - every storage parameter `x` as `x: array<T>`, with `x_offset` (index of the first element of
 *   this task's slice, or of the whole array), `x_size` (elements in it) and `x_shape(d)` (its
 *   extent along dimension d), mirroring an NDView's `data`, `offset`, `size` and `shape`.
 *   A device pointer is the whole allocation from the pointer on, `x_size` 32-bit words long.
 *
 * NDArrays are sliced along their leading dimension for task kernels and passed whole to batch
 * kernels, as on CPU cores. Names starting with `pxl_` are reserved.
 *
 * @example
 * ```ts
 * export const scale_rows = defineKernel({
 *   run: (rows: NDView<Float32Array>, k: number) => {
 *     for (let i = 0; i < rows.size; i++) rows.data[rows.offset + i] *= k * (getTaskIdx() + 1);
 *   },
 *   wgsl: {
 *     params: { rows: 'array<f32, read_write>', k: 'f32' },
 *     body: `for (var i = 0u; i < rows_size; i++) { rows[rows_offset + i] *= k * f32(task_idx() + 1u); }`,
 *   },
 * });
 * ```
 */
export interface WgslKernel {
  /** Parameters in `execute()` order, by the names the body uses. */
  readonly params: { readonly [name: string]: WgslParamType };
  /** Statements run once per task. */
  readonly body: string;
  /** Module-scope WGSL placed before the task function: helper functions, structs, consts. */
  readonly declarations?: string;
}

export interface TaskKernel {
  readonly [KERNEL]: 'task';
  readonly run: TaskKernelFn;
  readonly wgsl?: WgslKernel;
}

export interface BatchKernel {
  readonly [KERNEL]: 'batch';
  readonly bind: BatchKernelBind;
  readonly specialize: boolean;
  readonly wgsl?: WgslKernel;
}

/** The task form of {@link defineKernel} as an object, so it can carry a WGSL body. */
export interface TaskKernelSpec {
  readonly run: TaskKernelFn;
  readonly wgsl?: WgslKernel;
}

/** The batch form of {@link defineKernel}. */
export interface BatchKernelSpec {
  readonly bind: BatchKernelBind;
  /**
   * Recompile `bind` from its source text for every binding, so V8 specialises the loops it returns
   * to the bound arrays: up to 2-3x on bandwidth-bound loops once a kernel is bound more than once
   * (several Maps, or changing arguments). `bind` must then be self-contained: it may use its
   * parameters and globals, but nothing imported or declared in its module. Default false.
   */
  readonly specialize?: boolean;
  /** A WGSL body for the webgpu backend; it runs per task, with NDArrays whole as `bind` gets them. */
  readonly wgsl?: WgslKernel;
}

/**
 * A kernel with only a WGSL body: it runs on the webgpu backend only. `form` says how NDArrays
 * arrive: `'task'` (default) sliced per task, `'batch'` whole.
 */
export interface WgslOnlyKernelSpec {
  readonly wgsl: WgslKernel;
  readonly form?: 'task' | 'batch';
}

/** Any kernel definition: task or batch ({@link defineKernel}) or work-group (`defineGroupKernel`). */
export type KernelDefinition = TaskKernel | BatchKernel | GroupKernel;

/**
 * Defines a kernel.
 *
 * @example Task form: one call per task.
 * ```ts
 * export const scale = defineKernel((row: NDView<Float64Array>, k: number) => {
 *   for (let i = 0; i < row.size; i++) row.data[row.offset + i] *= k;
 * });
 * ```
 * @example Batch form: bind once per launch, loop over tasks yourself.
 * ```ts
 * export const triad = defineKernel({
 *   bind: (a: number, x: NDView<Float64Array>, y: NDView<Float64Array>, chunk: number) => {
 *     const xs = x.data, ys = y.data;
 *     return (first, end) => {
 *       for (let i = first * chunk; i < end * chunk; i++) ys[i] = a * xs[i]! + ys[i]!;
 *     };
 *   },
 * });
 * ```
 * @example With a WGSL body next to the JavaScript one, the same Map runs on CPU cores and on a
 * GPU (see {@link WgslKernel}):
 * ```ts
 * export const count = defineKernel({
 *   run: (hits: PointerView) => { Atomics.add(hits.u32, getTaskIdx(), 1); },
 *   wgsl: {
 *     params: { hits: 'array<atomic<u32>, read_write>' },
 *     body: 'atomicAdd(&hits[hits_offset + task_idx()], 1u);',
 *   },
 * });
 * ```
 * @throws TypeError for a spec that is none of the forms, or a malformed `wgsl` (the message names
 *   the parameter at fault).
 */
export function defineKernel(run: TaskKernelFn): TaskKernel;
export function defineKernel(spec: TaskKernelSpec): TaskKernel;
export function defineKernel(spec: BatchKernelSpec): BatchKernel;
export function defineKernel(spec: WgslOnlyKernelSpec & { readonly form?: 'task' }): TaskKernel;
export function defineKernel(spec: WgslOnlyKernelSpec & { readonly form: 'batch' }): BatchKernel;
export function defineKernel(spec: TaskKernelFn | TaskKernelSpec | BatchKernelSpec | WgslOnlyKernelSpec): KernelDefinition {
  if (typeof spec === 'function') return Object.freeze({ [KERNEL]: 'task' as const, run: spec });
  if (spec === null || typeof spec !== 'object') throw new TypeError(FORMS);
  const { run, bind, wgsl, form } = spec as { run?: unknown; bind?: unknown; wgsl?: unknown; form?: unknown };
  const checked = wgsl === undefined ? undefined : checkWgsl(wgsl);
  const extra = checked === undefined ? {} : { wgsl: checked };
  if (run !== undefined && bind !== undefined) throw new TypeError('defineKernel takes run (task form) or bind (batch form), not both');
  if (typeof run === 'function') return Object.freeze({ [KERNEL]: 'task' as const, run: run as TaskKernelFn, ...extra });
  if (typeof bind === 'function') {
    return Object.freeze({ [KERNEL]: 'batch' as const, bind: bind as BatchKernelBind, specialize: (spec as BatchKernelSpec).specialize === true, ...extra });
  }
  if (run !== undefined || bind !== undefined || checked === undefined) throw new TypeError(FORMS);
  if (form !== undefined && form !== 'task' && form !== 'batch') throw new TypeError(`defineKernel: form must be 'task' or 'batch', got ${String(form)}`);
  if (form === 'batch') return Object.freeze({ [KERNEL]: 'batch' as const, bind: wgslOnly, specialize: false, wgsl: checked });
  return Object.freeze({ [KERNEL]: 'task' as const, run: wgslOnly, wgsl: checked });
}

const FORMS = 'defineKernel expects a function (task form), { run } (task form), { bind } (batch form) or { wgsl } (GPU only), each optionally with wgsl';
const WGSL_ONLY = 'this kernel has only a WGSL body, so it runs on the webgpu backend only: give its defineKernel a run (or bind) function to run it on CPU cores';

/** The CPU body of a WGSL-only kernel: a clear failure instead of "not a function". */
function wgslOnly(): never {
  throw new Error(WGSL_ONLY);
}

const IDENTIFIER = /^[A-Za-z][A-Za-z0-9_]*$/;
const RESERVED = ['task_idx', 'task_count'];
const SCALARS = new Set<string>(['f32', 'i32', 'u32', 'bool']);
const STORAGE = new Set<string>(['f32', 'i32', 'u32'].flatMap((t) => [`array<${t}>`, `array<${t}, read_write>`]).concat(['array<atomic<i32>, read_write>', 'array<atomic<u32>, read_write>']));

/**
 * Who checks a WGSL spec, for messages, and which names its body reserves besides `pxl_*`.
 * @internal
 */
export interface WgslChecker {
  /** The function whose spec is checked, as messages name it: `'defineKernel'`. */
  readonly who: string;
  /** Names of the mu API in scope of the body, which parameters may not take. */
  readonly reserved: readonly string[];
}

const TASK_CHECKER: WgslChecker = { who: 'defineKernel', reserved: RESERVED };

/** "a, b or c" */
function orList(names: readonly string[]): string {
  return names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]!}` : (names[0] ?? '');
}

/**
 * Checks that `name` can name a WGSL parameter, field or local array: an identifier that is not
 * reserved. @internal
 * @throws TypeError naming the rule, e.g. "defineKernel: wgsl parameter 'pxl_x' must be a WGSL identifier ...".
 */
export function checkWgslName(name: string, what: string, checker: WgslChecker = TASK_CHECKER): void {
  if (!IDENTIFIER.test(name) || name.startsWith('pxl_') || checker.reserved.includes(name)) {
    throw new TypeError(`${checker.who}: wgsl ${what} '${name}' must be a WGSL identifier (a letter, then letters, digits or _) that does not start with 'pxl_' and is not ${orList(checker.reserved)}`);
  }
}

/**
 * Validates the shape of a WGSL spec (not its code: the webgpu backend compiles that) and freezes a
 * copy of its `params`, `body` and `declarations`. @internal
 * @throws TypeError for a malformed spec, naming the parameter at fault.
 */
export function checkWgsl(value: unknown, checker: WgslChecker = TASK_CHECKER): WgslKernel {
  const who = checker.who;
  const spec = value as Partial<WgslKernel> | null;
  if (spec === null || typeof spec !== 'object' || typeof spec.body !== 'string' || spec.params === null || typeof spec.params !== 'object') {
    const local = checker === TASK_CHECKER ? '' : ', local?: { name: type }';
    throw new TypeError(`${who}: wgsl must be { params: { name: type, ... }, body: string, declarations?: string${local} }`);
  }
  if (spec.declarations !== undefined && typeof spec.declarations !== 'string') throw new TypeError(`${who}: wgsl.declarations must be a string of WGSL`);
  const params: Record<string, WgslParamType> = {};
  for (const [name, type] of Object.entries(spec.params)) {
    checkWgslName(name, 'parameter', checker);
    if (typeof type === 'string') {
      if (!SCALARS.has(type) && !STORAGE.has(type)) {
        const hint = type.includes('atomic') ? ' (atomics need read_write)' : '';
        throw new TypeError(`${who}: wgsl parameter '${name}' has type '${type}'${hint}; use f32, i32, u32, bool, array<T> or array<T, read_write> with T f32, i32 or u32, array<atomic<i32|u32>, read_write>, or an object of scalars`);
      }
      params[name] = type;
    } else if (type !== null && typeof type === 'object' && Object.keys(type).length > 0) {
      for (const [field, t] of Object.entries(type as Record<string, unknown>)) {
        checkWgslName(field, `field ${name}.`, checker);
        if (typeof t !== 'string' || !SCALARS.has(t)) throw new TypeError(`${who}: wgsl field ${name}.${field} must be f32, i32, u32 or bool, got ${String(t)}`);
      }
      params[name] = Object.freeze({ ...(type as Record<string, WgslScalarType>) });
    } else {
      throw new TypeError(`${who}: wgsl parameter '${name}' needs a type string or a non-empty object of scalar types`);
    }
  }
  return Object.freeze({ params: Object.freeze(params), body: spec.body, ...(spec.declarations === undefined ? {} : { declarations: spec.declarations }) });
}

/** @internal The kernel an export denotes, or undefined when the export is not a kernel. */
export function asKernel(value: unknown): KernelDefinition | undefined {
  if (typeof value === 'function') return { [KERNEL]: 'task' as const, run: value as TaskKernelFn };
  if (value !== null && typeof value === 'object' && KERNEL in value) return value as KernelDefinition;
  return undefined;
}

/** @internal */
export function kernelForm(k: KernelDefinition): 'task' | 'batch' | 'group' {
  return k[KERNEL];
}

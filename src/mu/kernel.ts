/**
 * Kernel definitions. A kernel module's exports are its kernels, registered under their export
 * names: a plain function is a task kernel; `defineKernel` adds the batch form and WGSL bodies.
 */

import { KERNEL } from './brand.js';
import type { GroupKernel } from './groupKernel.js';
import { checkWgsl, type WgslKernel } from './wgslSpec.js';

export type { WgslElementType, WgslKernel, WgslParamType, WgslScalarType } from './wgslSpec.js';

/** Called once per task; `getTaskIdx()` says which. NDArray arguments arrive as the task's slice. */
export type TaskKernelFn = (...args: never[]) => void;

/**
 * Called once per launch on each core with the launch's arguments (NDArrays whole, not sliced); returns
 * the function the core calls for each of its batches with the half-open task range
 * `[firstTask, endTask)`. Binding arrays once into a closure lets V8 treat them as constants in
 * the hot loop, which is markedly faster than receiving them as arguments per task.
 */
export type BatchKernelBind = (...args: never[]) => (firstTask: number, endTask: number) => void;

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

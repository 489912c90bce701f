/**
 * Kernel definitions. A kernel module's exports are its kernels, registered under their export
 * names: a plain function is a task kernel; `defineKernel` adds the batch form.
 */

const KERNEL = Symbol.for('pxl.kernel');

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
}

export interface BatchKernel {
  readonly [KERNEL]: 'batch';
  readonly bind: BatchKernelBind;
  readonly specialize: boolean;
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
}

export type KernelDefinition = TaskKernel | BatchKernel;

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
 */
export function defineKernel(run: TaskKernelFn): TaskKernel;
export function defineKernel(spec: BatchKernelSpec): BatchKernel;
export function defineKernel(spec: TaskKernelFn | BatchKernelSpec): KernelDefinition {
  if (typeof spec === 'function') return Object.freeze({ [KERNEL]: 'task' as const, run: spec });
  if (spec === null || typeof spec !== 'object' || typeof spec.bind !== 'function') {
    throw new TypeError('defineKernel expects a function (task form) or { bind } (batch form)');
  }
  return Object.freeze({ [KERNEL]: 'batch' as const, bind: spec.bind, specialize: spec.specialize === true });
}

/** @internal The kernel an export denotes, or undefined when the export is not a kernel. */
export function asKernel(value: unknown): KernelDefinition | undefined {
  if (typeof value === 'function') return { [KERNEL]: 'task' as const, run: value as TaskKernelFn };
  if (value !== null && typeof value === 'object' && KERNEL in value) return value as KernelDefinition;
  return undefined;
}

/** @internal */
export function kernelForm(k: KernelDefinition): 'task' | 'batch' {
  return k[KERNEL];
}

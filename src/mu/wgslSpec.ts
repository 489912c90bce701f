/**
 * The WGSL body a kernel may carry for the webgpu backend: its types, and the checks of its shape
 * (names, parameter types) that `defineKernel` and `defineGroupKernel` share. The code itself is
 * compiled by the webgpu backend, not here.
 */

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

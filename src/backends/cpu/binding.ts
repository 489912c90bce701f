import { DTYPES } from '../../core/dtype.js';
import { kernelForm, type KernelDefinition } from '../../mu/kernel.js';
import { muState } from '../../mu/state.js';
import { NDView, PointerView } from '../../mu/views.js';
import type { GroupKernel } from '../../mu/groupKernel.js';
import type { DecodedArg } from './argsCodec.js';
import { bindGroupKernel } from './groupRunner.js';

/** Runs tasks [first, end) of a launch on this core. */
export type BatchRunner = (first: number, end: number) => void;

/**
 * Turns a kernel and its decoded arguments into the function a core calls per batch. Binding
 * happens once per (Map, argument version) on each core, so the per-batch path touches no
 * decoding, no allocation and no argument-count dispatch.
 *
 * The runner is compiled from source text unique to this binding. V8 specialises optimised code to
 * a closure's captured values only while that closure is the sole instance of its code; a fresh
 * function per binding keeps it so, which lets V8 inline the kernel into the task loop and treat
 * the bound arrays as constants (2-4x on small kernels, measured). Identical source text would be
 * served from V8's compilation cache and share code again, hence the serial number.
 */
let serial = 0;

export function bindKernel(kernel: KernelDefinition, args: readonly DecodedArg[], buffers: ReadonlyMap<number, SharedArrayBuffer>): BatchRunner {
  const sliced: NDView[] = [];
  const values = args.map((a) => {
    if (a.kind === 'constant') return a.value;
    const sab = buffers.get(a.buffer);
    if (sab === undefined) throw new Error(`device buffer ${a.buffer} is not allocated (was it freed?)`);
    if (a.kind === 'pointer') return new PointerView(sab, a.byteOffset, a.byteLength);
    const size = a.shape.reduce((p, d) => p * d, 1);
    const data = new (DTYPES[a.dtype] as unknown as new (b: SharedArrayBuffer, o: number, n: number) => Float64Array)(sab, a.byteOffset, size);
    const view = new NDView(data, a.sliced ? a.shape.slice(1) : a.shape);
    if (a.sliced) sliced.push(view);
    return view;
  });

  // A group kernel's tasks are work-groups; its runner (groupRunner.ts) steps the work-items.
  if (kernelForm(kernel) === 'group') return bindGroupKernel(kernel as GroupKernel, values);

  if (kernelForm(kernel) === 'batch') {
    const { bind, specialize } = kernel as unknown as { bind: (...a: unknown[]) => BatchRunner; specialize?: boolean };
    let inner: BatchRunner;
    try {
      inner = specialize === true ? recompile(bind)(...values) : bind(...values);
    } catch (err) {
      throw specialize === true ? explain(err) : err;
    }
    if (typeof inner !== 'function') throw new TypeError('a batch kernel\'s bind() must return a function (firstTask, endTask) => void');
    const call = 'const r = inner(first, end); if (r !== undefined) settled(r);';
    if (specialize !== true) return compile(['state', 'inner', 'settled'], `state.taskIdx = first; ${call}`, [muState, inner, settled]);
    return compile(['state', 'inner', 'explain', 'settled'], `state.taskIdx = first; try { ${call} } catch (e) { throw explain(e); }`, [muState, inner, explain, settled]);
  }

  const params = values.map((_, i) => `a${i}`);
  const views = sliced.map((_, i) => `v${i}`);
  const moves = sliced.map((v, i) => `v${i}.offset = t * ${v.size};`).join(' ');
  const body = `for (let t = first; t < end; t++) { state.taskIdx = t; ${moves} const r = fn(${params.join(', ')}); if (r !== undefined) settled(r); }`;
  const { run } = kernel as unknown as { run: (...a: unknown[]) => void };
  return compile(['state', 'fn', 'settled', ...params, ...views], body, [muState, run, settled, ...values, ...sliced]);
}

/**
 * Checks what a kernel call returned (only when it returned something). A core runs kernels
 * synchronously and cannot await them, so a returned promise would let the task's work, and any
 * rejection, escape the launch: the task fails instead, and the promise's own outcome is dropped
 * so it cannot surface later as an unhandled rejection that kills the core.
 */
function settled(result: unknown): void {
  const then = (result as { then?: unknown } | null)?.then;
  if (typeof then !== 'function') return;
  (then as (ok: () => void, fail: () => void) => void).call(result, () => undefined, () => undefined);
  throw new TypeError('the kernel returned a Promise, and MU cores do not await kernels: make the kernel synchronous (do asynchronous work on the host, before execute() or after synchronize())');
}

function compile(names: string[], body: string, bound: unknown[]): BatchRunner {
  const factory = new Function(...names, `// pxl binding ${serial++}\nreturn function run(first, end) { ${body} };`) as (...a: unknown[]) => BatchRunner;
  return factory(...bound);
}

/**
 * A specialised kernel's code was recompiled away from its module, so module-scope names do not
 * exist there: a ReferenceError gets a message that says so. Other errors pass unchanged. A missing
 * `__`-prefixed name is a helper that a compiler (esbuild, and so tsx) put into the source text, not
 * a name the kernel's author wrote, so its message names the compiler instead.
 */
function explain(err: unknown): unknown {
  if (!(err instanceof ReferenceError)) return err;
  const missing = /^(\S+) is not defined/.exec(err.message)?.[1];
  if (missing !== undefined && missing.startsWith('__')) {
    return new ReferenceError(`${err.message}: this batch kernel is declared with specialize: true, so its bind() is recompiled from its source text, and ${missing} is a helper that the compiler of its module (esbuild, tsx) inserted there; pxl supplies ${Object.keys(COMPILER_HELPERS).join(', ')} only: compile the module for a newer target (ES2022 or later) or drop specialize`);
  }
  return new ReferenceError(`${err.message}: this batch kernel is declared with specialize: true, so its bind() is recompiled from its source text and cannot use names from its module (imports, top-level constants); pass them as arguments or drop specialize`);
}

/**
 * Module-scope helpers that esbuild (and tsx, which compiles with it and keeps function names)
 * writes into function bodies: `__name(fn, "name")` around every named function expression. A
 * recompiled `bind` no longer sees its module's copies, so it gets these, with the same effect.
 */
const COMPILER_HELPERS = {
  __defProp: Object.defineProperty,
  __name: (target: object, value: string) => Object.defineProperty(target, 'name', { value, configurable: true }),
};

/**
 * A fresh copy of a batch kernel's `bind`, compiled from its source so that every closure it
 * creates is the first of its code (see above). Only for kernels declared with `specialize: true`,
 * whose `bind` uses nothing from its module's scope but the compiler helpers above.
 */
function recompile(bind: (...a: unknown[]) => BatchRunner): (...a: unknown[]) => BatchRunner {
  const source = bind.toString();
  const expression = /^(async\s+)?(function\b|\(|[A-Za-z_$][\w$]*\s*=>)/.test(source) ? source : `function ${source}`;
  const names = Object.keys(COMPILER_HELPERS);
  const factory = new Function(...names, `// pxl specialised bind ${serial++}\nreturn (${expression});`);
  return factory(...Object.values(COMPILER_HELPERS)) as (...a: unknown[]) => BatchRunner;
}

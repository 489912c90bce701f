/**
 * How many arguments a kernel takes, read on a core when its module loads and reported to the host
 * with the kernel's name, so that `execute()` can refuse a wrong count before the launch (a kernel
 * given too few arguments would otherwise fail inside the launch, or run with `undefined`).
 *
 * A function's `length` counts its parameters up to the first default or rest parameter, so it is
 * exact only for a plain parameter list; the source text says whether the list is plain. Anything
 * that text does not settle (a native or bound function, a parameter list that cannot be scanned,
 * a body that reads `arguments`) makes the count a lower bound: a wrong refusal would stop a kernel
 * that works, while a missed one leaves the kernel to fail as it did before.
 */
import type { KernelInfo } from '../backend.js';
import { kernelForm, type KernelDefinition } from '../../mu/kernel.js';

/**
 * The parameters of `kernel` as the host sees them: a task kernel's `run`, a batch kernel's `bind`,
 * a group kernel's generator less its first parameter (`local`, which the core passes). Undefined
 * for a kernel with only a WGSL body, whose CPU stand-in reports that it cannot run on CPU cores
 * (its WGSL `params` are what the webgpu backend checks).
 */
export function kernelParams(kernel: KernelDefinition): KernelInfo['params'] {
  const { run, bind, wgsl } = kernel as { run?: unknown; bind?: unknown; wgsl?: unknown };
  const fn = kernelForm(kernel) === 'batch' ? bind : run;
  if (typeof fn !== 'function') return undefined;
  // The CPU stand-ins of mu/kernel.ts and mu/groupKernel.ts are both named wgslOnly. Compared by
  // name, not identity: the kernel's module may have imported another copy of pxl than this core's.
  if (wgsl !== undefined && fn.name === 'wgslOnly') return undefined;
  const skip = kernelForm(kernel) === 'group' ? 1 : 0;
  return { count: Math.max(0, fn.length - skip), exact: plainParameters(fn) };
}

/** Whether `fn`'s parameter list has no default or rest parameter and its body never reads `arguments`. */
export function plainParameters(fn: Function): boolean {
  const source = Function.prototype.toString.call(fn);
  if (/\[native code\]\s*\}$/.test(source) || /\barguments\b/.test(source)) return false;
  // `x => ...` and `async x => ...`: one plain parameter, no parentheses.
  if (/^(async\s+)?[A-Za-z_$][\w$]*\s*=>/.test(source)) return true;
  const params = parameterText(source);
  return params !== undefined && !params.includes('=') && !params.includes('...');
}

/**
 * The text between the parentheses of the parameter list: from the first `(` (a function
 * expression or declaration, a generator, an arrow or a method) to its matching `)`. Undefined
 * when the text starts with a computed method name or the brackets do not match.
 */
function parameterText(source: string): string | undefined {
  if (source.startsWith('[')) return undefined;
  const open = source.indexOf('(');
  if (open < 0) return undefined;
  let depth = 0;
  for (let k = open; k < source.length; k++) {
    const c = source[k];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      depth--;
      if (depth === 0) return c === ')' ? source.slice(open + 1, k) : undefined;
    }
  }
  return undefined;
}

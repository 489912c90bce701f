/**
 * The kernels of an imported kernel module, as every thread that runs CPU kernels lists them: the
 * exports that are kernels, sorted by name (a launch names a kernel by its index in that order),
 * with the form, async-ness and parameter count the host checks Maps against.
 */
import type { KernelInfo } from '../backend.js';
import { asKernel, kernelForm, type KernelDefinition } from '../../mu/kernel.js';
import { kernelParams } from './kernelParams.js';

/** The kernels of module namespace `ns`, and their descriptions, in the same (name) order. */
export function moduleKernels(ns: Record<string, unknown>): { kernels: KernelDefinition[]; infos: KernelInfo[] } {
  const names = Object.keys(ns).filter((n) => asKernel(ns[n]) !== undefined).sort();
  const kernels = names.map((n) => asKernel(ns[n])!);
  const infos = names.map((name, i) => {
    const params = kernelParams(kernels[i]!);
    return { name, form: kernelForm(kernels[i]!), async: isAsync(kernels[i]!), ...(params === undefined ? {} : { params }) };
  });
  return { kernels, infos };
}

/**
 * What went wrong importing a kernel module, in words: the class leads for syntax and link
 * errors, whose messages alone do not say what they are.
 */
export function loadFailure(err: unknown): string {
  const e = err instanceof Error ? err : new Error(String(err));
  return e.name === 'Error' ? e.message : `${e.name}: ${e.message}`;
}

function isAsync(kernel: KernelDefinition): boolean {
  const { run, bind } = kernel as { run?: unknown; bind?: unknown };
  const fn = run ?? bind;
  const kind = typeof fn === 'function' ? fn.constructor.name : '';
  return kind === 'AsyncFunction' || kind === 'AsyncGeneratorFunction';
}

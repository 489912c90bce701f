import { ModuleLoadError } from '../../core/errors.js';
import { asKernel, kernelForm, type KernelDefinition } from '../../mu/kernel.js';
import type { KernelInfo } from '../backend.js';
import { importModule } from './moduleImport.js';

/**
 * Host-side kernel module loading for the webgpu backend. There are no MU core threads: the host
 * imports the module itself and reads the WGSL bodies the kernels carry. Kernels are listed
 * exactly as the CPU backend lists them (every kernel export, sorted by name), so a module serves
 * both backends and a kernel without WGSL is still found by name, to fail with a clear message
 * when launched.
 */

/** A kernel export as the loader found it. */
export interface LoadedKernel {
  readonly info: KernelInfo;
  readonly definition: KernelDefinition;
}

/**
 * Imports a kernel module on the host and lists its kernels.
 * @throws (rejects) ModuleLoadError when the module cannot be imported.
 */
export async function loadKernels(url: string): Promise<LoadedKernel[]> {
  let ns: Record<string, unknown>;
  try {
    ns = await importModule(url);
  } catch (err) {
    throw new ModuleLoadError(`cannot load kernel module ${url}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  return Object.keys(ns)
    .filter((name) => asKernel(ns[name]) !== undefined)
    .sort()
    .map((name) => {
      const definition = asKernel(ns[name])!;
      return { info: { name, form: kernelForm(definition) }, definition };
    });
}

import { ModuleLoadError } from '../../core/errors.js';
import { asKernel, kernelForm, type KernelDefinition } from '../../mu/kernel.js';
import type { KernelInfo } from '../backend.js';
import { TSX_LOADED } from '../../platform/thread.js';

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


/** Registers tsx once so plain Node can import TypeScript kernel modules (test runners need not). */
async function registerTypeScript(): Promise<void> {
  const g = globalThis as Record<symbol, unknown>;
  if (g[TSX_LOADED] === true) return;
  const api = 'tsx/esm/api';
  const { register } = (await import(api)) as { register: () => unknown };
  register();
  g[TSX_LOADED] = true;
}

async function importModule(url: string): Promise<Record<string, unknown>> {
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    if (code !== 'ERR_UNKNOWN_FILE_EXTENSION' || !/\.[mc]?ts$/.test(new URL(url).pathname)) throw err;
  }
  await registerTypeScript();
  // Node remembers the failed import of this URL, so import it again under a query string; it never
  // evaluated, so no other instance of the module exists.
  const retry = new URL(url);
  retry.searchParams.set('pxl-ts', '1');
  return (await import(retry.href)) as Record<string, unknown>;
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

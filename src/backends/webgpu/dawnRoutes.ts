/// <reference types="@webgpu/types" />
import { DeviceUnavailableError } from '../../core/errors.js';
import { prepareDawnCapture, withDawnOutput } from './dawnOutput.js';

/**
 * Node's routes to a WebGPU adapter: Dawn through the optional `webgpu` package, tried first with
 * its native backend (Vulkan, Metal or D3D12) and then with OpenGL ES in compatibility mode, which
 * is what Mesa's llvmpipe offers on machines without a GPU. The browser bundle takes
 * dawnRoutes.browser.ts instead: a page has only `navigator.gpu`.
 */

/** One way to an adapter, tried in turn by acquireGpuDevice (gpuDevice.ts). */
export interface GpuRoute {
  /** For messages, e.g. "Dawn native backend (Vulkan/Metal/D3D12)". */
  readonly name: string;
  readonly gpu: () => Promise<GPU>;
  readonly options: GPURequestAdapterOptions;
}

/** The way round a missing GPU, in the words of each place a GPU is asked for in Node. */
const ON_CPU = "compute on the CPU cores (--device cpu on the command line; backend: 'cpu' for createContext, device: 'cpu' for pdist, cdist and l2Kernel)";

/** How to get an adapter in Node, for error messages. */
export const INSTALL_HINT =
  'to get one, install a GPU driver with Vulkan support (or Metal/D3D12 on macOS/Windows), or, for a software GPU on Linux, ' +
  `Mesa: apt-get install libegl1 libgles2 libegl-mesa0 libgl1-mesa-dri; or ${ON_CPU}`;

type WebGpuPackage = { create: (flags: string[]) => GPU };

/** A name in a variable: the package is optional, so type checking must not look for it. */
const WEBGPU_PACKAGE: string = 'webgpu';

let dawn: Promise<WebGpuPackage> | undefined;
const instances = new Map<string, GPU>();

/** The `webgpu` package, imported once. EGL must know it runs headless before Dawn loads it. */
function loadDawn(): Promise<WebGpuPackage> {
  if (dawn === undefined) {
    const env = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env;
    if (env !== undefined) env.EGL_PLATFORM ??= 'surfaceless';
    dawn = prepareDawnCapture(env).then(() => import(WEBGPU_PACKAGE) as Promise<WebGpuPackage>);
    dawn.catch(() => (dawn = undefined));
  }
  return dawn;
}

/** One Dawn instance per flag set for the whole process: instances are costly and never released. */
async function dawnInstance(flags: string[]): Promise<GPU> {
  const key = flags.join(' ');
  let gpu = instances.get(key);
  if (gpu === undefined) {
    const { create } = await loadDawn();
    gpu = withDawnOutput(() => create(flags)).value;
    instances.set(key, gpu);
  }
  return gpu;
}

/**
 * Dawn's two routes, where there is no `navigator.gpu`; a `webgpu` package that cannot load is
 * recorded in `attempts` instead, and no route is returned.
 *
 * @throws (rejects) DeviceUnavailableError when the `webgpu` package is not installed: no driver
 *   advice helps then.
 */
export async function dawnRoutes(attempts: string[]): Promise<GpuRoute[]> {
  try {
    await loadDawn();
  } catch (err) {
    if (isMissingPackage(err)) {
      const missing = 'the optional webgpu package (Dawn for Node) is not installed';
      throw new DeviceUnavailableError(`WebGPU in Node needs the optional webgpu package (Dawn for Node), which is not installed: run npm install webgpu (npm ci --omit=optional leaves it out), or ${ON_CPU}`, [missing]);
    }
    attempts.push(`the webgpu package (Dawn for Node) could not be loaded (${errorText(err)}); reinstall it with npm install webgpu`);
    return [];
  }
  return [
    { name: 'Dawn native backend (Vulkan/Metal/D3D12)', gpu: () => dawnInstance([]), options: { powerPreference: 'high-performance' } },
    { name: 'Dawn OpenGL ES (compatibility, EGL surfaceless)', gpu: () => dawnInstance(['backend=opengl']), options: { featureLevel: 'compatibility' } },
  ];
}

/** Whether an import failed because the package is not there at all (an optional dependency left out). */
function isMissingPackage(err: unknown): boolean {
  return (err as { code?: unknown } | undefined)?.code === 'ERR_MODULE_NOT_FOUND' && /'webgpu'/.test(errorText(err));
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

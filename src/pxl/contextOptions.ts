/**
 * The options of `createContext`, and the backend they select: validated once, before any
 * device is opened.
 */
import type { Backend } from '../backends/backend.js';
import { CpuBackend, type CpuBackendOptions } from '../backends/cpu/cpuBackend.js';
import { PageBackend } from '../backends/page/pageBackend.js';
import { availableCores, sharedMemoryAvailable, totalMemory } from '../platform/machine.js';
import { DeviceUnavailableError, OptionError } from '../core/errors.js';
import { totalCores, type Topology } from '../core/topology.js';
import { checkBoolean, checkInteger, checkOneOf, checkOptionsObject } from '../core/validate.js';
import { MaxTaskCount } from './launchPlan.js';

/** Options of {@link createContext}. */
export interface ContextOptions {
  /**
   * Which device runs the kernels. Default `'cpu'`: one MU core per available CPU. `'webgpu'`: a
   * GPU through WebGPU, running the kernels' WGSL bodies (rejects with DeviceUnavailableError, which
   * says what to install, when no adapter is found; software adapters such as Mesa's llvmpipe
   * count). `'auto'`: a hardware GPU when one is found, else CPU cores.
   */
  backend?: 'cpu' | 'webgpu' | 'auto';
  /** Device shape (cpu backend only). Default: 1 Sub × 1 Cluster × `os.availableParallelism()` cores (`navigator.hardwareConcurrency` in a browser). */
  topology?: Partial<Topology>;
  /**
   * Bytes of device memory the Context may allocate. Default: half of the machine's memory on CPU
   * cores; four times the GPU's largest storage binding on webgpu.
   */
  memorySize?: number;
  /** Heap limit of each MU core's thread in MiB (cpu backend only); a core that exceeds it dies and is replaced. */
  coreHeapLimitMB?: number;
  /**
   * Record an execution trace from the start (see `Context.startTrace`). Setting the environment
   * variable `PXL_TRACE=trace.json` does the same for every Context and writes the trace to that
   * file when the Context is destroyed. Default false.
   */
  trace?: boolean;
}

const MAX_CORES = 1024;

/** Every key of {@link ContextOptions}, for the unknown-option check. */
const CONTEXT_OPTIONS = ['backend', 'topology', 'memorySize', 'coreHeapLimitMB', 'trace'] as const;
/** Words users reach for, and the option that does what they mean. */
const CONTEXT_ALIASES: Readonly<Record<string, string>> = {
  threads: 'topology', cores: 'topology', workers: 'topology', subs: 'topology', coresPerCluster: 'topology',
  device: 'backend', gpu: 'backend', memory: 'memorySize', heap: 'coreHeapLimitMB',
};
const TOPOLOGY_KEYS = ['subs', 'clustersPerSub', 'coresPerCluster'] as const;

/**
 * The started backend `options` select.
 * @throws (rejects) OptionError for options that are not an object, an unknown option (naming
 *   the nearest valid one), an invalid value; DeviceUnavailableError for `'webgpu'` when no GPU
 *   adapter can be opened.
 */
export async function createBackend(options: ContextOptions | undefined): Promise<Backend> {
  const o = checkContextOptions(options);
  const kind = checkOneOf('backend', o.backend ?? 'cpu', ['cpu', 'webgpu', 'auto']);
  const cpu = kind === 'webgpu' ? undefined : cpuOptions(o);
  const gpu = kind === 'cpu' ? undefined : await createGpuBackend(kind, o);
  if (gpu !== undefined) return gpu;
  // A browser page without cross-origin isolation has no SharedArrayBuffer for cores to share:
  // its kernels run on the page's own thread instead (backends/page/pageBackend.ts).
  return sharedMemoryAvailable() ? await CpuBackend.create(cpu!) : new PageBackend(cpu!);
}

/**
 * The shape and the types of `options`, checked before anything starts: an object (or left out)
 * with known keys only, `topology` an object of known keys, `trace` a boolean. Ranges are checked
 * where each backend reads them.
 * @throws OptionError naming the option, what was given and what to pass.
 */
export function checkContextOptions(options: ContextOptions | undefined): ContextOptions {
  const o = checkOptionsObject('createContext options', options, CONTEXT_OPTIONS, CONTEXT_ALIASES);
  if (o.topology !== undefined) checkOptionsObject('topology', o.topology, TOPOLOGY_KEYS);
  if (o.trace !== undefined) checkBoolean('trace', o.trace);
  return o;
}

/** Validated options of the cpu backend. */
function cpuOptions(options: ContextOptions): CpuBackendOptions {
  const t = options.topology ?? {};
  const topology: Topology = Object.freeze({
    subs: checkInteger('topology.subs', t.subs ?? 1, 1, MAX_CORES),
    clustersPerSub: checkInteger('topology.clustersPerSub', t.clustersPerSub ?? 1, 1, MAX_CORES),
    coresPerCluster: checkInteger('topology.coresPerCluster', t.coresPerCluster ?? (t.subs === undefined && t.clustersPerSub === undefined ? availableCores() : 1), 1, MAX_CORES),
  });
  if (totalCores(topology) > MAX_CORES) {
    throw new OptionError(`topology has ${totalCores(topology)} MU cores (subs × clustersPerSub × coresPerCluster); at most ${MAX_CORES} are supported`);
  }
  const memorySize = checkInteger('memorySize', options.memorySize ?? Math.floor(totalMemory() / 2), 0, Number.MAX_SAFE_INTEGER);
  // More than the machine has can never be allocated: refuse it now rather than fail at some later memAlloc.
  if (memorySize > totalMemory()) {
    throw new OptionError(`memorySize ${memorySize} is more than this machine's ${totalMemory()} bytes of memory; pass at most ${totalMemory()} (default: half of it)`);
  }
  const heap = options.coreHeapLimitMB === undefined ? undefined : checkInteger('coreHeapLimitMB', options.coreHeapLimitMB, 16, 1 << 20);
  return { topology, memorySize, ...(heap === undefined ? {} : { coreResourceLimits: { maxOldGenerationSizeMb: heap } }) };
}

/** The webgpu backend, or undefined when `'auto'` finds no hardware GPU. */
async function createGpuBackend(kind: 'webgpu' | 'auto', options: ContextOptions): Promise<Backend | undefined> {
  if (kind === 'webgpu') {
    for (const name of ['topology', 'coreHeapLimitMB'] as const) {
      if (options[name] !== undefined) throw new OptionError(`${name} applies to the cpu backend only; the webgpu backend takes its shape from the GPU adapter`);
    }
  }
  const memorySize = options.memorySize === undefined ? {} : { memorySize: checkInteger('memorySize', options.memorySize, 0, Number.MAX_SAFE_INTEGER) };
  const { WebGpuBackend } = await import('../backends/webgpu/index.js');
  try {
    return await WebGpuBackend.create({ maxBatches: MaxTaskCount, hardwareOnly: kind === 'auto', ...memorySize });
  } catch (err) {
    if (kind === 'auto' && err instanceof DeviceUnavailableError) return undefined;
    throw err;
  }
}

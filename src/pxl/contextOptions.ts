/**
 * The options of `createContext`, and the backend they select: validated once, before any
 * device is opened.
 */
import { availableParallelism, totalmem } from 'node:os';
import type { Backend } from '../backends/backend.js';
import { CpuBackend, type CpuBackendOptions } from '../backends/cpu/cpuBackend.js';
import { DeviceUnavailableError, OptionError } from '../core/errors.js';
import { totalCores, type Topology } from '../core/topology.js';
import { checkInteger, checkOneOf } from '../core/validate.js';
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
  /** Device shape (cpu backend only). Default: 1 Sub × 1 Cluster × `os.availableParallelism()` cores. */
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

/**
 * The started backend `options` select.
 * @throws (rejects) OptionError for an invalid option; DeviceUnavailableError for `'webgpu'` when
 *   no GPU adapter can be opened.
 */
export async function createBackend(options: ContextOptions): Promise<Backend> {
  const kind = checkOneOf('backend', options.backend ?? 'cpu', ['cpu', 'webgpu', 'auto']);
  const cpu = kind === 'webgpu' ? undefined : cpuOptions(options);
  const gpu = kind === 'cpu' ? undefined : await createGpuBackend(kind, options);
  return gpu ?? (await CpuBackend.create(cpu!));
}

/** Validated options of the cpu backend. */
function cpuOptions(options: ContextOptions): CpuBackendOptions {
  const t = options.topology ?? {};
  const topology: Topology = Object.freeze({
    subs: checkInteger('topology.subs', t.subs ?? 1, 1, MAX_CORES),
    clustersPerSub: checkInteger('topology.clustersPerSub', t.clustersPerSub ?? 1, 1, MAX_CORES),
    coresPerCluster: checkInteger('topology.coresPerCluster', t.coresPerCluster ?? (t.subs === undefined && t.clustersPerSub === undefined ? availableParallelism() : 1), 1, MAX_CORES),
  });
  if (totalCores(topology) > MAX_CORES) {
    throw new OptionError(`topology has ${totalCores(topology)} MU cores (subs × clustersPerSub × coresPerCluster); at most ${MAX_CORES} are supported`);
  }
  const memorySize = checkInteger('memorySize', options.memorySize ?? Math.floor(totalmem() / 2), 0, Number.MAX_SAFE_INTEGER);
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

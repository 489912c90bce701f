/**
 * The devices a pairwise command runs on, from --cores and --device: the CPU cores of this machine
 * (all of them, or --cores N of them, one worker thread each), the GPU (WebGPU, float32), or both
 * pulling blocks from one queue. A Context opened here is destroyed when the command ends.
 */
import { availableParallelism } from 'node:os';
import type { FloatDType } from '../blocks/floatArray.js';
import { type PairwiseOptions, pdist } from '../pcf/operations.js';
import { randomPcfs } from '../pcf/random.js';
import { type Context, createContext } from '../pxl/context.js';
import { UsageError } from './terminal.js';
import { plural } from './wording.js';

/** What --device accepts on the pairwise commands. */
export type CliDevice = 'cpu' | 'gpu' | 'all';

/** The devices chosen, as pairwise options, with a phrase for the summary line. */
export interface CliDevices {
  readonly call: Pick<PairwiseOptions, 'context' | 'device' | 'devices'>;
  /** E.g. "2 CPU cores", "the GPU", "2 CPU cores and the GPU". */
  readonly description: string;
  /**
   * Settles when the CPU cores have started: their worker threads run and hold the PCF kernels.
   * Never rejects (a failure shows again, with its message, in the command's own call).
   */
  readonly ready: Promise<void>;
  /** Destroys the Context opened for --cores. */
  dispose(): Promise<void>;
}

/**
 * The element type of a run on `device`: --dtype when given; else float32 where a GPU takes part
 * (it computes in float32 only) and float64 on the CPU cores.
 *
 * @throws UsageError for --dtype float64 with a GPU.
 */
export function dtypeFor(device: CliDevice, dtype: FloatDType | undefined): FloatDType {
  if (device === 'cpu') return dtype ?? 'float64';
  if (dtype === 'float64') throw new UsageError(`--device ${device} computes in float32 (WebGPU has no float64): leave out --dtype float64, or use --device cpu`);
  return 'float32';
}

/**
 * Checks --cores against --device before anything is read.
 *
 * @throws UsageError for --cores with --device gpu, where no CPU core computes.
 */
export function checkDeviceOptions(device: CliDevice, cores: number | undefined): void {
  if (device === 'gpu' && cores !== undefined) throw new UsageError('--cores counts the CPU cores that compute, and --device gpu uses none: leave out --cores, or use --device all');
}

/**
 * Opens the devices: a CPU Context of `cores` one-core Subs when --cores is given, else the
 * defaults of pdist/cdist/l2Kernel. The CPU cores are started at once, with a pdist of two tiny
 * PCFs, so that the worker threads start and load their kernels while the command reads its
 * inputs; the command's own call then finds them running.
 */
export async function openDevices(device: CliDevice, cores: number | undefined, signal?: AbortSignal): Promise<CliDevices> {
  checkDeviceOptions(device, cores);
  const cpuCores = cores ?? availableParallelism();
  let context: Context | undefined;
  if (cores !== undefined) context = await createContext({ topology: { subs: cores, clustersPerSub: 1, coresPerCluster: 1 } });
  const cpu = context ?? 'cpu';
  const call: CliDevices['call'] = device === 'gpu' ? { device: 'gpu' } : device === 'all' ? { devices: [cpu, 'gpu'] } : context === undefined ? {} : { context };
  const cpuText = plural(cpuCores, 'CPU core');
  const ready = device === 'gpu'
    ? Promise.resolve()
    : pdist(randomPcfs({ n: 2, points: 2, seed: 0 }), { ...(context && { context }), ...(signal && { signal }) }).then(() => undefined, () => undefined);
  return {
    call,
    ready,
    description: device === 'gpu' ? 'the GPU' : device === 'all' ? `${cpuText} and the GPU` : cpuText,
    dispose: async () => {
      await ready;
      await context?.destroy();
    },
  };
}

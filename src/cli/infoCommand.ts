/**
 * `pxl info`: what pxl would run on here. The CPU cores are counted by opening a CPU Context (of
 * --cores Subs when given, so the figure is the one a pairwise command would get); the GPU is
 * looked for only when --device gpu or all asks, since opening WebGPU loads Dawn and its drivers.
 */
import { createRequire } from 'node:module';
import { arch, availableParallelism, cpus, freemem, platform, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { readFileSync } from 'node:fs';
import { showDawnOutput } from '../backends/webgpu/dawnOutput.js';
import { PxlError } from '../core/errors.js';
import { createContext } from '../pxl/context.js';
import type { CommandEnv, InfoOptions } from './commandOptions.js';
import { checkDeviceOptions } from './cliDevices.js';
import { packageVersion } from './version.js';

/** What `pxl info` reports; `--json` prints it as is. */
export interface Info {
  readonly pxl: string;
  readonly node: string;
  /** Version of the optional webgpu package, or null when it is not installed. */
  readonly webgpu: string | null;
  readonly platform: string;
  readonly cpu: { readonly model: string | null; readonly cores: number };
  readonly memory: { readonly totalBytes: number; readonly freeBytes: number };
  /** null: not looked for (no --device gpu or all). */
  readonly gpu: null | { readonly found: true; readonly device: string; readonly memoryBytes: number } | { readonly found: false; readonly reason: string };
}

function webgpuVersion(): string | null {
  try {
    const require = createRequire(import.meta.url);
    // The package's exports may hide package.json: find it beside the entry point instead.
    let dir = dirname(require.resolve('webgpu'));
    for (let up = 0; up < 4; up++, dir = dirname(dir)) {
      try {
        const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
        if (pkg.name === 'webgpu' && typeof pkg.version === 'string') return pkg.version;
      } catch {
        // no package.json at this level
      }
    }
    return 'installed (version unknown)';
  } catch {
    return null;
  }
}

async function probeGpu(): Promise<NonNullable<Info['gpu']>> {
  try {
    const ctx = await createContext({ backend: 'webgpu' });
    try {
      return { found: true, device: String(ctx.getAttribute('device')), memoryBytes: Number(ctx.getAttribute('memorySize')) };
    } finally {
      await ctx.destroy();
    }
  } catch (error) {
    if (!(error instanceof PxlError)) throw error;
    return { found: false, reason: error.message };
  }
}

/** Gathers {@link Info}. */
export async function gatherInfo(options: InfoOptions): Promise<Info> {
  checkDeviceOptions(options.device, options.cores);
  if (options.verbose === true) showDawnOutput();
  let cores = 0;
  if (options.device !== 'gpu') {
    const n = options.cores;
    const ctx = await createContext({ topology: { subs: n ?? availableParallelism(), clustersPerSub: 1, coresPerCluster: 1 } });
    try {
      cores = Number(ctx.getAttribute('coreCount'));
    } finally {
      await ctx.destroy();
    }
  }
  return {
    pxl: packageVersion(),
    node: process.version,
    webgpu: webgpuVersion(),
    platform: `${platform()} ${arch()}`,
    cpu: { model: cpus()[0]?.model ?? null, cores },
    memory: { totalBytes: totalmem(), freeBytes: freemem() },
    gpu: options.device === 'cpu' ? null : await probeGpu(),
  };
}

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(0)} MiB`;
}

/** The report as `name: value` lines. */
export function formatInfo(info: Info): string {
  const gpu = info.gpu === null ? 'not looked for (add --device gpu or --device all)'
    : info.gpu.found ? `${info.gpu.device}, ${mib(info.gpu.memoryBytes)}` : `none: ${info.gpu.reason}`;
  return [
    `pxl: ${info.pxl}`,
    `node: ${info.node}`,
    `webgpu: ${info.webgpu ?? 'not installed (optional; npm install webgpu for --device gpu)'}`,
    `platform: ${info.platform}`,
    `cpu: ${info.cpu.cores > 0 ? `${info.cpu.cores} cores` : 'not used (--device gpu)'}${info.cpu.model === null ? '' : `, ${info.cpu.model}`}`,
    `memory: ${mib(info.memory.totalBytes)} total, ${mib(info.memory.freeBytes)} free`,
    `gpu: ${gpu}`,
  ].join('\n');
}

/** Prints {@link Info} on stdout, as lines or (--json) one JSON document. */
export async function infoCommand(env: CommandEnv, options: InfoOptions): Promise<void> {
  const info = await gatherInfo(options);
  env.io.stdout.write(`${options.json === true ? JSON.stringify(info, null, 2) : formatInfo(info)}\n`);
}

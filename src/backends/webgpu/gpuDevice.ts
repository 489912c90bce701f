/// <reference types="@webgpu/types" />
import { DeviceUnavailableError } from '../../core/errors.js';
import { withDawnOutput } from './dawnOutput.js';
import { dawnRoutes, INSTALL_HINT, type GpuRoute } from './dawnRoutes.js';

/**
 * Adapter and device acquisition. In a browser (or any runtime with `navigator.gpu`) that is the
 * GPU; in Node it is Dawn through the `webgpu` package (dawnRoutes.ts).
 */

/** An open device and what it runs on. */
export interface GpuDevice {
  readonly device: GPUDevice;
  readonly adapter: GPUAdapter;
  /** Human-readable adapter name, e.g. "NVIDIA H100 (vulkan)". */
  readonly description: string;
  /** Which route found the adapter, e.g. "Dawn native backend". */
  readonly route: string;
  /** True for CPU rasterizers (llvmpipe, lavapipe, SwiftShader, WARP) that only emulate a GPU. */
  readonly software: boolean;
}

export interface AcquireOptions {
  /** Refuse software adapters (llvmpipe and the like), as `backend: 'auto'` does. Default false. */
  readonly hardwareOnly?: boolean;
}

/**
 * The routes worth trying here: `navigator.gpu` where there is one, else Dawn's, which record in
 * `attempts` why they cannot be tried.
 *
 * @throws (rejects) DeviceUnavailableError when the `webgpu` package is not installed: no driver
 *   advice helps then.
 */
async function routes(attempts: string[]): Promise<GpuRoute[]> {
  const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu;
  if (nav !== undefined) {
    return [
      { name: 'navigator.gpu', gpu: async () => nav, options: { powerPreference: 'high-performance' } },
      { name: 'navigator.gpu (compatibility)', gpu: async () => nav, options: { featureLevel: 'compatibility' } },
    ];
  }
  return dawnRoutes(attempts);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const SOFTWARE = /llvmpipe|lavapipe|softpipe|swiftshader|microsoft basic render|warp/i;

/** An adapter's name for messages, and whether it is a software renderer. */
export function describeAdapter(adapter: GPUAdapter): { description: string; software: boolean } {
  const info = adapter.info;
  const parts = [info.vendor, info.architecture, info.device].filter((p) => p !== '');
  const name = parts.length > 0 ? parts.join(' ') : 'unnamed adapter';
  const description = info.description !== '' ? `${name} (${info.description})` : name;
  const fallback = (info as { isFallbackAdapter?: boolean }).isFallbackAdapter === true;
  return { description, software: fallback || SOFTWARE.test(`${name} ${info.description}`) };
}

/** Limits raised to what the adapter offers: storage bindings, buffer sizes, workgroup sizes, alignments. */
const RAISED_LIMITS = [
  'maxStorageBuffersPerShaderStage',
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxUniformBufferBindingSize',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupSizeY',
  'maxComputeWorkgroupSizeZ',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupStorageSize',
  'maxComputeWorkgroupsPerDimension',
  'minStorageBufferOffsetAlignment',
  'minUniformBufferOffsetAlignment',
] as const;

/**
 * Finds an adapter and opens a device on it.
 *
 * @throws (rejects) DeviceUnavailableError naming every route tried, why each failed, and what to
 *   install.
 */
export function acquireGpuDevice(options: AcquireOptions = {}): Promise<GpuDevice> {
  // One at a time: Dawn devices requested while another request was in flight later crashed the
  // whole process once they computed (on llvmpipe: SIGSEGV, a failed mutex assertion, or a hang),
  // as pairwise calls that each open a GPU, made at once, did.
  const turn = acquiring.then(() => acquire(options));
  acquiring = turn.catch(() => undefined);
  return turn;
}

/** The device request in progress, which the next one waits for. */
let acquiring: Promise<unknown> = Promise.resolve();

async function acquire(options: AcquireOptions): Promise<GpuDevice> {
  const attempts: string[] = [];
  for (const route of await routes(attempts)) {
    let adapter: GPUAdapter | null;
    // Dawn prints what it finds while it enumerates (inside requestAdapter's synchronous part);
    // that goes into the attempt's message instead of onto the user's terminal.
    let said = '';
    try {
      const gpu = await route.gpu();
      const request = withDawnOutput(() => gpu.requestAdapter(route.options));
      said = request.said === '' ? '' : ` (Dawn said: ${request.said.replace(/\s*\n\s*/g, ' ')})`;
      adapter = await request.value;
    } catch (err) {
      attempts.push(`${route.name}: ${errorText(err)}${said}`);
      continue;
    }
    if (adapter === null) {
      attempts.push(`${route.name}: no adapter${said}`);
      continue;
    }
    const { description, software } = describeAdapter(adapter);
    if (software && options.hardwareOnly === true) {
      attempts.push(`${route.name}: only a software adapter, ${description}`);
      continue;
    }
    const requiredLimits: Record<string, number> = {};
    for (const name of RAISED_LIMITS) requiredLimits[name] = adapter.limits[name];
    try {
      const device = await adapter.requestDevice({ requiredLimits, label: 'pxl' });
      return { device, adapter, description, route: route.name, software };
    } catch (err) {
      attempts.push(`${route.name}: ${description} refused a device: ${errorText(err)}`);
    }
  }
  const what = options.hardwareOnly === true ? 'no hardware WebGPU adapter found' : 'no WebGPU adapter found';
  throw new DeviceUnavailableError(`${what}; tried ${attempts.join('; ')}. ${INSTALL_HINT[0]!.toUpperCase()}${INSTALL_HINT.slice(1)}`, attempts);
}

/**
 * What a browser page offers pxl, for a page to show before it computes: whether it is
 * cross-origin isolated (shared memory, so every core), how many cores, and whether WebGPU has an
 * adapter. Browser only; exported from the browser entry.
 */
import { availableCores, isolationAdvice } from './machine.js';

/** What {@link browserCapabilities} resolves to. */
export interface BrowserCapabilities {
  /**
   * True when the page is cross-origin isolated, so it has SharedArrayBuffer: CPU kernels then run
   * on `cores` Web Workers (unless the browser lacks `Atomics.waitAsync`, which `warning` then says).
   */
  readonly crossOriginIsolated: boolean;
  /** `navigator.hardwareConcurrency`: the cores a cross-origin isolated page computes on. */
  readonly cores: number;
  /** True when `navigator.gpu` gives an adapter: `device: 'gpu'` and `backend: 'webgpu'` work. */
  readonly gpu: boolean;
  /**
   * Present when CPU kernels run on the page's own thread instead of workers: on a page that is not
   * cross-origin isolated it names the two headers to serve the page with
   * (`Cross-Origin-Opener-Policy: same-origin`, `Cross-Origin-Embedder-Policy: require-corp`).
   */
  readonly warning?: string;
}

interface GpuEntry {
  requestAdapter(): Promise<unknown>;
}

/**
 * What this page offers: shared memory, cores, a GPU. Never rejects: a GPU whose adapter request
 * fails counts as none.
 * @example
 * const caps = await browserCapabilities();
 * if (caps.warning !== undefined) banner.textContent = caps.warning;
 */
export async function browserCapabilities(): Promise<BrowserCapabilities> {
  const nav = (globalThis as { navigator?: { gpu?: GpuEntry } }).navigator;
  let gpu = false;
  try {
    gpu = nav?.gpu !== undefined && (await nav.gpu.requestAdapter()) !== null;
  } catch {
    gpu = false;
  }
  const warning = isolationAdvice();
  const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true;
  return { crossOriginIsolated: isolated, cores: availableCores(), gpu, ...(warning === undefined ? {} : { warning }) };
}

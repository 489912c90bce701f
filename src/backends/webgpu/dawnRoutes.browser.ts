/**
 * Dawn's routes in a browser: there is no Dawn, only `navigator.gpu`, which gpuDevice.ts tries
 * before asking here, so a page gets here only without WebGPU. Same exports as dawnRoutes.ts,
 * which Node uses; leaving its Node-only loading and messages out of the bundle saves their bytes.
 */
import type { GpuRoute } from './dawnRoutes.js';

export type { GpuRoute } from './dawnRoutes.js';

/** How to get an adapter in a browser, for error messages: drivers and packages are not the page's to install. */
export const INSTALL_HINT = "to get one, open the page in a browser that offers WebGPU on this machine's GPU; or create the Context with backend: 'cpu'";

/** No route: says in `attempts` why there is no `navigator.gpu` to try. */
export async function dawnRoutes(attempts: string[]): Promise<GpuRoute[]> {
  attempts.push('navigator.gpu: absent (this browser offers no WebGPU, or not to this page: WebGPU needs a secure context, https or localhost)');
  return [];
}

/**
 * Where the MU cores and GPUs import the PCF block kernels from: the modules beside this file,
 * `.ts` while pxl runs from its sources, `.js` once compiled (or bundled for browsers, where they
 * sit beside the bundle's chunks).
 */
const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

/** The JavaScript and WebAssembly block kernels of CPU cores. */
export const BLOCK_KERNELS_URL = new URL(`./blockKernels${extension}`, import.meta.url);
/** The WGSL block kernels of a GPU. */
export const WGSL_BLOCK_KERNELS_URL = new URL(`./wgslBlockKernels${extension}`, import.meta.url);

/**
 * What the machine offers, in a browser: `navigator.hardwareConcurrency` cores, the memory
 * `navigator.deviceMemory` reports (Chromium rounds it and caps it at 8 GiB; other browsers have
 * none, and 4 GiB is assumed), and shared memory only on a cross-origin isolated page.
 */

const GIB = 2 ** 30;
const ASSUMED_MEMORY_GIB = 4;

interface NavigatorFigures {
  readonly hardwareConcurrency?: number;
  readonly deviceMemory?: number;
}

function nav(): NavigatorFigures | undefined {
  return (globalThis as { navigator?: NavigatorFigures }).navigator;
}

/** Logical processors the browser reports: the default core count of a Context. */
export function availableCores(): number {
  const n = nav()?.hardwareConcurrency;
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 ? n : 1;
}

/** Bytes of memory the browser admits to: a CPU Context's memorySize defaults to half of it. */
export function totalMemory(): number {
  const gib = nav()?.deviceMemory;
  return Math.floor((typeof gib === 'number' && gib > 0 ? gib : ASSUMED_MEMORY_GIB) * GIB);
}

/**
 * Whether workers can share memory with the page: SharedArrayBuffer exists only on a page served
 * with `Cross-Origin-Opener-Policy: same-origin` and `Cross-Origin-Embedder-Policy: require-corp`.
 */
export function sharedMemoryAvailable(): boolean {
  // Through globalThis: the bundle replaces the bare name with a stand-in (sharedArrayBuffer.browser.ts).
  const g = globalThis as { crossOriginIsolated?: boolean; SharedArrayBuffer?: unknown };
  return g.crossOriginIsolated === true && typeof g.SharedArrayBuffer === 'function';
}

/** What a page without shared memory is told: the two headers that give it back. */
export const ISOLATION_ADVICE =
  'this page is not cross-origin isolated, so it has no SharedArrayBuffer and pxl runs kernels on the page\'s own thread (one core). ' +
  'To use every core, serve the page with the headers Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp';

/** {@link ISOLATION_ADVICE} when the page lacks shared memory, else undefined. */
export function isolationAdvice(): string | undefined {
  return sharedMemoryAvailable() ? undefined : ISOLATION_ADVICE;
}

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

interface PageGlobals {
  readonly crossOriginIsolated?: boolean;
  readonly SharedArrayBuffer?: unknown;
}

/** Whether the page is cross-origin isolated and so has SharedArrayBuffer. */
function isolated(): boolean {
  // Through globalThis: the bundle replaces the bare name with a stand-in (sharedArrayBuffer.browser.ts).
  const g = globalThis as PageGlobals;
  return g.crossOriginIsolated === true && typeof g.SharedArrayBuffer === 'function';
}

/** Whether the page's thread can await workers without blocking (every engine but older Safari and Firefox). */
function waitsAsync(): boolean {
  return typeof (Atomics as { waitAsync?: unknown }).waitAsync === 'function';
}

/**
 * Whether CPU kernels can run on workers sharing memory with the page: SharedArrayBuffer exists only
 * on a page served with `Cross-Origin-Opener-Policy: same-origin` and `Cross-Origin-Embedder-Policy:
 * require-corp`, and the page's thread, which must never block, awaits the workers with
 * `Atomics.waitAsync`.
 */
export function sharedMemoryAvailable(): boolean {
  return isolated() && waitsAsync();
}

/** What a page without shared memory is told: the two headers that give it back. */
export const ISOLATION_ADVICE =
  'this page is not cross-origin isolated, so it has no SharedArrayBuffer and pxl runs kernels on the page\'s own thread (one core). ' +
  'To use every core, serve the page with the headers Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp';

/** What an isolated page of a browser without Atomics.waitAsync is told. */
export const WAIT_ASYNC_ADVICE =
  "this browser has no Atomics.waitAsync, which pxl's page thread needs to await its workers without blocking, so pxl runs kernels on the page's own thread (one core)";

/** Why CPU kernels run on the page's thread here, and what to do about it; undefined when they run on workers. */
export function isolationAdvice(): string | undefined {
  if (!isolated()) return ISOLATION_ADVICE;
  return waitsAsync() ? undefined : WAIT_ASYNC_ADVICE;
}

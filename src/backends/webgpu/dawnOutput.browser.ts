/**
 * Dawn's native output, in a browser: there is no Dawn (the GPU is `navigator.gpu`) and no file
 * descriptor to capture, so nothing is prepared and `fn` runs as it is. Same exports as
 * dawnOutput.ts, which Node uses.
 */

/** Nothing to prepare in a browser. */
export async function prepareDawnCapture(_env: unknown): Promise<void> {}

/** Nothing is captured in a browser, so nothing changes. */
export function showDawnOutput(): void {}

/** Runs `fn`; a browser's WebGPU writes nothing to capture. */
export function withDawnOutput<T>(fn: () => T): { value: T; said: string } {
  return { value: fn(), said: '' };
}

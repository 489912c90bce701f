/**
 * Node's `setImmediate` for the browser bundle: code that wants "after the I/O and timers already
 * queued" (the block pipeline's turns of the event loop between copy steps) gets a message to
 * itself, the browser's nearest equivalent, which nested-timeout clamping does not delay. The
 * build injects this wherever the code names the global `setImmediate`.
 */
export function setImmediate<A extends unknown[]>(callback: (...args: A) => void, ...args: A): { readonly cancelled: boolean } {
  const handle = { cancelled: false };
  const { port1, port2 } = new MessageChannel();
  (port1 as unknown as { onmessage: (() => void) | null }).onmessage = () => {
    port1.close();
    if (!handle.cancelled) callback(...args);
  };
  port2.postMessage(0);
  return handle;
}

/** Cancels a {@link setImmediate} that has not run yet. */
export function clearImmediate(handle: { cancelled: boolean } | undefined): void {
  if (handle !== undefined) handle.cancelled = true;
}

/**
 * Garbage collection on an MU core, on demand. A core's thread runs JavaScript only while it runs
 * kernels, and sleeps in `Atomics.wait` otherwise, so V8 rarely collects there; and the device
 * buffers it was handed (SharedArrayBuffers, received as messages) weigh nothing on its own heap,
 * so nothing there asks for a collection either. Yet every such object keeps its buffer's memory
 * alive for the whole process after the host has freed it. The core therefore collects, between
 * launches, once enough device memory has been freed (worker.ts).
 *
 * V8's `gc()` is reachable without `--expose-gc` on the command line: with the flag set for a
 * moment, a new vm context gets it. The flag is process-wide, so it is set back at once; cores do
 * this concurrently, and one core's reset can land between another's set and its new context, so
 * that one tries again. Runs on a core's thread only.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | null | undefined;

function obtain(): (() => void) | null {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return exposed as () => void;
  for (let attempt = 0; attempt < 3; attempt++) {
    setFlagsFromString('--expose-gc');
    try {
      const fn: unknown = runInNewContext('typeof gc === "function" ? gc : undefined');
      if (typeof fn === 'function') return fn as () => void;
    } finally {
      setFlagsFromString('--no-expose-gc');
    }
  }
  return null;
}

/** Runs a full garbage collection of this thread's heap; does nothing where V8 offers none. */
export function collectGarbage(): void {
  if (gc === undefined) gc = obtain();
  gc?.();
}

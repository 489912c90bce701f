/**
 * Checks before computing: a result must fit where it goes (free disk space for a file, available
 * memory for a result held in memory) before any block runs or any result buffer is allocated, so
 * a run that cannot finish fails at once with the size it needs and the ways to make it fit,
 * instead of after hours, or in an allocation that takes the machine down.
 */
import { statfs } from 'node:fs/promises';
import { freemem } from 'node:os';
import { InputFormatError, OutOfMemoryError } from '../core/errors.js';

/**
 * Where the checks read free space and memory. Internal: tests replace the methods (for instance
 * with `vi.spyOn`) to play a full disk or a small machine.
 */
export const capacityProbe = {
  /** Bytes an unprivileged process may still write on the file system holding `dir`. */
  async freeDiskBytes(dir: string): Promise<number> {
    const s = await statfs(dir);
    return Number(s.bavail) * Number(s.bsize);
  },
  /** Bytes of memory this process can still take: free memory, within a cgroup limit when there is one. */
  availableMemoryBytes(): number {
    const free = freemem();
    const limit = (process as { constrainedMemory?: () => number | undefined }).constrainedMemory?.() ?? 0;
    // An unlimited cgroup reports a huge number (or 0): only a limit below the machine's counts.
    if (limit > 0 && limit < Number.MAX_SAFE_INTEGER / 2) return Math.max(0, Math.min(free, limit - process.memoryUsage.rss()));
    return free;
  },
};

/**
 * Bytes as a person reads them: `'3.20 GB (3200000000 bytes)'` above a kilobyte, else `'512 bytes'`.
 *
 * @example formatBytes(512 * 2 ** 20) // '536.87 MB (536870912 bytes)'
 */
export function formatBytes(bytes: number): string {
  const units: Array<[number, string]> = [[1e12, 'TB'], [1e9, 'GB'], [1e6, 'MB'], [1e3, 'kB']];
  for (const [scale, unit] of units) {
    if (bytes >= scale) return `${(bytes / scale).toFixed(2)} ${unit} (${bytes} bytes)`;
  }
  return `${bytes} bytes`;
}

/** A way to make a result fit, and the size it would then need (when it changes the size). */
export interface WayOut {
  /** What to change, e.g. `"--layout condensed (layout: 'condensed')"`. */
  readonly how: string;
  /** The bytes needed that way; omitted when the change does not shrink the result itself. */
  readonly bytes?: number;
  /**
   * The elements held in memory that way (0 for a file): only such ways are offered for a result of
   * more elements than one array holds. Omitted when the count stays the same.
   */
  readonly elements?: number;
}

/** The ways out in words, one after another: `"--layout condensed (layout: 'condensed'): 1.44 MB (1437728 bytes); ..."`. */
export function waysOutText(waysOut: readonly WayOut[]): string {
  return waysOut.map((w) => (w.bytes === undefined ? w.how : `${w.how}: ${formatBytes(w.bytes)}`)).join('; ');
}

/**
 * Refuses a result file that the disk cannot hold: `needed` more bytes than the file system of
 * `directory` (where `target` goes) has free.
 *
 * @param what the result in words, e.g. `'the square float64 result of pdist on 50000 PCFs'`.
 * @param waysOut smaller alternatives to offer.
 * @throws (rejects) InputFormatError naming `target`, the size needed, the space free and the ways out;
 *   InputFormatError naming `target` when `directory` cannot be read (missing, say).
 * @example await checkDiskSpace('/data/d.npy', '/data', layout.bytes, 'the result', [{ how: '--dtype float32', bytes: layout.bytes / 2 }]);
 */
export async function checkDiskSpace(target: string, directory: string, needed: number, what: string, waysOut: readonly WayOut[]): Promise<void> {
  let free: number;
  try {
    free = await capacityProbe.freeDiskBytes(directory);
  } catch (error) {
    // The API reaches here without the CLI's checkWritable, so a missing directory gets the same advice.
    const advice = (error as { code?: unknown } | undefined)?.code === 'ENOENT' ? `; create it first (mkdir -p ${directory}), or name a file in a directory that exists` : '';
    throw new InputFormatError(`cannot write to directory ${directory}: ${error instanceof Error ? error.message : String(error)}${advice}`, target, { cause: error });
  }
  if (needed <= free) return;
  throw new InputFormatError(
    `${what} needs ${formatBytes(needed)} on disk, but only ${formatBytes(free)} is free in ${directory}; nothing was computed. To fit: ${waysOutText(waysOut)}`,
    target,
  );
}

/**
 * Refuses a result held in memory that the process cannot hold: `needed` bytes (the result and the
 * run's own buffers) beyond the memory available, or more elements than one typed array holds.
 *
 * @param elements elements of the result array, checked against the typed-array limit.
 * @throws OutOfMemoryError with the size needed, the memory available and the ways out.
 */
export function checkMemory(needed: number, elements: number, what: string, waysOut: readonly WayOut[]): void {
  const MAX_ELEMENTS = 2 ** 32;
  const available = capacityProbe.availableMemoryBytes();
  // A smaller result that still does not fit here is no way out.
  const fitting = waysOut.filter((w) => w.bytes === undefined || w.bytes <= available);
  if (elements > MAX_ELEMENTS) {
    const fewer = fitting.filter((w) => w.elements !== undefined && w.elements <= MAX_ELEMENTS);
    throw new OutOfMemoryError(needed, 0, `${what} has ${elements} elements, more than one array holds (${MAX_ELEMENTS}); nothing was computed. To fit: ${waysOutText(fewer)}`);
  }
  if (needed <= available) return;
  throw new OutOfMemoryError(
    needed,
    available,
    `${what} needs ${formatBytes(needed)} of memory, but only ${formatBytes(available)} is available; nothing was computed. To fit: ${waysOutText(fitting)}`,
  );
}

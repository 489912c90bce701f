import { open } from '../platform/files.js';
import { ArgumentError, InputFormatError } from '../core/errors.js';
import { checkBoolean, checkOptionsObject, describe } from '../core/validate.js';
import { checkDtype, syntaxError, type ParsePcfOptions } from './io.js';
import { readPcfJsonInParts } from './jsonPartsRead.js';
import { JsonScanner } from './jsonScanner.js';
import type { PcfDtype } from './pcf.js';
import { PcfJsonCollector } from './pcfJsonCollector.js';
import type { PcfSet } from './pcfSet.js';

// Apart from parsePcfJson (io.ts) because files are Node's: the browser bundle, which has no file
// paths, must not reach this module's import() of npz.js, which esbuild turns into a chunk of its
// own, and so splits npz.js and all it imports off from pxl.js into one more, whether or not a page
// ever calls readPcfFile.

/**
 * Bytes read and scanned at a time: small enough that one chunk never stalls the event loop long.
 * Its two buffers outlive the read until a full garbage collection, which a short process may never
 * run, so they are 256 KiB rather than 1 MiB. With the smaller stages of growableColumn.ts, the peak
 * RSS of `pxl pdist` of 2,000 PCFs went from 105.5 to 103.0 MiB, at the same CPU time per read (47 MB:
 * 250-400 ms either way).
 */
const CHUNK_BYTES = 1 << 18;

/**
 * Reads a file of PCFs, choosing the format by extension: `.npz` (NumPy arrays `offsets`, `times`,
 * `values`; see {@link readPcfNpz}) or, for any other name, a JSON document as for
 * {@link parsePcfJson}, read as a stream; a JSON file of 64 MiB or more is read in parts on every
 * core at once, with the same result and the same errors. Rejects, never throws.
 *
 * @throws InputFormatError naming `path` when the file cannot be read or parsed; ArgumentError for
 *   a path that is not a non-empty string; OptionError for a bad option.
 * @example const set = await readPcfFile('data/pcfs.json', { dtype: 'float32' });
 */
export async function readPcfFile(path: string, options: Omit<ParsePcfOptions, 'file'> = {}): Promise<PcfSet> {
  if (typeof path !== 'string' || path === '') throw new ArgumentError(`readPcfFile: path must be a file name, got ${describe(path)}`);
  const o = checkOptionsObject('readPcfFile options', options, ['dtype', 'shared']);
  if (o.shared !== undefined) checkBoolean('shared', o.shared);
  const dtype = checkDtype(o.dtype ?? 'float64');
  // Loaded on first use: .npz reading brings fflate (90 kB of JavaScript) that JSON reading never needs.
  if (/[^/\\]\.npz$/i.test(path)) return (await import('./npz.js')).readPcfNpz(path, { dtype, shared: o.shared ?? false });
  return readPcfJsonFile(path, dtype, o.shared ?? false);
}

async function readPcfJsonFile(path: string, dtype: PcfDtype, shared: boolean): Promise<PcfSet> {
  return (await readPcfJsonInParts(path, dtype, shared)) ?? readPcfJsonOnePass(path, dtype, shared);
}

/** Reads a JSON file of PCFs from start to end on this thread (exported for bench/input.mjs's comparison). */
export async function readPcfJsonOnePass(path: string, dtype: PcfDtype, shared: boolean): Promise<PcfSet> {
  const collector = new PcfJsonCollector(dtype, shared);
  const scanner = new JsonScanner(collector);
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (err) {
    throw new InputFormatError(`cannot read the file: ${(err as Error).message}`, path, { cause: err });
  }
  // Two buffers: the next read runs on libuv's thread pool while this thread scans the last one
  // (the scanner copies what it keeps of a chunk, so a buffer is free again once scanned).
  const buffers = [new Uint8Array(CHUNK_BYTES), new Uint8Array(CHUNK_BYTES)];
  let turn = 0;
  const read = (buffer: Uint8Array): Promise<number> =>
    handle.read(buffer, 0, buffer.length, null).then(
      ({ bytesRead }) => bytesRead,
      (err: unknown) => {
        throw new InputFormatError(`cannot read the file: ${(err as Error).message}`, path, { cause: err });
      },
    );
  let pending = read(buffers[0]!);
  try {
    for (;;) {
      const bytesRead = await pending;
      if (bytesRead === 0) break;
      const buffer = buffers[turn]!;
      turn ^= 1;
      pending = read(buffers[turn]!);
      try {
        scanner.push(buffer.subarray(0, bytesRead));
      } catch (err) {
        syntaxError(err, path);
      }
    }
    try {
      scanner.end();
    } catch (err) {
      syntaxError(err, path);
    }
  } finally {
    // Never close the file under a read still in flight (after a syntax error).
    await pending.catch(() => undefined);
    await handle.close();
  }
  return collector.finish(path);
}

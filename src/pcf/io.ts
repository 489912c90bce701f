import { open } from '../platform/files.js';
import { ArgumentError, InputFormatError, OptionError } from '../core/errors.js';
import { checkBoolean, checkOptionsObject, describe } from '../core/validate.js';
import { readPcfJsonInParts } from './jsonPartsRead.js';
import { JsonScanner } from './jsonScanner.js';
import type { PcfDtype } from './pcf.js';
import { PcfJsonCollector } from './pcfJsonCollector.js';
import type { PcfSet } from './pcfSet.js';

/**
 * Reading PCFs from JSON. Accepted documents:
 *
 * - an array of PCFs: `[[[0, 1], [2, 0]], [[0, 3], [1, 0]]]`
 * - an object with a `pcfs` array: `{ "pcfs": [...] }`
 * - nested arrays of PCFs for cdist's multi-dimensional inputs: `[[f, g, h], [p, q, r]]` has
 *   shape `[2, 3]` (the depth is detected; the nesting must be rectangular)
 *
 * Each PCF is an array of `[t, v]` pairs in any order, one of them at t = 0. PCFs are numbered
 * row-major in every message. A leading UTF-8 byte-order mark is skipped.
 *
 * Documents are read as a stream of bytes straight into typed arrays (jsonScanner.ts,
 * pcfJsonCollector.ts), never as one string, so a file larger than V8's longest string (about
 * 512 MiB) loads, with memory near the size of the resulting arrays. A large file is read in parts
 * on every core at once (jsonPartsRead.ts), with the same result and the same errors.
 */

/**
 * Bytes read and scanned at a time: small enough that one chunk never stalls the event loop long.
 * Its two buffers outlive the read until a full garbage collection, which a short process may never
 * run, so they are 256 KiB rather than 1 MiB. With the smaller stages of growableColumn.ts, the peak
 * RSS of `pxl pdist` of 2,000 PCFs went from 105.5 to 103.0 MiB, at the same CPU time per read (47 MB:
 * 250-400 ms either way).
 */
const CHUNK_BYTES = 1 << 18;
/** Characters of a string argument encoded at a time (at most 3 bytes each). */
const CHUNK_CHARS = 1 << 18;

function syntaxError(err: unknown, file: string | undefined): never {
  if (err instanceof SyntaxError) throw new InputFormatError(`invalid JSON: ${err.message}`, file, { cause: err });
  throw err;
}


/** Options of {@link parsePcfJson} and {@link readPcfFile}. */
export interface ParsePcfOptions {
  /** File name that error messages start with. */
  file?: string;
  /** Storage type of the result. Default `'float64'`. */
  dtype?: PcfDtype;
  /** Allocate the result on SharedArrayBuffers. Default false. */
  shared?: boolean;
}

function checkDtype(dtype: unknown): PcfDtype {
  if (dtype !== 'float64' && dtype !== 'float32') {
    throw new OptionError(`dtype must be one of 'float64', 'float32', got ${describe(dtype)}`);
  }
  return dtype;
}

/**
 * Parses a JSON document of PCFs into a validated {@link PcfSet} whose `shape` follows the
 * document's nesting.
 *
 * @throws InputFormatError (message starting with `options.file` when given) for invalid JSON, a
 *   document that is not an array of PCFs, ragged nesting, a malformed breakpoint
 *   ("PCF 3, breakpoint 2: expected a [t, v] pair of numbers, got 'x'") or an invalid PCF (the
 *   PcfError is the `cause`); OptionError for a bad dtype.
 * @example parsePcfJson('{"pcfs": [[[0, 1], [2, 0]]]}').count // 1
 */
export function parsePcfJson(text: string, options: ParsePcfOptions = {}): PcfSet {
  const o = checkOptionsObject('parsePcfJson options', options, ['file', 'dtype', 'shared']);
  if (o.file !== undefined && typeof o.file !== 'string') throw new OptionError(`file must be a string (the name messages start with), got ${describe(o.file)}`);
  if (o.shared !== undefined) checkBoolean('shared', o.shared);
  const file = o.file;
  if (typeof text !== 'string') {
    throw new ArgumentError(`parsePcfJson: text must be a string of JSON, got ${describe(text)}${(text as unknown) instanceof Uint8Array ? "; decode it first (new TextDecoder().decode(bytes)) or use readPcfFile" : ''}`);
  }
  const dtype = checkDtype(o.dtype ?? 'float64');
  const collector = new PcfJsonCollector(dtype, o.shared ?? false);
  const scanner = new JsonScanner(collector);
  const encoder = new TextEncoder();
  const bytes = new Uint8Array(3 * CHUNK_CHARS + 3);
  try {
    for (let at = 0; at < text.length;) {
      let end = Math.min(text.length, at + CHUNK_CHARS);
      // Never split a surrogate pair: each half alone would encode as U+FFFD.
      const last = text.charCodeAt(end - 1);
      if (end < text.length && last >= 0xd800 && last <= 0xdbff) end++;
      const { written } = encoder.encodeInto(text.slice(at, end), bytes);
      scanner.push(bytes.subarray(0, written));
      at = end;
    }
    scanner.end();
  } catch (err) {
    syntaxError(err, file);
  }
  return collector.finish(file);
}

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

import { ArgumentError, InputFormatError, OptionError } from '../core/errors.js';
import { checkBoolean, checkOptionsObject, describe } from '../core/validate.js';
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
 * on every core at once (pcfFileRead.ts, jsonPartsRead.ts), with the same result and the same errors.
 */

/** Characters of a string argument encoded at a time (at most 3 bytes each). */
const CHUNK_CHARS = 1 << 18;

/** Rethrows a JSON syntax error as InputFormatError naming `file`; any other error as it is. */
export function syntaxError(err: unknown, file: string | undefined): never {
  if (err instanceof SyntaxError) throw new InputFormatError(`invalid JSON: ${err.message}`, file, { cause: err });
  throw err;
}

/** Options of {@link parsePcfJson} and {@link readPcfFile}. */
export interface ParsePcfOptions {
  /** File name that error messages start with. */
  file?: string;
  /** Storage type of the result. Default `'float64'`. */
  dtype?: PcfDtype;
  /** Allocate the result on SharedArrayBuffers: the CPU cores of pdist, cdist and l2Kernel then read it where it lies instead of copying it, so the process holds it once. Default false. */
  shared?: boolean;
}

/** @throws OptionError unless `dtype` is 'float64' or 'float32'. */
export function checkDtype(dtype: unknown): PcfDtype {
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

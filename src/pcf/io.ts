import { readFile } from 'node:fs/promises';
import { ArgumentError, InputFormatError, OptionError, PcfError } from '../core/errors.js';
import { checkBoolean, checkOptionsObject, describe } from '../core/validate.js';
import type { PcfDtype } from './pcf.js';
import { flattenPcfTree, pcfSetFrom } from './pcfSet.js';
import type { PcfLike, PcfSet } from './pcfSet.js';

/**
 * Reading PCFs from JSON. Accepted documents:
 *
 * - an array of PCFs: `[[[0, 1], [2, 0]], [[0, 3], [1, 0]]]`
 * - an object with a `pcfs` array: `{ "pcfs": [...] }`
 * - nested arrays of PCFs for cdist's multi-dimensional inputs: `[[f, g, h], [p, q, r]]` has
 *   shape `[2, 3]` (the depth is detected; the nesting must be rectangular)
 *
 * Each PCF is an array of `[t, v]` pairs in any order, one of them at t = 0. PCFs are numbered
 * row-major in every message.
 */

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

/** Checks that every leaf is an array of [t, v] number pairs, with messages naming PCF and breakpoint. */
function checkStructure(leaves: readonly unknown[], file: string | undefined): void {
  for (let k = 0; k < leaves.length; k++) {
    const pcf = leaves[k];
    if (!Array.isArray(pcf)) {
      throw new InputFormatError(`PCF ${k}: expected an array of [t, v] pairs, got ${describe(pcf)}`, file);
    }
    for (let b = 0; b < pcf.length; b++) {
      const pair: unknown = pcf[b];
      if (Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'number' && typeof pair[1] === 'number') continue;
      let got: unknown = pair;
      if (Array.isArray(pair) && pair.length === 2) got = typeof pair[0] === 'number' ? pair[1] : pair[0];
      throw new InputFormatError(`PCF ${k}, breakpoint ${b}: expected a [t, v] pair of numbers, got ${describe(got)}`, file);
    }
  }
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
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch (err) {
    throw new InputFormatError(`invalid JSON: ${(err as Error).message}`, file, { cause: err });
  }
  if (root !== null && typeof root === 'object' && !Array.isArray(root)) {
    const pcfs = (root as { pcfs?: unknown }).pcfs;
    if (!Array.isArray(pcfs)) {
      throw new InputFormatError(`expected an array of PCFs or an object with a "pcfs" array, got an object whose "pcfs" is ${describe(pcfs)}`, file);
    }
    root = pcfs;
  } else if (!Array.isArray(root)) {
    throw new InputFormatError(`expected an array of PCFs or an object with a "pcfs" array, got ${describe(root)}`, file);
  }
  const { leaves, shape } = flattenPcfTree(root, (message) => {
    throw new InputFormatError(message, file);
  });
  checkStructure(leaves, file);
  try {
    return pcfSetFrom(leaves as PcfLike[], dtype, { shape, shared: o.shared ?? false });
  } catch (err) {
    if (err instanceof PcfError) throw new InputFormatError(err.message, file, { cause: err });
    throw err;
  }
}

/**
 * Reads and parses a JSON file of PCFs; see {@link parsePcfJson}. Rejects, never throws.
 *
 * @throws InputFormatError naming `path` when the file cannot be read or parsed.
 * @example const set = await readPcfFile('data/pcfs.json', { dtype: 'float32' });
 */
export async function readPcfFile(path: string, options: Omit<ParsePcfOptions, 'file'> = {}): Promise<PcfSet> {
  if (typeof path !== 'string' || path === '') throw new ArgumentError(`readPcfFile: path must be a file name, got ${describe(path)}`);
  checkOptionsObject('readPcfFile options', options, ['dtype', 'shared']);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new InputFormatError(`cannot read the file: ${(err as Error).message}`, path, { cause: err });
  }
  return parsePcfJson(text, { ...options, file: path });
}

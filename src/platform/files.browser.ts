/**
 * Files by path, in a browser: there are none. Every function here rejects with UnsupportedError
 * saying what to do instead (hand pxl bytes or text, and save results from the returned matrix).
 */
import { UnsupportedError } from '../core/errors.js';

const NO_PATHS = 'a browser page has no file paths';

/** Rejects: read the file's bytes (fetch, a file picker) and parse them with parsePcfNpz or parsePcfJson. */
export async function open(path: unknown, _flags?: string): Promise<never> {
  throw new UnsupportedError(`cannot open ${String(path)}: ${NO_PATHS}; fetch the bytes (or take them from a file picker) and use parsePcfNpz(bytes) or parsePcfJson(text)`);
}

/** Rejects, as {@link open} does. */
export async function stat(path: unknown): Promise<never> {
  return open(path);
}

/** Rejects: make the bytes (encodeNpy, JSON.stringify) and offer them as a download instead. */
export async function writeFile(path: unknown, _data: unknown): Promise<never> {
  throw new UnsupportedError(`cannot write ${String(path)}: ${NO_PATHS}; make the bytes (encodeNpy for a matrix, JSON.stringify for a trace) and offer them as a download`);
}

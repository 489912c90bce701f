/**
 * The `out` option of pdist, cdist and l2Kernel in a browser, where there is no file to stream a
 * result into: a call with `out` is refused, saying what to do instead, and a result held in memory
 * is checked against the memory the browser reports. Same exports as resultFile.ts, which Node uses;
 * the browser build takes this file in its place.
 */
import { OutOfMemoryError, UnsupportedError } from '../core/errors.js';
import type { FloatDType } from '../blocks/floatArray.js';
import { totalMemory } from '../platform/machine.js';
import type { NpyFileSink } from '../blocks/npyFileSink.js';
import type { ResultFile, ResultFileRequest } from './resultFile.js';

export type { ResultFile, ResultFileRequest } from './resultFile.js';

/** Default of the `memory` option: 512 MiB for block buffers. */
export const DEFAULT_MEMORY = 512 * 2 ** 20;

/** What to do instead of `out`, for the refusal. */
const INSTEAD =
  'leave out `out` and save the returned matrix: encodeNpy(d.toSquare().data, [d.n, d.n]) gives the bytes of a square .npy ' +
  '(encodeNpy(d.condensed, [d.condensed.length]) the condensed vector; a cdist result t: encodeNpy(t.data, t.shape))';

/** @throws (rejects) UnsupportedError: a page cannot write files. */
export async function openResultFile(r: ResultFileRequest, _signal?: AbortSignal): Promise<NpyFileSink> {
  throw new UnsupportedError(`${r.fnName}: out ('${r.out}') streams the result into a file, which a browser page cannot write; ${INSTEAD}`);
}

/** @throws UnsupportedError: a page cannot write files, whatever `out` names. */
export function checkOut(out: string, computation: string, _signal: AbortSignal | undefined): void {
  throw new UnsupportedError(`${computation}: out ('${out}') streams the result into a file, which a browser page cannot write; ${INSTEAD}`);
}

/** Never reached in a browser: {@link openResultFile} refuses first. */
export async function computeToFile(_sink: NpyFileSink, target: string, _compute: () => Promise<void>): Promise<ResultFile> {
  throw new UnsupportedError(`cannot write ${target} from a browser page; ${INSTEAD}`);
}

/**
 * Refuses, before anything is allocated, a result the page cannot hold: more elements than one
 * typed array takes, or (with block buffers) more bytes than the browser reports memory.
 * @throws OutOfMemoryError with the bytes needed and the ways out (float32, a smaller input).
 */
export function checkResultFitsMemory(fnName: ResultFileRequest['fnName'], rows: { count: number }, cols: { count: number }, elements: number, dtype: FloatDType, memory: number): void {
  const result = elements * (dtype === 'float64' ? 8 : 4);
  const needed = result + Math.min(memory, result);
  const available = totalMemory();
  const what = fnName === 'cdist' ? `cdist of ${rows.count} x ${cols.count} PCFs` : `${fnName} of ${rows.count} PCFs`;
  if (elements <= 2 ** 32 && needed <= available) return;
  const float32 = dtype === 'float64' ? "dtype: 'float32' (half the bytes), or " : '';
  throw new OutOfMemoryError(needed, available, `the ${dtype} result of ${what} needs ${needed} bytes, more than the ${available} this browser reports; nothing was computed. To fit: ${float32}fewer PCFs per call`);
}

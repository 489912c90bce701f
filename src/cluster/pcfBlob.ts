/**
 * A PCF set as one byte string, for the Object Store: a JSON header line, then offsets (uint32),
 * times and values (the set's dtype), each aligned to 8 bytes, all little-endian. The name of the
 * blob is a SHA-256 of its bytes, so the same input uploaded twice is stored once and a rerun
 * reuses it; a worker checks the hash (inputBucket.ts) and the set (here) before it computes anything.
 */
import { createHash } from 'node:crypto';
import { UnsupportedError } from '../core/errors.js';
import { checkPcfSet, type PcfSet } from '../pcf/pcfSet.js';
import type { PcfArray } from '../pcf/pcf.js';

const MAGIC = 'pxl-pcf-set 1';

const align8 = (n: number): number => Math.ceil(n / 8) * 8;

/** The bytes of `set` (its shape is not kept: workers need only the PCFs). */
export function encodePcfSet(set: PcfSet): Uint8Array {
  const header = new TextEncoder().encode(`${JSON.stringify({ format: MAGIC, dtype: set.dtype, count: set.count })}\n`);
  const breakpoints = set.offsets[set.count]!;
  const floatBytes = set.dtype === 'float32' ? 4 : 8;
  const at = { offsets: align8(header.length), times: 0, values: 0, end: 0 };
  at.times = align8(at.offsets + 4 * (set.count + 1));
  at.values = align8(at.times + floatBytes * breakpoints);
  at.end = at.values + floatBytes * breakpoints;
  const bytes = new Uint8Array(at.end);
  bytes.set(header, 0);
  const view = (array: ArrayBufferView): Uint8Array => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
  bytes.set(view(set.offsets.subarray(0, set.count + 1)), at.offsets);
  bytes.set(view(set.times.subarray(0, breakpoints)), at.times);
  bytes.set(view(set.values.subarray(0, breakpoints)), at.values);
  return bytes;
}

/** The object name of a blob: `pcf-` and the SHA-256 of its bytes in hex. */
export function blobName(bytes: Uint8Array): string {
  return `pcf-${createHash('sha256').update(bytes).digest('hex')}`;
}

/**
 * The set in `bytes`, checked: every PCF valid. `name` (whose hash the caller checked) names the
 * input in messages.
 * @throws UnsupportedError saying what is wrong with the blob.
 */
export function decodePcfSet(bytes: Uint8Array, name: string): PcfSet {
  const newline = bytes.indexOf(10);
  let header: { format?: unknown; dtype?: unknown; count?: unknown };
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(0, newline))) as typeof header;
  } catch {
    throw new UnsupportedError(`the input ${name} has no readable header`);
  }
  if (header.format !== MAGIC || (header.dtype !== 'float32' && header.dtype !== 'float64') || typeof header.count !== 'number' || !Number.isSafeInteger(header.count) || header.count < 0) {
    throw new UnsupportedError(`the input ${name} is not a PCF set of format '${MAGIC}'`);
  }
  const count = header.count;
  const dtype = header.dtype;
  const floatBytes = dtype === 'float32' ? 4 : 8;
  const offsetsAt = align8(newline + 1);
  if (offsetsAt + 4 * (count + 1) > bytes.length) throw new UnsupportedError(`the input ${name} is shorter than its ${count} offsets`);
  // Copies (a Buffer's slice would be a view), so every array is aligned and owned whatever
  // buffer the bytes arrived in.
  const copy = (from: number, to: number): ArrayBuffer => new Uint8Array(bytes.subarray(from, to)).buffer;
  const offsets = new Uint32Array(copy(offsetsAt, offsetsAt + 4 * (count + 1)));
  const breakpoints = offsets[count]!;
  const timesAt = align8(offsetsAt + 4 * (count + 1));
  const valuesAt = align8(timesAt + floatBytes * breakpoints);
  if (valuesAt + floatBytes * breakpoints !== bytes.length) throw new UnsupportedError(`the input ${name} has ${bytes.length} bytes, not what its ${breakpoints} breakpoints take`);
  const Float = dtype === 'float32' ? Float32Array : Float64Array;
  const times = new Float(copy(timesAt, timesAt + floatBytes * breakpoints)) as PcfArray;
  const values = new Float(copy(valuesAt, valuesAt + floatBytes * breakpoints)) as PcfArray;
  const set: PcfSet = { dtype, count, shape: Object.freeze([count]), offsets, times, values };
  try {
    checkPcfSet(set, `the input ${name}`);
  } catch (error) {
    throw new UnsupportedError(`the input ${name} is not a valid PCF set: ${(error as Error).message}`);
  }
  return set;
}

import { Zip, ZipPassThrough } from 'fflate';
import { OptionError } from '../core/errors.js';
import { npyHeader } from './npy.js';
import type { PcfSet } from './pcfSet.js';

/**
 * Writes a {@link PcfSet} as the `.npz` that `np.savez(file, offsets=..., times=..., values=...)`
 * makes and `np.load` reads: a zip of stored (uncompressed) members `offsets.npy` (int64),
 * `times.npy` and `values.npy` (the set's dtype). Written in pieces: no copy of the whole set is
 * made, and every piece goes to `write` before the next is produced.
 */

/** Elements converted and handed to the zip at a time. */
const RUN = 1 << 20;
/** fflate writes no zip64 records, so one member stays below 4 GiB. */
const MAX_MEMBER_BYTES = 0xffff_ffff;
/** A fixed date makes the same set give the same bytes. Zip dates start in 1980. */
const MTIME = new Date(1980, 0, 1);

/**
 * Sends the `.npz` bytes of `set` to `write`, in order.
 *
 * @throws OptionError (before writing anything) when an array would exceed 4 GiB, which needs a
 *   zip64 archive that this writer does not make; whatever `write` rejects with.
 * @example await writePcfNpz(set, (chunk) => handle.write(chunk).then(() => undefined));
 */
export async function writePcfNpz(set: PcfSet, write: (chunk: Uint8Array) => Promise<void>): Promise<void> {
  const breakpoints = set.offsets[set.count]!;
  const floatBytes = set.dtype === 'float32' ? 4 : 8;
  if (breakpoints * floatBytes + 128 > MAX_MEMBER_BYTES || (set.count + 1) * 8 + 128 > MAX_MEMBER_BYTES) {
    throw new OptionError(`an .npz member must stay below 4 GiB, but ${breakpoints} ${set.dtype} breakpoints need ${breakpoints * floatBytes} bytes; write .json, or fewer or smaller PCFs`);
  }
  const pending: Uint8Array[] = [];
  let failure: Error | undefined;
  const zip = new Zip((err, chunk) => {
    if (err) failure ??= err;
    else pending.push(chunk);
  });
  const flush = async (): Promise<void> => {
    if (failure !== undefined) throw failure;
    for (const chunk of pending.splice(0)) await write(chunk);
  };
  const member = async (name: string, descr: string, length: number, piece: (from: number, to: number) => Uint8Array): Promise<void> => {
    const file = new ZipPassThrough(`${name}.npy`);
    file.mtime = MTIME;
    zip.add(file);
    file.push(npyHeader(descr, [length]), length === 0);
    for (let from = 0; from < length; from += RUN) {
      const to = Math.min(length, from + RUN);
      file.push(piece(from, to), to === length);
      await flush();
    }
    await flush();
  };
  await member('offsets', '<i8', set.count + 1, (from, to) => {
    const words = new Uint32Array(2 * (to - from));
    for (let k = from; k < to; k++) words[2 * (k - from)] = set.offsets[k]!;
    return new Uint8Array(words.buffer);
  });
  const descr = set.dtype === 'float32' ? '<f4' : '<f8';
  const bytesOf = (array: Float64Array | Float32Array) => (from: number, to: number): Uint8Array => {
    const part = array.subarray(from, to);
    return new Uint8Array(part.buffer, part.byteOffset, part.byteLength);
  };
  await member('times', descr, breakpoints, bytesOf(set.times));
  await member('values', descr, breakpoints, bytesOf(set.values));
  zip.end();
  await flush();
}

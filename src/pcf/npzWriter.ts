import { ArgumentError, OptionError } from '../core/errors.js';
import { checkFunction, describe } from '../core/validate.js';
import { npyHeader } from './npy.js';
import { checkPcfSet, isPcfSetLike, type PcfSet } from './pcfSet.js';

/**
 * Writes a {@link PcfSet} as the `.npz` that `np.savez(file, offsets=..., times=..., values=...)`
 * makes and `np.load` reads: a zip of stored (uncompressed) members `offsets.npy` (int64),
 * `times.npy` and `values.npy` (the set's dtype). Written in pieces: no copy of the whole set is
 * made, and every piece goes to `write` before the next is produced.
 *
 * Why the zip records are written here and not by fflate's streaming Zip: that one puts each
 * member's size and CRC after its data (a "data descriptor"), and a streaming reader (fflate's
 * own Unzip, which readPcfNpz uses) must then search the data for the next record's signature,
 * which raw float bytes can contain by chance. Here each member's CRC is computed first, so every
 * local header carries the sizes, as np.savez's headers do.
 */

/** Elements converted and handed to `write` at a time. */
const RUN = 1 << 20;
/** Without zip64 records every size and offset is a uint32. */
const MAX_ZIP_BYTES = 0xffff_ffff;
/** 1980-01-01 00:00 in MS-DOS form: a fixed date makes the same set give the same bytes. */
const DOS_DATE = (1 << 5) | 1;

const CRC_TABLE = (() => {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  return table;
})();

function crc32(crc: number, bytes: Uint8Array): number {
  let c = ~crc;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

interface Member {
  readonly name: Uint8Array;
  readonly header: Uint8Array;
  readonly length: number;
  readonly piece: (from: number, to: number) => Uint8Array;
  readonly size: number;
  crc: number;
  offset: number;
}

/** A zip record: a signature, then little-endian fields of 2 or 4 bytes, then the name. */
function record(signature: number, fields: ReadonlyArray<readonly [2 | 4, number]>, name: Uint8Array): Uint8Array {
  const length = 4 + fields.reduce((a, [size]) => a + size, 0);
  const out = new Uint8Array(length + name.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, signature, true);
  let at = 4;
  for (const [size, value] of fields) {
    if (size === 2) view.setUint16(at, value, true);
    else view.setUint32(at, value, true);
    at += size;
  }
  out.set(name, length);
  return out;
}

/**
 * Sends the `.npz` bytes of `set` to `write`, in order.
 *
 * Rejects, never throws; every argument is checked before anything is written.
 *
 * @throws OptionError when the file would exceed 4 GiB, which needs zip64 records that this writer
 *   does not make, or when `write` is not a function; ArgumentError when `set` is not a valid
 *   PcfSet (PcfError for an invalid PCF in it); whatever `write` rejects with.
 * @example await writePcfNpz(set, (chunk) => handle.write(chunk).then(() => undefined));
 */
export async function writePcfNpz(set: PcfSet, write: (chunk: Uint8Array) => Promise<void>): Promise<void> {
  if (!isPcfSetLike(set)) throw new ArgumentError(`writePcfNpz: set must be a PcfSet (from pcfSetFrom or readPcfFile), got ${describe(set)}`);
  checkPcfSet(set, 'writePcfNpz set');
  checkFunction('writePcfNpz: write', write);
  const breakpoints = set.offsets[set.count]!;
  const descr = set.dtype === 'float32' ? '<f4' : '<f8';
  const floatBytes = set.dtype === 'float32' ? 4 : 8;
  const bytesOf = (array: Float64Array | Float32Array) => (from: number, to: number): Uint8Array => {
    const part = array.subarray(from, to);
    return new Uint8Array(part.buffer, part.byteOffset, part.byteLength);
  };
  const member = (name: string, type: string, length: number, elementBytes: number, piece: (from: number, to: number) => Uint8Array): Member => {
    const header = npyHeader(type, [length]);
    return { name: new TextEncoder().encode(`${name}.npy`), header, length, piece, size: header.length + length * elementBytes, crc: 0, offset: 0 };
  };
  const members = [
    member('offsets', '<i8', set.count + 1, 8, (from, to) => {
      const words = new Uint32Array(2 * (to - from));
      for (let k = from; k < to; k++) words[2 * (k - from)] = set.offsets[k]!;
      return new Uint8Array(words.buffer);
    }),
    member('times', descr, breakpoints, floatBytes, bytesOf(set.times)),
    member('values', descr, breakpoints, floatBytes, bytesOf(set.values)),
  ];
  const total = members.reduce((a, m) => a + 30 + m.name.length + m.size + 46 + m.name.length, 22);
  if (total > MAX_ZIP_BYTES) {
    throw new OptionError(`an .npz without zip64 records holds at most 4 GiB, but ${set.count} PCFs of ${breakpoints} ${set.dtype} breakpoints need ${total} bytes; write .json, or fewer or smaller PCFs`);
  }
  for (const m of members) {
    m.crc = crc32(0, m.header);
    for (let from = 0; from < m.length; from += RUN) m.crc = crc32(m.crc, m.piece(from, Math.min(m.length, from + RUN)));
  }
  let offset = 0;
  const send = async (bytes: Uint8Array): Promise<void> => {
    offset += bytes.length;
    await write(bytes);
  };
  for (const m of members) {
    m.offset = offset;
    await send(record(0x04034b50, [[2, 20], [2, 0], [2, 0], [2, 0], [2, DOS_DATE], [4, m.crc], [4, m.size], [4, m.size], [2, m.name.length], [2, 0]], m.name));
    await send(m.header);
    for (let from = 0; from < m.length; from += RUN) await send(m.piece(from, Math.min(m.length, from + RUN)));
  }
  const directory = offset;
  for (const m of members) {
    await send(record(0x02014b50, [[2, 20], [2, 20], [2, 0], [2, 0], [2, 0], [2, DOS_DATE], [4, m.crc], [4, m.size], [4, m.size], [2, m.name.length], [2, 0], [2, 0], [2, 0], [2, 0], [4, 0], [4, m.offset]], m.name));
  }
  await send(record(0x06054b50, [[2, 0], [2, 0], [2, members.length], [2, members.length], [4, offset - directory], [4, directory], [2, 0]], new Uint8Array(0)));
}

/**
 * PCF files the commands read (pdist, cdist, l2-kernel inputs) and write (random-pcfs), the format
 * chosen by the extension: `.json` (read as a stream) or `.npz` (NumPy's `np.savez` layout:
 * `offsets`, `times`, `values`).
 */
import { extname } from 'node:path';
import type { PcfDtype } from '../pcf/pcf.js';
import { readPcfFile } from '../pcf/io.js';
import { writePcfNpz } from '../pcf/npzWriter.js';
import type { PcfSet } from '../pcf/pcfSet.js';
import { writeFileAtomic } from './atomicFile.js';
import { writePcfsJson } from './output.js';
import { UsageError } from './terminal.js';

/** A format of PCF files. */
export type PcfFileFormat = 'json' | 'npz';

const FORMATS: Readonly<Record<string, PcfFileFormat>> = { '.json': 'json', '.npz': 'npz' };

/**
 * The PCF file format that `path`'s extension names (case-insensitive).
 *
 * @param role `'read'` or `'write'`, for the message.
 * @throws UsageError naming the path and the extensions there are.
 * @example pcfFileFormat('pcfs.npz', 'read') // 'npz'
 */
export function pcfFileFormat(path: string, role: 'read' | 'write'): PcfFileFormat {
  const ext = extname(path);
  const format = FORMATS[ext.toLowerCase()];
  if (format === undefined) {
    const got = ext === '' ? 'no extension' : `extension '${ext}'`;
    throw new UsageError(`cannot ${role} ${path}: the ${role === 'read' ? 'input' : 'output'} format is chosen by the file extension, which must be .json or .npz (got ${got})`);
  }
  return format;
}

/**
 * Reads the PCFs of a command's input file: `.json` or `.npz`.
 *
 * @throws UsageError for another extension; InputFormatError naming the file for what is wrong in it.
 */
export async function readPcfInput(path: string, dtype: PcfDtype): Promise<PcfSet> {
  pcfFileFormat(path, 'read');
  return readPcfFile(path, { dtype });
}

/**
 * Writes `set` to `path` atomically, as `.json` (`{"pcfs": [...]}`) or `.npz` by its extension.
 *
 * @throws (rejects) UsageError for another extension; as `writeFileAtomic` otherwise.
 */
export async function writePcfOutput(path: string, set: PcfSet, signal?: AbortSignal): Promise<void> {
  if (pcfFileFormat(path, 'write') === 'json') return writePcfsJson(path, set, signal);
  await writeFileAtomic(path, (sink) => writePcfNpz(set, (chunk) => sink.write(chunk)), signal);
}

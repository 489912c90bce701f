/**
 * PCF files the commands read (pdist, cdist, l2-kernel inputs) and write (random-pcfs), the format
 * chosen by the extension: `.json` (read as a stream) or `.npz` (NumPy's `np.savez` layout:
 * `offsets`, `times`, `values`). `-` reads either from standard input.
 */
import { extname } from 'node:path';
import type { PcfDtype } from '../pcf/pcf.js';
import { InputFormatError } from '../core/errors.js';
import { readPcfFile } from '../pcf/pcfFileRead.js';
import { JsonScanner } from '../pcf/jsonScanner.js';
import { PcfJsonCollector } from '../pcf/pcfJsonCollector.js';
import type { PcfSet } from '../pcf/pcfSet.js';
import { type FileSink, writeFileAtomic } from './atomicFile.js';
import { writePcfsJson } from './output.js';
import { STDIN_NAME, STDIO, streamSink } from './stdio.js';
import { type CliStream, UsageError } from './terminal.js';

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
    // A pipe (<(zcat pcfs.json.gz), /dev/stdin) has no extension; standard input is told by its first bytes.
    const orStdin = role === 'read' ? '; or give - and pipe the file into standard input, whose format is told by its first bytes' : '';
    throw new UsageError(`cannot ${role} ${path}: the ${role === 'read' ? 'input' : 'output'} format is chosen by the file extension, which must be .json or .npz (got ${got})${orStdin}`);
  }
  return format;
}

/**
 * The PCF format random-pcfs writes: `format` (--format) when given, else the one `path`'s
 * extension names; `-` (standard output) needs `format`, and a contradicting extension is refused.
 *
 * @throws UsageError saying which flag to add or change.
 */
export function choosePcfOutputFormat(path: string, format: PcfFileFormat | undefined): PcfFileFormat {
  if (format === undefined) {
    if (path === STDIO) throw new UsageError('-o - writes to standard output, which has no extension to choose the format by: add --format json or --format npz');
    return pcfFileFormat(path, 'write');
  }
  const named = FORMATS[extname(path).toLowerCase()];
  if (path !== STDIO && named !== undefined && named !== format) {
    throw new UsageError(`-o ${path} names the .${named} format but --format is ${format}: change the extension or leave out --format`);
  }
  return format;
}

/**
 * Reads the PCFs of a command's input file: `.json` or `.npz`, or for `-` either from `stdin`.
 * The set lies in shared memory, where the CPU cores read it in place (uploadPcfSet): a command
 * holds its input once, not once read and once more for the cores.
 *
 * @throws UsageError for another extension; InputFormatError naming the file (or standard input)
 *   for what is wrong in it.
 */
export async function readPcfInput(path: string, dtype: PcfDtype, stdin: AsyncIterable<Uint8Array>): Promise<PcfSet> {
  if (path === STDIO) return readPcfStdin(stdin, dtype);
  pcfFileFormat(path, 'read');
  return readPcfFile(path, { dtype, shared: true });
}

/** A zip archive starts with "PK", which no JSON document (nor its byte-order mark) does. */
const ZIP_FIRST_BYTE = 0x50;

/**
 * PCFs from standard input, JSON or `.npz` as its first byte says, read as the bytes arrive.
 *
 * @throws InputFormatError naming standard input when it is empty, or as the format's reader.
 */
async function readPcfStdin(stdin: AsyncIterable<Uint8Array>, dtype: PcfDtype): Promise<PcfSet> {
  const iterator = stdin[Symbol.asyncIterator]();
  let first: IteratorResult<Uint8Array>;
  do first = await iterator.next();
  while (first.done !== true && first.value.length === 0);
  if (first.done === true) throw new InputFormatError('is empty: pipe PCFs into pxl (JSON or .npz), or name a file instead of -', STDIN_NAME);
  const head = first.value;
  const chunks = (async function* () {
    try {
      yield head;
      for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) yield next.value;
    } finally {
      // A reader that stops early (invalid input) closes standard input, as a for await over it would.
      await iterator.return?.();
    }
  })();
  if (head[0] === ZIP_FIRST_BYTE) return (await import('../pcf/npz.js')).readPcfNpzStream(chunks, STDIN_NAME, dtype, true);
  return readPcfJsonStream(chunks, dtype, STDIN_NAME);
}

/** A JSON document of PCFs from a byte stream, scanned chunk by chunk as it arrives (a UTF-8 byte-order mark is skipped). */
async function readPcfJsonStream(stream: AsyncIterable<Uint8Array>, dtype: PcfDtype, name: string): Promise<PcfSet> {
  const collector = new PcfJsonCollector(dtype, true);
  const scanner = new JsonScanner(collector);
  const syntax = (err: unknown): never => {
    if (err instanceof SyntaxError) throw new InputFormatError(`invalid JSON: ${err.message}`, name, { cause: err });
    throw err;
  };
  try {
    for await (const chunk of stream) scanner.push(chunk);
    scanner.end();
  } catch (err) {
    syntax(err);
  }
  return collector.finish(name);
}

/**
 * Writes `set` to `path` atomically, as `.json` (`{"pcfs": [...]}`) or `.npz` by its extension or
 * `format`; for `-`, to `stdout` in `format`.
 *
 * @throws (rejects) UsageError for another extension; as `writeFileAtomic` otherwise.
 */
export async function writePcfOutput(path: string, format: PcfFileFormat, set: PcfSet, stdout: CliStream, signal?: AbortSignal): Promise<void> {
  // The .npz writer loads here: the pairwise commands, which only read PCF files, never need it (nor fflate).
  const produce = format === 'json'
    ? (sink: FileSink) => writePcfsJson(set, sink)
    : async (sink: FileSink) => (await import('../pcf/npzWriter.js')).writePcfNpz(set, (chunk) => sink.write(chunk));
  if (path === STDIO) await produce(streamSink(stdout, signal));
  else await writeFileAtomic(path, produce, signal);
}

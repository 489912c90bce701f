/**
 * Output files: the format is chosen by OUTPUT's extension, `.npy` (NumPy, little-endian float64
 * or float32 in C order) or `.json` (nested arrays, one per axis). Both are written through
 * {@link writeFileAtomic}, so a failed or cancelled write leaves no partial file.
 */
import { extname } from 'node:path';
import type { FloatArray } from '../blocks/floatArray.js';
import { InputFormatError } from '../core/errors.js';
import { npyHeader } from '../blocks/npyLayout.js';
import { encodeNpy } from '../pcf/npy.js';
import type { PcfSet } from '../pcf/pcfSet.js';
import { writeFileAtomic, type FileSink } from './atomicFile.js';
import { UsageError } from './terminal.js';

/** A file format the CLI writes. */
export type OutputFormat = 'npy' | 'json';

const EXTENSIONS: Readonly<Record<string, OutputFormat>> = { '.npy': 'npy', '.json': 'json' };

/** A result ready to write: row-major `data` with its logical `shape`. */
export interface OutputArray {
  readonly data: FloatArray;
  readonly shape: readonly number[];
}

/**
 * The format named by `path`'s extension (case-insensitive).
 *
 * @param allowed formats this command writes. Default: all.
 * @throws UsageError naming the path and the supported extensions.
 * @example outputFormatOf('dist.npy') // 'npy'
 */
export function outputFormatOf(path: string, allowed: readonly OutputFormat[] = ['npy', 'json']): OutputFormat {
  const ext = extname(path).toLowerCase();
  const format = EXTENSIONS[ext];
  if (format === undefined || !allowed.includes(format)) {
    const supported = allowed.map((f) => `.${f}`).join(' or ');
    const got = ext === '' ? 'no extension' : `extension '${extname(path)}'`;
    throw new UsageError(`cannot write ${path}: the output format is chosen by the file extension, which must be ${supported} (got ${got})`);
  }
  return format;
}

/**
 * The format of OUTPUT: `format` (--format) when given, else the one `path`'s extension names.
 * `-` (standard output) has no extension, so it needs `format`; a `format` that contradicts a known
 * extension is refused rather than writing, say, JSON text into a file named .npy.
 *
 * @throws UsageError saying which flag to add or change.
 * @example chooseOutputFormat('-', 'npy') // 'npy'
 */
export function chooseOutputFormat(path: string, format: OutputFormat | undefined, allowed: readonly OutputFormat[] = ['npy', 'json']): OutputFormat {
  if (format === undefined) {
    if (path === '-') throw new UsageError(`-o - writes to standard output, which has no extension to choose the format by: add --format ${allowed.join(' or --format ')}`);
    return outputFormatOf(path, allowed);
  }
  const named = EXTENSIONS[extname(path).toLowerCase()];
  if (path !== '-' && named !== undefined && named !== format) {
    throw new UsageError(`-o ${path} names the .${named} format but --format is ${format}: change the extension or leave out --format`);
  }
  return format;
}

/** Text chunks are flushed to the file once they reach this many characters. */
const CHUNK_CHARS = 1 << 20;

/** Breakpoints turned into text at a time: a run stays far below V8's longest string. */
const PAIRS_PER_RUN = 1 << 16;
/** Result entries turned into text at a time, for the same reason. */
const VALUES_PER_RUN = 1 << 16;
/** Bytes of an .npy result handed to the sink at a time: one buffer of the whole file would copy the result, and cannot pass 2^32 bytes. */
export const NPY_PART_BYTES = 1 << 24;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Collects text and hands it to the sink in large chunks. */
class ChunkedText {
  readonly #sink: FileSink;
  #parts: string[] = [];
  #length = 0;

  constructor(sink: FileSink) {
    this.#sink = sink;
  }

  async add(text: string): Promise<void> {
    this.#parts.push(text);
    this.#length += text.length;
    if (this.#length >= CHUNK_CHARS) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.#parts.length === 0) return;
    const chunk = this.#parts.join('');
    this.#parts = [];
    this.#length = 0;
    await this.#sink.write(chunk);
  }
}

/**
 * The shortest decimal that reads back as the same float32: float32 results are stored widened
 * to double, whose own shortest form would show digits float32 does not have (0.1f is
 * 0.10000000149011612 as a double). Six significant digits always lose no float32 that has a
 * shorter exact form, and nine always suffice.
 */
function float32Text(v: number): string {
  for (let digits = 6; digits < 9; digits++) {
    const shorter = Number(v.toPrecision(digits));
    if (Math.fround(shorter) === v) return String(shorter);
  }
  return String(Number(v.toPrecision(9)));
}

function indexOf(offset: number, shape: readonly number[]): string {
  const idx = new Array<number>(shape.length);
  for (let axis = shape.length - 1; axis >= 0; axis--) {
    idx[axis] = offset % shape[axis]!;
    offset = Math.floor(offset / shape[axis]!);
  }
  return `[${idx.join(', ')}]`;
}

/** Writes `array` as nested JSON arrays, one innermost array per line. */
async function writeJsonArray(path: string, array: OutputArray, sink: FileSink): Promise<void> {
  const { data, shape } = array;
  const text = new ChunkedText(sink);
  const format = data instanceof Float32Array ? float32Text : String;
  const rowLength = shape[shape.length - 1] ?? 1;
  // A row (a condensed vector, a cdist against millions) may be longer as text than one string can be.
  const row = async (offset: number): Promise<void> => {
    await text.add('[');
    for (let start = 0; start < rowLength; start += VALUES_PER_RUN) {
      const end = Math.min(rowLength, start + VALUES_PER_RUN);
      const values = new Array<string>(end - start);
      for (let k = start; k < end; k++) {
        const v = data[offset + k]!;
        if (!Number.isFinite(v)) {
          throw new InputFormatError(`the result holds ${v} at index ${indexOf(offset + k, shape)}, which JSON cannot represent; write an .npy file instead`, path);
        }
        values[k - start] = format(v);
      }
      await text.add(`${start > 0 ? ',' : ''}${values.join(',')}`);
    }
    await text.add(']');
  };
  // Emits the sub-array at `axis` starting at element `offset`; `stride` elements per entry.
  const emit = async (axis: number, offset: number): Promise<void> => {
    if (axis === shape.length - 1) return row(offset);
    const extent = shape[axis]!;
    const stride = shape.slice(axis + 1).reduce((a, b) => a * b, 1);
    await text.add('[');
    for (let k = 0; k < extent; k++) {
      if (k > 0) await text.add(',\n');
      await emit(axis + 1, offset + k * stride);
    }
    await text.add(']');
  };
  if (shape.length === 0) await text.add(format(data[0]!));
  else await emit(0, 0);
  await text.add('\n');
  await text.flush();
}

/**
 * Writes a result to `path` in `format`, atomically. `.npy` keeps the shape and the element type;
 * `.json` holds nested arrays following the shape (float32 values printed with the fewest digits
 * that read back exactly).
 *
 * @throws (rejects) InputFormatError when the file cannot be written, or for `.json` when the
 *   result holds Infinity or NaN (JSON has no such numbers); CancelledError when `signal` aborts.
 *   OUTPUT is then unchanged.
 */
export async function writeArray(path: string, format: OutputFormat, array: OutputArray, signal?: AbortSignal): Promise<void> {
  await writeFileAtomic(path, (sink) => writeArrayTo(sink, path, format, array), signal);
}

/**
 * Writes a result to `sink` in `format`, front to back (standard output takes it so).
 *
 * @param name the file (or stream) named in messages.
 */
export async function writeArrayTo(sink: FileSink, name: string, format: OutputFormat, array: OutputArray): Promise<void> {
  if (format === 'json') return writeJsonArray(name, array, sink);
  const { data, shape } = array;
  if (!LITTLE_ENDIAN) return sink.write(encodeNpy(data, shape));
  await sink.write(npyHeader(data instanceof Float64Array ? 'float64' : 'float32', shape));
  for (let start = 0; start < data.byteLength; start += NPY_PART_BYTES) {
    await sink.write(new Uint8Array(data.buffer, data.byteOffset + start, Math.min(NPY_PART_BYTES, data.byteLength - start)));
  }
}

/**
 * Writes PCFs to `sink` as the JSON document the readers take: `{"pcfs": [...]}`, one PCF of
 * `[t, v]` pairs per line.
 *
 * @throws (rejects) as the sink does.
 */
export async function writePcfsJson(set: PcfSet, sink: FileSink): Promise<void> {
  const format = set.dtype === 'float32' ? float32Text : String;
  const text = new ChunkedText(sink);
  await text.add('{"pcfs": [');
  for (let i = 0; i < set.count; i++) {
    await text.add(`${i > 0 ? ',' : ''}\n[`);
    // A PCF may have more breakpoints than one string can hold as text: add it in runs.
    const end = set.offsets[i + 1]!;
    for (let k = set.offsets[i]!; k < end; k += PAIRS_PER_RUN) {
      const pairs: string[] = [];
      for (let b = k; b < Math.min(end, k + PAIRS_PER_RUN); b++) pairs.push(`[${format(set.times[b]!)},${format(set.values[b]!)}]`);
      await text.add(`${k > set.offsets[i]! ? ',' : ''}${pairs.join(',')}`);
    }
    await text.add(']');
  }
  await text.add('\n]}\n');
  await text.flush();
}

/**
 * The journal of a result file being written: one header line saying which computation the file
 * belongs to, then the index of each finished block, one per line. It is flushed as the run goes,
 * always after the data it vouches for, so after a hard kill (or a power loss) every block it lists
 * is on disk, and a resumed run computes only the others.
 */
import { createHash } from 'node:crypto';
import { open, readFile } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { InputFormatError } from '../core/errors.js';

const FORMAT = 'pxl-block-journal-1';

/** What a journal's header records; two runs may share a file only when every field agrees. */
export interface JournalHeader {
  /** SHA-256 (hex) of the inputs' data. */
  readonly inputs: string;
  /** The options that shape the result, readable: operation, exponent, dtype, layout, shape. */
  readonly options: string;
  /** Side of the blocks, so the resumed run cuts the same blocks. */
  readonly blockSide: number;
  /** Blocks in the schedule. */
  readonly blocks: number;
  /** Size of the result file in bytes. */
  readonly bytes: number;
}

/** A journal read back: its header and the blocks it lists as finished. */
export interface JournalContents {
  readonly header: JournalHeader;
  readonly done: ReadonlySet<number>;
}

/**
 * SHA-256 (hex) of byte views and strings, fed in slices with a turn of the event loop between
 * them, so hashing a large input never stalls it.
 *
 * @example await hashParts([set.offsets, set.times, set.values, JSON.stringify(set.shape)])
 */
export async function hashParts(parts: readonly (ArrayBufferView | string)[]): Promise<string> {
  const SLICE = 1 << 24;
  const hash = createHash('sha256');
  for (const part of parts) {
    if (typeof part === 'string') {
      hash.update(`${part.length}:${part}`);
      continue;
    }
    const bytes = new Uint8Array(part.buffer, part.byteOffset, part.byteLength);
    hash.update(`${bytes.length}:`);
    for (let k = 0; k < bytes.length; k += SLICE) {
      hash.update(bytes.subarray(k, k + SLICE));
      if (k + SLICE < bytes.length) await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  return hash.digest('hex');
}

/**
 * What differs between a journal's header and the run that wants to continue it, in words; `undefined`
 * when they match.
 */
export function journalMismatch(found: JournalHeader, expected: Omit<JournalHeader, 'blockSide' | 'blocks'>): string | undefined {
  if (found.options !== expected.options) return `it was written for ${found.options}, but this run is ${expected.options}`;
  if (found.inputs !== expected.inputs) return 'it was written for other input data (the SHA-256 of the inputs differs)';
  if (found.bytes !== expected.bytes) return `it was written for a file of ${found.bytes} bytes, but this run writes ${expected.bytes}`;
  return undefined;
}

/**
 * Reads a journal. A last line without its newline is a write the kill cut short, and is ignored.
 *
 * @throws (rejects) InputFormatError naming the journal when it is not one or its header is damaged.
 */
export async function readJournal(path: string): Promise<JournalContents> {
  const text = await readFile(path, 'utf8');
  const lines = text.split('\n');
  lines.pop(); // the text after the last newline: empty, or a torn write
  const [first, ...rest] = lines;
  let header: JournalHeader | undefined;
  if (first?.startsWith(`${FORMAT} `) === true) {
    try {
      header = JSON.parse(first.slice(FORMAT.length + 1)) as JournalHeader;
    } catch {
      header = undefined;
    }
  }
  if (header === undefined || typeof header.inputs !== 'string' || !Number.isSafeInteger(header.blockSide) || !Number.isSafeInteger(header.blocks)) {
    throw new InputFormatError('is not a pxl block journal (its header line is missing or damaged); run without resuming to start over', path);
  }
  const done = new Set<number>();
  for (const line of rest) {
    const index = Number(line);
    if (line === '' || !Number.isSafeInteger(index) || index < 0 || index >= header.blocks) {
      throw new InputFormatError(`lists block '${line}', which a schedule of ${header.blocks} blocks does not have; run without resuming to start over`, path);
    }
    done.add(index);
  }
  return { header, done };
}

/**
 * An open journal: finished blocks are noted in memory and written out by {@link flush}, after the
 * data file they belong to has been flushed.
 */
export class BlockJournal {
  readonly #handle: FileHandle;
  #pending: number[] = [];
  #flushing: Promise<void> = Promise.resolve();

  private constructor(handle: FileHandle) {
    this.#handle = handle;
  }

  /**
   * Creates a journal at `path` (which must not exist) with `header`, flushed to disk.
   *
   * @throws (rejects) the file system's error.
   */
  static async create(path: string, header: JournalHeader): Promise<BlockJournal> {
    const handle = await open(path, 'wx');
    try {
      await handle.writeFile(`${FORMAT} ${JSON.stringify(header)}\n`);
      await handle.datasync();
    } catch (error) {
      await handle.close();
      throw error;
    }
    return new BlockJournal(handle);
  }

  /** Opens an existing journal to append to it. A torn last line is ended first, so later lines stay whole. */
  static async append(path: string): Promise<BlockJournal> {
    const text = await readFile(path, 'utf8');
    const handle = await open(path, 'a');
    if (!text.endsWith('\n')) await handle.writeFile('\n');
    return new BlockJournal(handle);
  }

  /** Notes a block whose data writes have all completed. */
  add(index: number): void {
    this.#pending.push(index);
  }

  /** Blocks noted since the last flush. */
  get pending(): number {
    return this.#pending.length;
  }

  /**
   * Flushes `data` (the result file), then appends the blocks noted so far and flushes the
   * journal: a block is never listed before its data is on disk. Flushes run one at a time.
   */
  flush(data: FileHandle): Promise<void> {
    this.#flushing = this.#flushing.then(async () => {
      if (this.#pending.length === 0) return;
      const ids = this.#pending;
      this.#pending = [];
      await data.datasync();
      await this.#handle.writeFile(`${ids.join('\n')}\n`);
      await this.#handle.datasync();
    });
    return this.#flushing;
  }

  /** The journal's descriptor: to hold it past a close (removeOpenFile.ts) or an exit. */
  get fd(): number {
    return this.#handle.fd;
  }

  /** Waits for a running flush and closes the journal; errors of a failed flush are not repeated. */
  async close(): Promise<void> {
    await this.#flushing.catch(() => undefined);
    await this.#handle.close();
  }
}

/**
 * Where a JSON document of PCFs can be cut into parts that threads read at once: between two PCFs
 * of the array of PCFs, found by looking at a few bytes near a guessed offset instead of reading
 * everything before it.
 *
 * A PCF (depth 1) ends with `]]` (its last pair, itself) and the next starts with `[[`, so
 * `] ] , [ [` (whitespace allowed between) marks a boundary. The same bytes can occur elsewhere
 * (in a string, inside a malformed PCF, in a nested document): a cut found here is only a guess.
 * The reader checks each one by comparing the state of the part that read up to it with the state
 * the next part assumed (jsonParts.ts), and reads the whole document in one pass when they differ.
 */
import type { JsonResumeForm } from './jsonScanner.js';

/** Bytes looked at first after a guessed offset; the window grows 8 times a try up to {@link MAX_WINDOW}. */
const FIRST_WINDOW = 1 << 16;
/** Past this many bytes without a boundary (one PCF of about 100,000 breakpoints), there is no cut near the guess. */
const MAX_WINDOW = 1 << 22;

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Index of the first byte at or after `i` that is not whitespace (or bytes.length). */
function skipSpace(bytes: Uint8Array, i: number): number {
  while (i < bytes.length && isSpace(bytes[i])) i++;
  return i;
}

/** Index of the first byte at or before `i` that is not whitespace (or -1). */
function skipSpaceBack(bytes: Uint8Array, i: number): number {
  while (i >= 0 && isSpace(bytes[i])) i--;
  return i;
}

/**
 * How a document starting with `head` holds its PCFs, when it is a form the parts can resume in:
 * `'array'` for `[[[t, ...` (the root is the array of PCFs), `'object'` for `{"pcfs": [[[t, ...`;
 * undefined for anything else (nested shapes, other keys first, a short or empty head), which is
 * read in one pass.
 */
export function pcfJsonForm(head: Uint8Array): JsonResumeForm | undefined {
  let i = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  i = skipSpace(head, i);
  let form: JsonResumeForm;
  if (head[i] === 0x5b) {
    form = 'array';
  } else if (head[i] === 0x7b) {
    i = skipSpace(head, i + 1);
    const key = [0x22, 0x70, 0x63, 0x66, 0x73, 0x22]; // "pcfs"
    for (const c of key) if (head[i++] !== c) return undefined;
    i = skipSpace(head, i);
    if (head[i] !== 0x3a) return undefined;
    i = skipSpace(head, i + 1);
    if (head[i] !== 0x5b) return undefined;
    form = 'object';
  } else {
    return undefined;
  }
  // R, the first PCF, its first pair, then a number: PCFs at depth 1.
  i = skipSpace(head, i + 1);
  if (head[i] !== 0x5b) return undefined;
  i = skipSpace(head, i + 1);
  if (head[i] !== 0x5b) return undefined;
  i = skipSpace(head, i + 1);
  const c = head[i];
  return c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39) ? form : undefined;
}

/**
 * The index in `bytes` of the first `[` that opens a PCF after a `] ] , [ [` boundary whose comma
 * is at or after `from`, or -1 when `bytes` holds none (the whole pattern must lie inside `bytes`).
 */
export function findPcfBoundary(bytes: Uint8Array, from: number): number {
  for (let i = bytes.indexOf(0x2c, from); i >= 0; i = bytes.indexOf(0x2c, i + 1)) {
    const a = skipSpaceBack(bytes, i - 1);
    if (a < 1 || bytes[a] !== 0x5d) continue;
    if (bytes[skipSpaceBack(bytes, a - 1)] !== 0x5d) continue;
    const b = skipSpace(bytes, i + 1);
    if (bytes[b] !== 0x5b) continue;
    const c = skipSpace(bytes, b + 1);
    if (c < bytes.length && bytes[c] === 0x5b) return b;
  }
  return -1;
}

/** Reads up to `length` bytes of the file at `position` (fewer at its end). */
export type ReadAt = (position: number, length: number) => Promise<Uint8Array>;

/**
 * Offsets that cut a document of `size` bytes into about `parts` parts of equal size, each at the
 * start of a PCF (see {@link findPcfBoundary}), in increasing order; fewer where no boundary is
 * found near a guess. Reads a small window of bytes per cut.
 */
export async function pcfJsonSplits(readAt: ReadAt, size: number, parts: number): Promise<number[]> {
  const splits: number[] = [];
  for (let k = 1; k < parts; k++) {
    const guess = Math.floor((k * size) / parts);
    // Back up a few bytes so that a boundary right at the guess is seen with what precedes its comma.
    const from = Math.max(splits.at(-1) ?? 0, guess - 16);
    for (let window = FIRST_WINDOW; window <= MAX_WINDOW; window *= 8) {
      const bytes = await readAt(from, window);
      const at = findPcfBoundary(bytes, 0);
      if (at >= 0) {
        const split = from + at;
        if (split > (splits.at(-1) ?? 0) && split < size) splits.push(split);
        break;
      }
      if (from + bytes.length >= size) break;
    }
  }
  return splits;
}

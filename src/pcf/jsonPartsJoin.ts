/**
 * The parts of a JSON document read at once (jsonPart.ts) joined into the one set, or the one
 * error, that reading the document in one pass gives. Three things make that exact:
 *
 * - A cut is trusted only when the part before it ends in the state the next part assumed (their
 *   signatures match): then the next part scans and collects exactly as a one-pass read would.
 *   Parts are checked in order, so a part's findings count only when every cut before it held.
 * - A one-pass read stops at the first syntax error, so the first part that met one decides; its
 *   line and column are restated with the lines of the parts before it.
 * - Otherwise the collector's order of precedence holds across parts (a malformed PCF anywhere
 *   before an invalid one anywhere, each the first in the document), with PCF numbers shifted by
 *   the PCFs of the parts before.
 *
 * What cannot be restated from a part's figures (a cut that did not hold, a later "pcfs" key
 * replacing the array, a problem with the root or the nesting, more breakpoints than a set holds)
 * makes the join give up (undefined), and the caller reads the document in one pass.
 */
import { InputFormatError, PcfError } from '../core/errors.js';
import { joinColumns, type DetachedColumn } from './growableColumn.js';
import type { PcfArray, PcfDtype } from './pcf.js';
import { MAX_SET_BREAKPOINTS, type PcfSet } from './pcfSet.js';
import { resumedSignature, type JsonPart } from './jsonPart.js';
import { JsonSyntaxError, type JsonResumeForm } from './jsonScanner.js';

function release(parts: readonly (JsonPart | undefined)[]): void {
  for (const part of parts) {
    if (part === undefined) continue;
    for (const column of [part.times, part.values, part.offsets]) for (const buffer of column.segments) buffer.resize(0);
  }
}

/** The parts' PCF ends, each part's shifted by the breakpoints before it, after one leading 0. */
function joinOffsets(parts: readonly JsonPart[], count: number, shared: boolean): Uint32Array {
  const out = shared ? new Uint32Array(new SharedArrayBuffer(4 * (count + 1))) : new Uint32Array(count + 1);
  let at = 1;
  let base = 0;
  for (const part of parts) {
    const column: DetachedColumn = part.offsets;
    let left = column.length;
    let skip = 1; // each part's own leading 0
    for (const buffer of column.segments) {
      const local = new Uint32Array(buffer, 0, Math.min(left, buffer.byteLength / 4));
      for (let k = skip; k < local.length; k++) out[at++] = base + local[k]!;
      left -= local.length;
      skip = 0;
      buffer.resize(0);
    }
    base += part.total;
  }
  return out;
}

/**
 * Whether the parts answered so far (`parts[i]` undefined while part i is being read) already
 * decide the outcome: a syntax error or a cut that did not hold (or anything else that hands the
 * file to one pass) after cuts that held. The parts still being read can then be stopped:
 * {@link joinJsonParts} never looks past the deciding part.
 */
export function partsDecided(parts: readonly (JsonPart | undefined)[], form: JsonResumeForm): boolean {
  const expected = resumedSignature(form);
  for (const [i, part] of parts.entries()) {
    if (part === undefined) return false;
    if (part.syntax !== undefined || (i < parts.length - 1 && part.signature !== expected)) return true;
    if ((i > 0 && part.resets > 0) || part.needsWholeRead) return true;
  }
  return false;
}

/**
 * Joins `parts` (in document order, the first read from the document's start, the others resumed
 * in `form`) into the set a one-pass read of the document gives, or undefined where only such a
 * read can tell. A part still undefined (stopped once {@link partsDecided}) is never reached.
 *
 * @throws InputFormatError naming `file`, with the one-pass read's message: the first syntax error
 *   at its line, column and byte; the first malformed PCF; the first invalid PCF (its PcfError as
 *   the cause).
 */
export function joinJsonParts(parts: readonly (JsonPart | undefined)[], form: JsonResumeForm, dtype: PcfDtype, shared: boolean, file: string | undefined): PcfSet | undefined {
  const expected = resumedSignature(form);
  const fail = (message: string, cause?: unknown): never => {
    release(parts);
    throw new InputFormatError(message, file, cause === undefined ? undefined : { cause });
  };
  const giveUp = (): undefined => {
    release(parts);
    return undefined;
  };
  // Line and line start at each part's first byte, carried over from the parts before.
  let line = 1;
  let lineStart = 0;
  let count = 0;
  let total = 0;
  for (const [i, part] of parts.entries()) {
    if (part === undefined) return giveUp();
    const syntax = part.syntax;
    if (syntax !== undefined) {
      // A line start at the part's own start means no newline came before the error in this part.
      const start = syntax.lineStart > part.start ? syntax.lineStart : lineStart;
      const err = new JsonSyntaxError(syntax.reason, syntax.offset, line + syntax.line - 1, start, syntax.detail);
      fail(`invalid JSON: ${err.message}`, err);
    }
    if (i < parts.length - 1 && part.signature !== expected) return giveUp();
    if ((i > 0 && part.resets > 0) || part.needsWholeRead) return giveUp();
    line += part.line - 1;
    if (part.lineStart > part.start) lineStart = part.lineStart;
    count += part.count;
    total += part.total;
  }
  if (total > MAX_SET_BREAKPOINTS) return giveUp();
  const done = parts as readonly JsonPart[]; // every part answered: none was undefined above
  let before = 0;
  for (const part of done) {
    if (part.structure !== undefined) fail(`PCF ${before + part.structure.pcf}${part.structure.rest}`);
    before += part.count;
  }
  before = 0;
  for (const part of done) {
    if (part.invalid !== undefined) {
      const err = new PcfError(before + part.invalid.pcf, part.invalid.reason);
      fail(err.message, err);
    }
    before += part.count;
  }
  const times = joinColumns(dtype, done.map((p) => p.times), shared) as PcfArray;
  const values = joinColumns(dtype, done.map((p) => p.values), shared) as PcfArray;
  const offsets = joinOffsets(done, count, shared);
  return { dtype, count, shape: Object.freeze([count]), times, values, offsets };
}

/**
 * One part of a JSON document of PCFs, read by one thread: the bytes from `start` to `end`, either
 * from the document's start (the first part, read as the one-pass reader reads it) or from a cut
 * between two PCFs (jsonSplit.ts), resumed in the state the document has there when the cut is
 * right. What the part found comes back as figures (counts, the first problem of each kind, the
 * position of a syntax error, the state at its end) that jsonParts.ts restates for the whole
 * document.
 */
import type { PcfDtype } from './pcf.js';
import { JsonScanner, JsonSyntaxError, type JsonResumeForm } from './jsonScanner.js';
import { PcfJsonCollector, type CollectedPart } from './pcfJsonCollector.js';

/** A syntax error's figures ({@link JsonSyntaxError}), lines counted from the part's start. */
export interface PartSyntaxError {
  reason: string;
  offset: number;
  line: number;
  lineStart: number;
  detail: string;
}

/** What one part found. */
export interface JsonPart extends CollectedPart {
  /** Byte offset of the part's first byte in the document. */
  start: number;
  /**
   * The state of the scanner and the collector after the part's last byte (see their
   * `signature()`), for a part that is not the last and met no syntax error; '' otherwise.
   */
  signature: string;
  /** Lines of the part (1 + its newlines) and where the last one starts ({@link JsonScanner.line}). */
  line: number;
  lineStart: number;
  /** The first syntax error, which ended the part; undefined when there was none. */
  syntax: PartSyntaxError | undefined;
}

/**
 * The signature a part resumed in `form` starts with: a part that ends with it (as read from the
 * document's start) hands over to the next one exactly.
 */
export function resumedSignature(form: JsonResumeForm): string {
  const collector = PcfJsonCollector.resume(form, 'float64');
  return `${JsonScanner.resume(collector, form, 0).signature()} | ${collector.signature()}`;
}

/**
 * Reads one part from `chunks` (its bytes in order). `form` is undefined for the first part
 * (`start` 0), else how the part resumes; `last` parts end the document.
 *
 * @throws what the collector throws beyond syntax (OutOfMemoryError for a column that cannot grow).
 */
export function parseJsonPart(chunks: Iterable<Uint8Array>, start: number, form: JsonResumeForm | undefined, last: boolean, dtype: PcfDtype): JsonPart {
  const collector = form === undefined ? new PcfJsonCollector(dtype, false) : PcfJsonCollector.resume(form, dtype);
  const scanner = form === undefined ? new JsonScanner(collector) : JsonScanner.resume(collector, form, start);
  let syntax: PartSyntaxError | undefined;
  try {
    for (const chunk of chunks) scanner.push(chunk);
    if (last) scanner.end();
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    syntax = { reason: err.reason, offset: err.offset, line: err.line, lineStart: err.lineStart, detail: err.detail };
  }
  const signature = last || syntax !== undefined ? '' : `${scanner.signature()} | ${collector.signature()}`;
  return { ...collector.part(), start, signature, line: scanner.line, lineStart: scanner.lineStart, syntax };
}

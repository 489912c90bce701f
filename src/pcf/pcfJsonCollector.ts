import { ArgumentError, InputFormatError, PcfError } from '../core/errors.js';
import { describe } from '../core/validate.js';
import { writeFlatBreakpoints } from './flatBreakpoints.js';
import { GrowableColumn, type DetachedColumn } from './growableColumn.js';
import type { PcfArray, PcfDtype } from './pcf.js';
import { MAX_SET_BREAKPOINTS, type PcfSet } from './pcfSet.js';
import type { JsonEvents, JsonResumeForm } from './jsonScanner.js';

/**
 * Builds a {@link PcfSet} from the events of a JSON document read as a stream, straight into
 * typed columns. It accepts exactly the documents `parsePcfJson` always accepted (an array of
 * PCFs, `{"pcfs": [...]}`, nested arrays giving a shape) and refuses the others with the same
 * messages, in the same order of precedence, as the whole-document path gave:
 *
 * 1. the document root (not an array, or an object without a "pcfs" array);
 * 2. the depth of the nesting, read along the first elements (`flattenPcfTree`);
 * 3. ragged nesting, the first in pre-order;
 * 4. a malformed PCF or breakpoint, the first in document order;
 * 5. more breakpoints than a set holds;
 * 6. an invalid PCF (first time not 0, equal times, ...), the first in PCF order.
 *
 * A stream sees a later problem of a stronger kind only after an earlier weaker one, so each kind
 * keeps its first error and the strongest is reported at the end; once any error is known, no
 * more data is stored.
 */

/**
 * What the collector of one part of a document (read from the middle by
 * {@link PcfJsonCollector.resume}, or from the start up to a split) found: its PCFs numbered from 0
 * within the part, the first problem of each kind it keeps, and its columns, to be joined in
 * document order.
 */
export interface CollectedPart {
  /** PCFs seen (counted whether valid or not). */
  count: number;
  /** Breakpoints seen. */
  total: number;
  /** Times a "pcfs" key replaced the array of PCFs read so far. */
  resets: number;
  /**
   * A problem that only a read of the whole document words right: the root, the nesting, its
   * shape, or more breakpoints than a set holds (the message counts from PCF 0).
   */
  needsWholeRead: boolean;
  /** The first malformed PCF or breakpoint: its number in the part and the message after "PCF <number>". */
  structure: { pcf: number; rest: string } | undefined;
  /** The first invalid PCF before any other problem: its number in the part and the PcfError's reason. */
  invalid: { pcf: number; reason: string } | undefined;
  /** The valid PCFs' breakpoints and their ends (offsets from 0, one per PCF after the leading 0). */
  times: DetachedColumn;
  values: DetachedColumn;
  offsets: DetachedColumn;
}

/** A message whose text may need figures known only at the end (the shape, the root's length). */
type Message = () => string;

const NESTING = 'expected an array of PCFs (each an array of [t, v] pairs)';
const ROOT = 'expected an array of PCFs or an object with a "pcfs" array';

export class PcfJsonCollector implements JsonEvents {
  readonly #dtype: PcfDtype;
  readonly #shared: boolean;
  // Document level: containers open around the next event.
  #level = 0;
  #root: 'array' | 'object' | undefined;
  #rootError: string | undefined;
  #key: string | undefined;
  /** Level of R's own contents (R: the array of PCFs) while R is open; 0 when not inside R. */
  #rLevel = 0;
  /** Inside R, an object being skipped: events are ignored until the level drops below this. */
  #skip = 0;
  /** Depth of the PCFs (leaves) in R; -1 until the first elements show it. */
  #d = -1;
  #shape: number[] = [];
  /** Per depth r in R: elements seen so far in the open array at that depth. */
  #idx: number[] = [0];
  /** Per depth r in R: pre-order number of the open array. */
  #seqAt: number[] = [0];
  #seq = 0;
  #nestingError: Message | undefined;
  #raggedError: Message | undefined;
  #raggedSeq = Infinity;
  /** The first malformed PCF or breakpoint: its number and the message after "PCF <number>". */
  #structureError: { pcf: number; rest: string } | undefined;
  /** Times a later "pcfs" key replaced R. */
  #resets = 0;
  #sizeError: string | undefined;
  #pcfError: PcfError | undefined;
  // The PCF being read.
  #count = 0;
  #total = 0;
  #ts = new Float64Array(64);
  #vs = new Float64Array(64);
  #n = 0;
  #bad = false;
  /** Member summaries of the open pair: undefined while a member is a number. */
  #m0: string | undefined;
  #m1: string | undefined;
  #times: GrowableColumn;
  #values: GrowableColumn;
  #offsets = new GrowableColumn('uint32');
  #outTimes: PcfArray;
  #outValues: PcfArray;

  constructor(dtype: PcfDtype, shared: boolean) {
    this.#dtype = dtype;
    this.#shared = shared;
    this.#times = new GrowableColumn(dtype);
    this.#values = new GrowableColumn(dtype);
    this.#outTimes = dtype === 'float32' ? new Float32Array(64) : new Float64Array(64);
    this.#outValues = dtype === 'float32' ? new Float32Array(64) : new Float64Array(64);
    this.#offsets.push(0);
  }

  /**
   * A collector for a document read from the middle, inside R whose elements are PCFs (depth 1),
   * where JsonScanner.resume(…, form, …) starts: R is the root (`'array'`) or the root object's
   * "pcfs" (`'object'`). PCFs are numbered from 0 there; {@link part} hands the findings back.
   */
  static resume(form: JsonResumeForm, dtype: PcfDtype): PcfJsonCollector {
    const collector = new PcfJsonCollector(dtype, false);
    collector.#root = form;
    collector.#level = collector.#rLevel = form === 'array' ? 1 : 2;
    if (form === 'object') collector.#key = 'pcfs';
    collector.#d = 1;
    return collector;
  }

  /**
   * Everything but the counts and the first problems that decides how the collector takes the
   * events to come, as text: a collector that read a document up to a point between two PCFs has
   * the signature of a {@link resume}d one exactly when the resumed one goes on as it would.
   */
  signature(): string {
    const errors = `${this.#rootError !== undefined} ${this.#nestingError !== undefined} ${this.#raggedError !== undefined}`;
    return `${this.#level} ${this.#root} ${this.#rLevel} ${this.#skip} ${this.#d} ${JSON.stringify(this.#key ?? null)} ${this.#shape.length} ${this.#lastNumber} ${errors}`;
  }

  /** The findings so far, handing over the columns (the collector is spent). */
  part(): CollectedPart {
    const pcf = this.#pcfError;
    return {
      count: this.#count,
      total: this.#total,
      resets: this.#resets,
      needsWholeRead: this.#rootError !== undefined || this.#nestingError !== undefined || this.#raggedError !== undefined || this.#sizeError !== undefined,
      structure: this.#structureError,
      // PcfError's message is "PCF <index>: <reason>"; the reason is restated with the document's number.
      invalid: pcf === undefined ? undefined : { pcf: pcf.pcfIndex, reason: pcf.message.slice(`PCF ${pcf.pcfIndex}: `.length) },
      times: this.#times.detach(),
      values: this.#values.detach(),
      offsets: this.#offsets.detach(),
    };
  }

  /** Forgets R: a later "pcfs" key replaces an earlier one, as in `JSON.parse`. */
  #reset(): void {
    this.#d = -1;
    this.#shape = [];
    this.#idx = [0];
    this.#seqAt = [0];
    this.#seq = 0;
    this.#nestingError = this.#raggedError = undefined;
    this.#raggedSeq = Infinity;
    this.#structureError = this.#sizeError = undefined;
    this.#pcfError = undefined;
    this.#count = this.#total = 0;
    this.#times.discard();
    this.#values.discard();
    this.#offsets.discard();
    this.#offsets.push(0);
    this.#rootError = undefined;
    this.#resets++;
  }

  #failed(): boolean {
    return this.#nestingError !== undefined || this.#raggedError !== undefined || this.#structureError !== undefined || this.#sizeError !== undefined || this.#pcfError !== undefined;
  }

  /** A value starts at the current level; `summary` is what describe() says of it. */
  #start(kind: 'array' | 'object' | 'scalar', summary: string): void {
    if (this.#rLevel === 0 || this.#skip > 0) {
      this.#outside(kind, summary);
      return;
    }
    const r = this.#level - this.#rLevel + 1;
    this.#idx[r - 1]!++;
    if (kind === 'array') this.#idx[r] = 0;
    if (this.#d < 0) this.#findDepth(kind, r);
    const d = this.#d;
    if (d < 0) {
      // The depth could not be found: only R's length matters now (for the message).
      if (kind === 'object') this.#skip = this.#level + 1;
      return;
    }
    if (r < d) {
      const seq = ++this.#seq;
      if (kind === 'array') {
        this.#seqAt[r] = seq;
      } else {
        this.#ragged(seq, r, summary);
      }
    } else if (r === d) {
      const k = this.#count++;
      if (kind !== 'array') this.#structure(k, `: expected an array of [t, v] pairs, got ${summary}`);
      this.#n = 0;
      this.#bad = kind !== 'array';
    } else if (r === d + 1) {
      if (kind !== 'array') {
        this.#structure(this.#count - 1, `, breakpoint ${this.#idx[r - 1]! - 1}: expected a [t, v] pair of numbers, got ${summary}`);
        this.#bad = true;
      }
      this.#m0 = this.#m1 = undefined;
    } else if (r === d + 2 && !this.#lastNumber) {
      const member = this.#idx[r - 1]!;
      if (member === 1) this.#m0 = summary;
      else if (member === 2) this.#m1 = summary;
    }
    if (kind === 'object') this.#skip = this.#level + 1;
  }

  #outside(kind: 'array' | 'object' | 'scalar', summary: string): void {
    if (this.#skip > 0) return;
    if (this.#level === 0) {
      if (kind === 'array') {
        this.#root = 'array';
        this.#rLevel = 1;
      } else if (kind === 'object') {
        this.#root = 'object';
        this.#rootError = `${ROOT}, got an object whose "pcfs" is undefined`;
      } else {
        this.#rootError = `${ROOT}, got ${summary}`;
      }
    } else if (this.#level === 1 && this.#root === 'object' && this.#key === 'pcfs') {
      this.#reset();
      if (kind === 'array') this.#rLevel = 2;
      else this.#rootError = `${ROOT}, got an object whose "pcfs" is ${summary}`;
    }
    if (kind === 'object' && this.#level > 0) this.#skip = this.#level + 1;
  }

  /**
   * The first value that is not an opening '[' along R's first elements sets the depth. When that
   * value shows the nesting is wrong, the depth stays unknown and later values must not change the
   * verdict: the whole-document reader judges by the first elements only.
   */
  #findDepth(kind: 'array' | 'object' | 'scalar' | 'close', r: number, isNumber = this.#lastNumber): void {
    if (kind === 'array' || this.#nestingError !== undefined) return;
    const k = r; // arrays opened along the chain, R included
    if (kind === 'close') {
      this.#d = k === 1 ? 1 : k - 1;
    } else if (kind === 'scalar' && isNumber) {
      if (k === 1) this.#nestingError = () => `${NESTING}, got an array of length ${this.#idx[0]}`;
      else if (k === 2) this.#nestingError = () => `${NESTING}, got a single PCF; wrap it in [ ]`;
      else this.#d = k - 2;
    } else if (k === 1) {
      this.#nestingError = () => `${NESTING}, got an array of length ${this.#idx[0]}`;
    } else {
      this.#d = k - 1;
    }
    if (this.#d >= 0) {
      // The chain's arrays are the first of their depths: number them in pre-order.
      for (let j = 1; j < Math.min(k, this.#d); j++) this.#seqAt[j] = ++this.#seq;
      this.#n = 0;
      this.#bad = false;
      if (k - 1 >= this.#d) this.#count = 1;
      this.#m0 = this.#m1 = undefined;
    }
  }

  #lastNumber = false;

  #ragged(seq: number, r: number, got: string): void {
    if (seq >= this.#raggedSeq) return;
    this.#raggedSeq = seq;
    const path = this.#idx.slice(0, r).map((i) => `[${i - 1}]`).join('');
    this.#raggedError = () => `expected an array of ${this.#shape[r]} entries at ${path}, got ${got} (the nesting must be rectangular, shape [${this.#shape.join(', ')}])`;
  }

  #structure(pcf: number, rest: string): void {
    this.#structureError ??= { pcf, rest };
  }

  openArray(): void {
    this.#start('array', '');
    this.#level++;
  }

  openObject(): void {
    this.#start('object', 'an object');
    this.#level++;
  }

  closeObject(): void {
    this.#level--;
    if (this.#skip > this.#level) this.#skip = 0;
  }

  key(text: string): void {
    if (this.#level === 1 && this.#skip === 0) this.#key = text;
  }

  string(text: string): void {
    this.#lastNumber = false;
    this.#start('scalar', describe(text));
  }

  literal(value: boolean | null): void {
    this.#lastNumber = false;
    this.#start('scalar', String(value));
  }

  /** Whether the next value is a member of a [t, v] pair. */
  #inPair(): boolean {
    return this.#d >= 0 && this.#skip === 0 && this.#rLevel > 0 && this.#level - this.#rLevel === this.#d + 1;
  }

  number(value: number): void {
    // The hot path: a member of a [t, v] pair.
    let member: number;
    if (this.#inPair()) {
      member = ++this.#idx[this.#d + 1]!;
    } else {
      this.#lastNumber = true;
      this.#start('scalar', String(value));
      this.#lastNumber = false;
      // The first number of the document may be what showed the depth: then it is a member.
      if (!this.#inPair()) return;
      member = this.#idx[this.#d + 1]!;
    }
    if (member === 1) this.#ts[this.#n] = value;
    else if (member === 2) this.#vs[this.#n] = value;
  }

  closeArray(): void {
    this.#level--;
    if (this.#skip > 0 || this.#rLevel === 0) return;
    const r = this.#level - this.#rLevel + 1;
    if (r === 0) {
      this.#rLevel = 0;
      if (this.#d >= 0) this.#shape[0] = this.#idx[0]!;
      return;
    }
    if (this.#d < 0 && this.#nestingError === undefined) this.#findDepth('close', r + 1);
    const d = this.#d;
    if (d < 0) return;
    const length = this.#idx[r]!;
    if (r < d) {
      if (this.#shape[r] === undefined) this.#shape[r] = length;
      else if (length !== this.#shape[r]) this.#ragged(this.#seqAt[r]!, r, `an array of length ${length}`);
    } else if (r === d) {
      this.#closePcf(length);
    } else if (r === d + 1) {
      this.#closePair(length);
    } else if (r === d + 2) {
      const member = this.#idx[r - 1]!;
      if (member === 1) this.#m0 = `an array of length ${length}`;
      else if (member === 2) this.#m1 = `an array of length ${length}`;
    }
  }

  #closePair(length: number): void {
    const b = this.#idx[this.#d]! - 1;
    if (length !== 2 || this.#m0 !== undefined || this.#m1 !== undefined) {
      const got = length !== 2 ? `an array of length ${length}` : (this.#m0 ?? this.#m1)!;
      this.#structure(this.#count - 1, `, breakpoint ${b}: expected a [t, v] pair of numbers, got ${got}`);
      this.#bad = true;
      return;
    }
    if (++this.#n === this.#ts.length) {
      const ts = new Float64Array(this.#n * 2);
      ts.set(this.#ts);
      this.#ts = ts;
      const vs = new Float64Array(this.#n * 2);
      vs.set(this.#vs);
      this.#vs = vs;
    }
  }

  #closePcf(length: number): void {
    const k = this.#count - 1;
    this.#total += length;
    if (this.#total > MAX_SET_BREAKPOINTS && this.#sizeError === undefined) {
      this.#sizeError = `a PCF set holds at most ${MAX_SET_BREAKPOINTS} breakpoints; PCFs 0..${k} already have ${this.#total}`;
    }
    if (this.#bad || this.#failed()) return;
    const n = this.#n;
    // Checked and ordered into plain staging arrays, then copied into the columns in one block
    // copy each: element stores into the columns' resizable buffers are several times slower.
    if (this.#outTimes.length < n) {
      this.#outTimes = this.#dtype === 'float32' ? new Float32Array(this.#ts.length) : new Float64Array(this.#ts.length);
      this.#outValues = this.#dtype === 'float32' ? new Float32Array(this.#ts.length) : new Float64Array(this.#ts.length);
    }
    try {
      writeFlatBreakpoints(this.#ts, this.#vs, n, k, this.#outTimes, this.#outValues, 0);
    } catch (err) {
      if (!(err instanceof PcfError)) throw err;
      this.#pcfError = err;
      return;
    }
    this.#times.append(this.#outTimes, n);
    this.#values.append(this.#outValues, n);
    this.#offsets.push(this.#total);
  }

  /**
   * The set, once the scanner has reached the end of a well-formed document.
   *
   * @throws InputFormatError (naming `file`) or ArgumentError, as described above.
   */
  finish(file: string | undefined): PcfSet {
    const fail = (message: string, cause?: unknown): never => {
      this.#times.discard();
      this.#values.discard();
      this.#offsets.discard();
      throw new InputFormatError(message, file, cause === undefined ? undefined : { cause });
    };
    if (this.#rootError !== undefined) fail(this.#rootError);
    if (this.#nestingError !== undefined) fail(this.#nestingError());
    if (this.#raggedError !== undefined) fail(this.#raggedError());
    if (this.#structureError !== undefined) fail(`PCF ${this.#structureError.pcf}${this.#structureError.rest}`);
    if (this.#sizeError !== undefined) {
      this.#times.discard();
      this.#values.discard();
      throw new ArgumentError(this.#sizeError);
    }
    if (this.#pcfError !== undefined) fail(this.#pcfError.message, this.#pcfError);
    const d = Math.max(this.#d, 1);
    const shape = this.#d < 0 ? [0] : this.#shape.slice(0, d);
    const count = this.#count;
    return {
      dtype: this.#dtype,
      count,
      shape: Object.freeze(shape),
      times: this.#times.take(this.#shared) as PcfArray,
      values: this.#values.take(this.#shared) as PcfArray,
      offsets: this.#offsets.take(this.#shared) as Uint32Array,
    };
  }
}

/**
 * A streaming JSON tokenizer over UTF-8 bytes: chunks go in as they are read, events come out, and
 * no string ever holds the whole document (V8 caps a string near 512 MiB). It checks the full JSON
 * grammar (RFC 8259, as `JSON.parse` does) and reports the first error with its line, column and
 * byte offset.
 *
 * Why not a general streaming parser from npm: PCF files are almost only numbers in nested arrays,
 * and a scanner that turns digits straight into doubles and hands them to one monomorphic consumer
 * is several times faster (bench/input.mjs measures both).
 */

import { decimalToDouble, MAX_SIGNIFICAND_DIGITS } from './decimalToDouble.js';

/** What the scanner reports. Calls arrive in document order. */
export interface JsonEvents {
  openArray(): void;
  closeArray(): void;
  openObject(): void;
  closeObject(): void;
  /** An object key, decoded. */
  key(text: string): void;
  /** A number, converted exactly as `JSON.parse` converts it. */
  number(value: number): void;
  /** A string value, decoded. */
  string(text: string): void;
  /** `true`, `false` or `null`. */
  literal(value: boolean | null): void;
}

// What the scanner expects next.
const VALUE = 0; // a value (or ']' right after '[')
const AFTER = 1; // ',' or the end of the enclosing container
const KEY = 2; // a key string (or '}' right after '{')
const COLON = 3;
const DONE = 4; // the root value is complete: only whitespace may follow

const ARRAY = 1;
const OBJECT = 2;


/** What to change for NaN or Infinity, which other tools write into JSON. */
const NOT_FINITE = '; NaN and Infinity are not JSON numbers: every time and value must be a finite number';

/** Bytes of a new chunk joined to a token cut at the end of the previous one: a number fits. */
const CARRY_PIECE = 64;

/** Where a part of a document read from its middle starts: the root array, or `{"pcfs": [`. */
export type JsonResumeForm = 'array' | 'object';

/**
 * A syntax error with where it happened in figures as well as words, so a document scanned in
 * parts can restate a part's error with the line numbers of the whole document.
 */
export class JsonSyntaxError extends SyntaxError {
  /** The message without its position: "Unexpected token 'x', expected a value". */
  readonly reason: string;
  /** Byte offset in the document. */
  readonly offset: number;
  /** Line of the offset (1-based), counted from where the scanner started. */
  readonly line: number;
  /** Byte offset where that line starts (the scanner's start when no newline came before). */
  readonly lineStart: number;
  /** Text after the position (the decoder's words for a bad escape), or ''. */
  readonly detail: string;
  constructor(reason: string, offset: number, line: number, lineStart: number, detail = '') {
    super(`${reason} at line ${line} column ${offset - lineStart + 1} (byte ${offset})${detail}`);
    this.reason = reason;
    this.offset = offset;
    this.line = line;
    this.lineStart = lineStart;
    this.detail = detail;
  }
}

const utf8 = new TextDecoder('utf-8');
const latin1 = new TextDecoder('latin1');

export class JsonScanner {
  readonly #events: JsonEvents;
  #state = VALUE;
  /** Right after '[' or '{': a closing bracket is allowed. */
  #first = true;
  #stack = new Uint8Array(64);
  #depth = 0;
  /** Bytes of a token cut by the end of the previous chunk. */
  #carry: Uint8Array | undefined;
  /** Offset in the document of the current chunk's first byte. */
  #base = 0;
  #line = 1;
  #lineStart = 0;
  #started = false;
  // The chunk decoded as Latin-1 (one character per byte), made only when a number needs it.
  #text: string | undefined;
  #textOf: Uint8Array | undefined;
  /** Value of the number the last readNumber call parsed. */
  #number = 0;

  constructor(events: JsonEvents) {
    this.#events = events;
  }

  /**
   * A scanner for the rest of a document from byte `offset`, where the next value is an element
   * of the array of PCFs after a ',' (`form`: that array is the root, or the value of a root
   * object's "pcfs"). Lines are counted from 1 at `offset`; {@link JsonSyntaxError} carries the
   * figures to restate them. Whether the document really is in that state there is for the caller
   * to check: compare the {@link signature} of a scanner that read up to `offset` with this one's.
   */
  static resume(events: JsonEvents, form: JsonResumeForm, offset: number): JsonScanner {
    const scanner = new JsonScanner(events);
    if (form === 'object') scanner.#push(OBJECT);
    scanner.#push(ARRAY);
    scanner.#first = false;
    scanner.#started = true;
    scanner.#base = offset;
    scanner.#lineStart = offset;
    return scanner;
  }

  /**
   * Everything that decides how the scanner goes on from here (what it expects, the open
   * containers, a token cut at the end of the last chunk), as text: two scanners with the same
   * signature scan the same bytes the same way. Line figures and the offset are left out.
   */
  signature(): string {
    return `${this.#state} ${this.#first} ${this.#stack.subarray(0, this.#depth).join('')} ${this.#carry?.length ?? 0} ${this.#started}`;
  }

  /** Lines seen: 1 + the newlines since the scanner started. */
  get line(): number {
    return this.#line;
  }

  /** Byte offset in the document where the current line starts (where the scanner started, before any newline). */
  get lineStart(): number {
    return this.#lineStart;
  }

  /**
   * Scans the next chunk of the document.
   *
   * @throws JsonSyntaxError at the first byte that breaks the grammar.
   */
  push(chunk: Uint8Array): void {
    let buf = chunk;
    // The caller may refill the same buffer for the next chunk: never trust a cached decoding.
    this.#textOf = undefined;
    const carry = this.#carry;
    if (carry !== undefined && this.#started && chunk.length > CARRY_PIECE) {
      // Finish the token cut by the previous chunk's end on a small joined piece, then scan the
      // chunk in place: joining whole chunks would allocate and copy one per read.
      const joined = new Uint8Array(carry.length + CARRY_PIECE);
      joined.set(carry);
      joined.set(chunk.subarray(0, CARRY_PIECE), carry.length);
      this.#base -= carry.length;
      const stop = this.#scan(joined, 0, false);
      this.#base += carry.length;
      // The carry holds just the cut token: scanning got past it only if it ended, and then it
      // ended in the chunk (stop >= carry.length). Otherwise (a long string) join as below.
      if (stop > 0) {
        this.#carry = undefined;
        const end = this.#scan(chunk, stop - carry.length, false);
        if (end < chunk.length) this.#carry = chunk.slice(end);
        this.#base += chunk.length;
        return;
      }
    }
    if (this.#carry !== undefined) {
      buf = new Uint8Array(this.#carry.length + chunk.length);
      buf.set(this.#carry);
      buf.set(chunk, this.#carry.length);
      this.#base -= this.#carry.length;
      this.#carry = undefined;
    }
    let i = 0;
    if (!this.#started) {
      if (buf.length < 3 && buf.length > 0 && buf[0] === 0xef) {
        this.#carry = buf.slice();
        return;
      }
      this.#started = buf.length > 0;
      // A UTF-8 byte-order mark is not JSON, but editors on Windows write one.
      if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) i = 3;
    }
    const stop = this.#scan(buf, i, false);
    if (stop < buf.length) this.#carry = buf.slice(stop);
    this.#base += buf.length;
  }

  /**
   * Ends the document.
   *
   * @throws JsonSyntaxError when the document is incomplete or a token at its end is malformed.
   */
  end(): void {
    const rest = this.#carry ?? new Uint8Array(0);
    this.#carry = undefined;
    this.#textOf = undefined;
    this.#base -= rest.length;
    this.#scan(rest, 0, true);
    this.#base += rest.length;
    // At the document's end: its length is the position (the carry is counted in #base again).
    if (this.#state !== DONE) throw this.#error('Unexpected end of JSON input', 0);
  }

  /** The error `reason` at `buf[i]`. */
  #error(reason: string, i: number, detail?: string): JsonSyntaxError {
    return new JsonSyntaxError(reason, this.#base + i, this.#line, this.#lineStart, detail);
  }

  #fail(buf: Uint8Array, i: number, expected: string, hint = ''): never {
    const c = buf[i]!;
    const token = c >= 0x20 && c < 0x7f ? `'${String.fromCharCode(c)}'` : `byte 0x${c.toString(16).padStart(2, '0')}`;
    throw this.#error(`Unexpected token ${token}, expected ${expected}`, i, hint);
  }

  /** What to change for the mistakes JSON written by hand or by other tools makes most. */
  #hint(c: number, i: number): string {
    if (c === 0x4e || c === 0x49) return NOT_FINITE;
    if ((c === 0x5d || c === 0x7d) && !this.#first && this.#depth > 0) return `; JSON allows no comma before '${String.fromCharCode(c)}': remove it`;
    if (c === 0x50 && this.#base + i === 0) return '; this is a zip archive, not JSON: an .npz file must be named FILE.npz';
    return '';
  }

  #push(kind: number): void {
    if (this.#depth === this.#stack.length) {
      const bigger = new Uint8Array(this.#stack.length * 2);
      bigger.set(this.#stack);
      this.#stack = bigger;
    }
    this.#stack[this.#depth++] = kind;
  }

  /** A value ended: what comes next depends on the container around it. */
  #afterValue(): void {
    this.#state = this.#depth === 0 ? DONE : AFTER;
  }

  /** Scans from `i`; returns where a token cut by the chunk's end starts (or buf.length). */
  #scan(buf: Uint8Array, i: number, final: boolean): number {
    const n = buf.length;
    const events = this.#events;
    while (i < n) {
      const c = buf[i]!;
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
        if (c === 0x0a) {
          this.#line++;
          this.#lineStart = this.#base + i + 1;
        }
        i++;
        continue;
      }
      const state = this.#state;
      if (state === VALUE) {
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
          const end = this.#readNumber(buf, i, final);
          if (end < 0) return i;
          events.number(this.#number);
          i = end;
          this.#afterValue();
        } else if (c === 0x5b) {
          this.#push(ARRAY);
          events.openArray();
          this.#first = true;
          i++;
        } else if (c === 0x5d && this.#first && this.#depth > 0 && this.#stack[this.#depth - 1] === ARRAY) {
          this.#depth--;
          events.closeArray();
          i++;
          this.#afterValue();
        } else if (c === 0x7b) {
          this.#push(OBJECT);
          events.openObject();
          this.#state = KEY;
          this.#first = true;
          i++;
        } else if (c === 0x22) {
          const end = this.#readString(buf, i, final);
          if (end < 0) return i;
          events.string(this.#string);
          i = end;
          this.#afterValue();
        } else if (c === 0x74 || c === 0x66 || c === 0x6e) {
          const word = c === 0x74 ? 'true' : c === 0x66 ? 'false' : 'null';
          if (n - i < word.length && !final) return i;
          for (let k = 1; k < word.length; k++) if (buf[i + k] !== word.charCodeAt(k)) this.#fail(buf, i + k < n ? i + k : i, `'${word}'`);
          events.literal(c === 0x74 ? true : c === 0x66 ? false : null);
          i += word.length;
          this.#afterValue();
        } else {
          this.#fail(buf, i, this.#first && this.#depth > 0 ? 'a value or \']\'' : 'a value', c === 0x7d ? '' : this.#hint(c, i));
        }
      } else if (state === AFTER) {
        const top = this.#stack[this.#depth - 1];
        if (c === 0x2c) {
          this.#state = top === ARRAY ? VALUE : KEY;
          this.#first = false;
          i++;
        } else if (c === 0x5d && top === ARRAY) {
          this.#depth--;
          events.closeArray();
          i++;
          this.#afterValue();
        } else if (c === 0x7d && top === OBJECT) {
          this.#depth--;
          events.closeObject();
          i++;
          this.#afterValue();
        } else {
          this.#fail(buf, i, top === ARRAY ? "',' or ']'" : "',' or '}'");
        }
      } else if (state === KEY) {
        if (c === 0x22) {
          const end = this.#readString(buf, i, final);
          if (end < 0) return i;
          events.key(this.#string);
          i = end;
          this.#state = COLON;
        } else if (c === 0x7d && this.#first) {
          this.#depth--;
          events.closeObject();
          i++;
          this.#afterValue();
        } else {
          this.#fail(buf, i, this.#first ? "a string key or '}'" : 'a string key', c === 0x7d ? this.#hint(c, i) : '');
        }
      } else if (state === COLON) {
        if (c !== 0x3a) this.#fail(buf, i, "':'");
        this.#state = VALUE;
        this.#first = false;
        i++;
      } else {
        this.#fail(buf, i, 'the end of the document');
      }
    }
    return n;
  }

  #string = '';

  /** Reads the string starting at the quote `buf[i]`; returns the index after it, or -1 if cut. */
  #readString(buf: Uint8Array, i: number, final: boolean): number {
    const n = buf.length;
    let j = i + 1;
    let escaped = false;
    for (;;) {
      if (j >= n) {
        if (!final) return -1;
        throw this.#error('Unterminated string in JSON', n);
      }
      const c = buf[j]!;
      if (c === 0x22) break;
      if (c < 0x20) throw this.#error('Bad control character in string literal', j);
      if (c === 0x5c) {
        escaped = true;
        j++;
      }
      j++;
    }
    const raw = utf8.decode(buf.subarray(i, j + 1));
    if (!escaped) {
      this.#string = raw.slice(1, -1);
    } else {
      try {
        this.#string = JSON.parse(raw) as string;
      } catch (err) {
        throw this.#error('Bad escape in string literal', i, `: ${(err as Error).message}`);
      }
    }
    return j + 1;
  }

  /**
   * Reads the number starting at `buf[i]` into #number; returns the index after it, or -1 when
   * the chunk ends inside it. The significant digits are gathered as two integers, the first 9
   * in `high` and the next 9 in `low` (each stays an int32, the cheapest arithmetic V8 has), and
   * decimalToDouble rounds them correctly; a 19th digit is folded into `low` as a double, and only
   * a significand of 20 or more digits goes through `Number` on the text.
   */
  #readNumber(buf: Uint8Array, i: number, final: boolean): number {
    const n = buf.length;
    let j = i;
    const negative = buf[j] === 0x2d;
    if (negative) j++;
    let high = 0;
    let low = 0;
    /** Significant digits seen (leading zeros are not). */
    let digits = 0;
    let exponent = 0;
    let c = j < n ? buf[j]! : -1;
    // A digit's value, tested with one unsigned comparison in the hot loops.
    let d = 0;
    if (c === 0x30) {
      j++;
    } else if (c >= 0x31 && c <= 0x39) {
      // Up to 9 digits into high, 9 more into low; digits past the 18th are counted and handled below.
      let stop = Math.min(n, j + 9);
      let from = j;
      while (j < stop && ((d = buf[j]! - 0x30) >>> 0) < 10) {
        high = high * 10 + d;
        j++;
      }
      digits = j - from;
      if (digits === 9) {
        stop = Math.min(n, j + 9);
        from = j;
        while (j < stop && ((d = buf[j]! - 0x30) >>> 0) < 10) {
          low = low * 10 + d;
          j++;
        }
        digits += j - from;
        if (digits === 18) {
          from = j;
          while (j < n && (c = buf[j]!) >= 0x30 && c <= 0x39) {
            if (j === from) low = low * 10 + (c - 0x30);
            j++;
          }
          // The integer part may go on past the 19 digits kept: each one left out is a power of ten.
          digits += j - from;
          if (digits > MAX_SIGNIFICAND_DIGITS) exponent = digits - MAX_SIGNIFICAND_DIGITS;
        }
      }
    } else if (j < n) {
      this.#fail(buf, j, 'a digit', buf[j] === 0x49 ? NOT_FINITE : '');
    }
    if (j < n && buf[j] === 0x2e) {
      j++;
      const start = j;
      const before = digits;
      // Leading zeros of a fraction are not significant (but each divides by ten).
      if (digits === 0) while (j < n && buf[j] === 0x30) j++;
      const zeros = j - start;
      let from = j;
      if (digits < 9) {
        const stop = Math.min(n, j + 9 - digits);
        while (j < stop && ((d = buf[j]! - 0x30) >>> 0) < 10) {
          high = high * 10 + d;
          j++;
        }
        digits += j - from;
        from = j;
      }
      if (digits >= 9 && digits < 18) {
        const stop = Math.min(n, j + 18 - digits);
        while (j < stop && ((d = buf[j]! - 0x30) >>> 0) < 10) {
          low = low * 10 + d;
          j++;
        }
        digits += j - from;
        from = j;
      }
      if (digits >= 18) {
        while (j < n && (c = buf[j]!) >= 0x30 && c <= 0x39) {
          if (digits === 18 && j === from) low = low * 10 + (c - 0x30);
          j++;
        }
        digits += j - from;
      }
      // Each fraction digit kept divides by ten; digits past the 19th are left out.
      exponent -= zeros + Math.min(digits, MAX_SIGNIFICAND_DIGITS) - Math.min(before, MAX_SIGNIFICAND_DIGITS);
      if (j === start && j < n) this.#fail(buf, j, 'a digit after the decimal point');
    }
    if (j < n && (buf[j] === 0x65 || buf[j] === 0x45)) {
      j++;
      let sign = 1;
      if (j < n && (buf[j] === 0x2b || buf[j] === 0x2d)) {
        if (buf[j] === 0x2d) sign = -1;
        j++;
      }
      const start = j;
      let e = 0;
      while (j < n && (c = buf[j]!) >= 0x30 && c <= 0x39) {
        if (e < 1e8) e = e * 10 + (c - 0x30);
        j++;
      }
      if (j === start && j < n) this.#fail(buf, j, 'a digit in the exponent');
      exponent += sign * e;
    }
    if (j === n && !final) return -1;
    // At the end of the document a number cut after '-', '.', 'e' or a sign is incomplete.
    const last = buf[j - 1];
    if (last === 0x2d || last === 0x2b || last === 0x2e || last === 0x65 || last === 0x45) {
      throw this.#error('Unexpected end of JSON input', j);
    }
    // One call site, and no other value merged into the result: V8 inlines the conversion here
    // and keeps the double unboxed all the way to the field (a merge with a constant or with
    // `Number`'s result would box every number).
    const value = decimalToDouble(high, low, digits > 9 ? Math.min(digits, MAX_SIGNIFICAND_DIGITS) - 9 : 0, exponent);
    if (digits <= MAX_SIGNIFICAND_DIGITS && value === value) {
      this.#number = negative ? -value : value;
    } else {
      this.#numberFromText(buf, i, j);
    }
    return j;
  }

  /** The number `buf[i .. j - 1]` converted by `Number`, into #number: for the rare significand of 20 digits or more. */
  #numberFromText(buf: Uint8Array, i: number, j: number): void {
    if (this.#textOf !== buf) {
      this.#text = latin1.decode(buf);
      this.#textOf = buf;
    }
    this.#number = Number(this.#text!.substring(i, j));
  }
}

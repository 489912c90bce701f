import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { decimalToDouble, MAX_SIGNIFICAND_DIGITS } from '../src/pcf/decimalToDouble.js';
import { LARGEST_Q, powersOfFive, SMALLEST_Q } from '../src/pcf/powersOfFive.js';
// The browser bundle's twin builds the table with BigInt, as the method defines it.
import { powersOfFive as powersOfFiveByBigInt } from '../src/pcf/powersOfFive.browser.js';
import { JsonScanner, type JsonEvents } from '../src/pcf/jsonScanner.js';

/**
 * The reference for every case is `Number(text)` (which is what `JSON.parse` gives for a JSON
 * number): the results must be the same double, bit for bit, -0 included (`Object.is`).
 */

/** The numbers a JsonScanner reports for `[t0, t1, ...]`, the bytes fed in pieces cut at `cuts`. */
function scanNumbers(texts: readonly string[], cuts: readonly number[] = []): number[] {
  const numbers: number[] = [];
  const events: JsonEvents = {
    openArray() {},
    closeArray() {},
    openObject() {},
    closeObject() {},
    key() {},
    string() {},
    literal() {},
    number(value) {
      numbers.push(value);
    },
  };
  const bytes = new TextEncoder().encode(`[${texts.join(',')}]`);
  const scanner = new JsonScanner(events);
  let from = 0;
  for (const cut of [...cuts].map((c) => Math.floor(c * bytes.length)).sort((a, b) => a - b)) {
    scanner.push(bytes.subarray(from, Math.max(from, cut)));
    from = Math.max(from, cut);
  }
  scanner.push(bytes.subarray(from));
  scanner.end();
  return numbers;
}

function expectSameDoubles(texts: readonly string[], cuts: readonly number[] = []): void {
  const got = scanNumbers(texts, cuts);
  expect(got.length).toBe(texts.length);
  for (let k = 0; k < texts.length; k++) {
    if (!Object.is(got[k], Number(texts[k]))) expect({ text: texts[k], got: got[k] }).toEqual({ text: texts[k], got: Number(texts[k]) });
  }
}

/** The significand split as decimalToDouble takes it: the first 9 digits, then the rest. */
function split(digits: string): [number, number, number] {
  const rest = digits.slice(9);
  return [Number(digits.slice(0, 9)), rest === '' ? 0 : Number(rest), rest.length];
}

/** Any finite double, from its 64 bits. */
const anyDouble = fc.tuple(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: 0, max: 2 ** 32 - 1 })).map(([hi, lo]) => {
  const words = new Uint32Array([lo, hi]);
  return new Float64Array(words.buffer)[0]!;
}).filter(Number.isFinite);

/** The exact decimal text of m * 2^e (m, e integers). */
function exactDecimal(m: bigint, e: number): string {
  if (e >= 0) return (m << BigInt(e)).toString();
  const digits = (m * 5n ** BigInt(-e)).toString().padStart(-e + 1, '0');
  return `${digits.slice(0, digits.length + e)}.${digits.slice(digits.length + e)}`;
}

/** The significand m and exponent e of a positive finite double x = m * 2^e. */
function bitsOf(x: number): [bigint, number] {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  return biased === 0 ? [fraction, -1074] : [fraction | (1n << 52n), biased - 1075];
}

/** `text`'s digits cut to `k` significant ones, rounded down or up in the last one. */
function cutDigits(text: string, k: number, up: boolean): string {
  const dot = text.indexOf('.');
  const digits = text.replace('.', '');
  const first = digits.search(/[1-9]/);
  const intDigits = dot < 0 ? digits.length : dot;
  let kept = BigInt(digits.slice(0, first + k).padEnd(first + k, '0') || '0');
  if (up) kept += 1n;
  // value = kept * 10^(intDigits - (first + k))
  return `${kept}e${intDigits - (first + k)}`;
}

describe('decimalToDouble', () => {
  it('gives the double Number gives for known hard cases', () => {
    expectSameDoubles([
      '0', '-0', '0.0', '-0.0', '0e5', '0e-400', '0e400', '-0e400', '0.000', '1', '-1', '0.1', '1.5', '2.5', '3.5',
      // the smallest subnormal and the ties and near-ties around it
      '5e-324', '4.9406564584124654e-324', '2.4703282292062327e-324', '2.4703282292062328e-324', '2.470328229206232720e-324',
      '1e-323', '1.5e-323', '2.2250738585072011e-308', '2.2250738585072012e-308', '2.2250738585072014e-308', '2.225073858507201e-308',
      // the largest double, and where rounding passes it
      '1.7976931348623157e308', '1.7976931348623158e308', '1.7976931348623159e308', '179769313486231570000000000000e279',
      '1e308', '1e309', '-1e309', '1e400', '1e-400', '-1e-400', '1e-342', '1e-343', '9999999999999999999e-343', '9999999999999999999e-344',
      // 2^53 and its neighbours: ties go to even
      '9007199254740991', '9007199254740992', '9007199254740993', '9007199254740994', '9007199254740995', '9007199254740993.0000000001',
      '4503599627370496.5', '4503599627370497.5', '562949953421312.0625', '562949953421312.1875', '18014398509481985', '18014398509481986',
      // Clinger's range and just past it
      '1e22', '1e23', '1e-22', '1e-23', '123456789012345e22', '123456789012345e-22', '999999999999999e22', '9007199254740993e-22',
      '8.98846567431158e307', '7.2057594037927933e16', '1E2', '1e+2', '1E-2', '12345678901234567890', '18446744073709551615',
      '18446744073709551616', '9999999999999999999', '0.1000000000000000055511151231257827', '0.30000000000000004',
      // many digits, long integer parts, long runs of zeros
      '123456789012345678901234567890', '1234567890123456789012345678901234567890e-40', `0.${'0'.repeat(30)}123456789012345678`,
      `1${'0'.repeat(25)}`, `1${'0'.repeat(25)}.5`, '100000000000000000000000', '0.00000000000000000000000000000000001',
      '3.141592653589793238462643383279', '2.718281828459045235360287471352662497757', '-0.48322789446785286',
    ]);
  });

  it('gives the double Number gives for every double printed by String, toPrecision and toExponential', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(anyDouble, fc.integer({ min: 1, max: 21 })), { minLength: 1, maxLength: 40 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 4 }), (cases, cuts) => {
        const texts = cases.flatMap(([x, k]) => [String(x), x.toPrecision(k), x.toExponential(k - 1)]);
        expectSameDoubles(texts, cuts);
      }),
      { numRuns: 400 },
    );
  });

  it('gives the double Number gives for random digit strings at any scale', () => {
    const text = fc
      .tuple(
        fc.boolean(),
        fc.stringMatching(/^[1-9][0-9]{0,24}$/),
        fc.integer({ min: 0, max: 26 }),
        fc.integer({ min: -360, max: 330 }),
        fc.integer({ min: 0, max: 3 }),
      )
      .map(([negative, digits, point, exponent, zeros]) => {
        const at = Math.min(point, digits.length);
        const body = at === 0 ? `0.${'0'.repeat(zeros)}${digits}` : at === digits.length ? digits : `${digits.slice(0, at)}.${digits.slice(at)}`;
        return `${negative ? '-' : ''}${body}e${exponent}`;
      });
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 40 }), (texts) => expectSameDoubles(texts)),
      { numRuns: 400 },
    );
  });

  it('rounds decimals just below, at and just above the midpoint of two doubles as Number does', () => {
    fc.assert(
      fc.property(anyDouble, fc.integer({ min: 15, max: 19 }), (x, k) => {
        const [m, e] = bitsOf(Math.abs(x) || 5e-324);
        // The midpoint between x and the next double up: (2m + 1) * 2^(e - 1).
        const mid = exactDecimal(2n * m + 1n, e - 1);
        expectSameDoubles([cutDigits(mid, k, false), cutDigits(mid, k, true), cutDigits(mid, k + 1, false), cutDigits(mid, k + 1, true)]);
      }),
      { numRuns: 2000 },
    );
  });

  it('decides every significand of at most 19 digits without falling back to Number', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[1-9][0-9]{0,18}$/), fc.integer({ min: -345, max: 310 }), (digits, q) => {
        expect(digits.length).toBeLessThanOrEqual(MAX_SIGNIFICAND_DIGITS);
        const [high, low, lowDigits] = split(digits);
        expect(Object.is(decimalToDouble(high, low, lowDigits, q), Number(`${digits}e${q}`))).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });

  it('takes the significand as its first 9 digits and the rest', () => {
    expect(decimalToDouble(483227894, 46785286, 8, -17)).toBe(0.48322789446785286);
    expect(decimalToDouble(0, 0, 0, 400)).toBe(0);
    expect(decimalToDouble(1, 0, 0, -400)).toBe(0);
    expect(decimalToDouble(1, 0, 0, 400)).toBe(Infinity);
    expect(decimalToDouble(184467440, 73709551616, 11, 0)).toBeNaN(); // 2^64: more than 64 bits
    expect(decimalToDouble(184467440, 73709551615, 11, 0)).toBe(2 ** 64);
  });
});

describe('powersOfFive', () => {
  it('decodes to the table that the browser twin builds with BigInt, word for word, for every q from -342 to 308', () => {
    const table = powersOfFive();
    const expected = powersOfFiveByBigInt();
    expect(table.length).toBe(651 * 4);
    const differ = [];
    for (let i = 0; i < table.length; i++) if (table[i] !== expected[i]) differ.push(SMALLEST_Q + Math.floor(i / 4));
    expect(differ).toEqual([]);
    // Every entry's top bit is set (normalized).
    for (let q = SMALLEST_Q; q <= LARGEST_Q; q++) expect(table[(q - SMALLEST_Q) * 4]! >>> 31).toBe(1);
  });
});

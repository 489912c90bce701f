import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { mkdtemp, open, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InputFormatError, PcfError } from '../src/core/errors.js';
import { describe as describeValue } from '../src/core/validate.js';
import { parsePcfJson } from '../src/pcf/io.js';
import { readPcfFile } from '../src/pcf/pcfFileRead.js';
import { JsonScanner, type JsonSyntaxError } from '../src/pcf/jsonScanner.js';
import { PcfJsonCollector } from '../src/pcf/pcfJsonCollector.js';
import { flattenPcfTree, pcfSetFrom, type PcfLike, type PcfSet } from '../src/pcf/pcfSet.js';
import type { PcfDtype } from '../src/pcf/pcf.js';

/**
 * The reader before it streamed: JSON.parse of the whole text, then the tree checks. The stream
 * reader must give the same set or the same message for every document.
 */
function wholeStringParse(text: string, dtype: PcfDtype): PcfSet {
  let root: unknown = JSON.parse(text);
  const bad = (message: string): never => {
    throw new InputFormatError(message);
  };
  if (root !== null && typeof root === 'object' && !Array.isArray(root)) {
    const pcfs = (root as { pcfs?: unknown }).pcfs;
    if (!Array.isArray(pcfs)) bad(`expected an array of PCFs or an object with a "pcfs" array, got an object whose "pcfs" is ${describeValue(pcfs)}`);
    root = pcfs;
  } else if (!Array.isArray(root)) {
    bad(`expected an array of PCFs or an object with a "pcfs" array, got ${describeValue(root)}`);
  }
  const { leaves, shape } = flattenPcfTree(root, bad);
  for (let k = 0; k < leaves.length; k++) {
    const pcf = leaves[k];
    if (!Array.isArray(pcf)) bad(`PCF ${k}: expected an array of [t, v] pairs, got ${describeValue(pcf)}`);
    const pairs = pcf as unknown[];
    for (let b = 0; b < pairs.length; b++) {
      const pair: unknown = pairs[b];
      if (Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'number' && typeof pair[1] === 'number') continue;
      let got: unknown = pair;
      if (Array.isArray(pair) && pair.length === 2) got = typeof pair[0] === 'number' ? pair[1] : pair[0];
      bad(`PCF ${k}, breakpoint ${b}: expected a [t, v] pair of numbers, got ${describeValue(got)}`);
    }
  }
  try {
    return pcfSetFrom(leaves as PcfLike[], dtype, { shape });
  } catch (err) {
    if (err instanceof PcfError) bad(err.message);
    throw err;
  }
}

/** Scans `bytes` cut into pieces at `cuts`, as a file read in chunks is. */
function streamParse(bytes: Uint8Array, cuts: number[], dtype: PcfDtype): PcfSet {
  const collector = new PcfJsonCollector(dtype, false);
  const scanner = new JsonScanner(collector);
  let at = 0;
  for (const cut of [...cuts.map((c) => Math.floor(c * bytes.length)).sort((a, b) => a - b), bytes.length]) {
    scanner.push(bytes.subarray(at, cut));
    at = cut;
  }
  scanner.end();
  return collector.finish(undefined);
}

type Outcome = { set: { dtype: string; count: number; shape: number[]; times: number[]; values: number[]; offsets: number[] } } | { error: string };

function outcome(fn: () => PcfSet): Outcome {
  try {
    const s = fn();
    return { set: { dtype: s.dtype, count: s.count, shape: [...s.shape], times: [...s.times], values: [...s.values], offsets: [...s.offsets] } };
  } catch (err) {
    if (err instanceof SyntaxError) return { error: 'SyntaxError' };
    return { error: `${(err as Error).constructor.name}: ${(err as Error).message}` };
  }
}

// Numbers as JSON writes them, and as people write them by hand.
const number = fc.oneof(
  fc.constantFrom(0, -0, 1, 2, 3, -1, 0.5, 1e-7, 123456789012345680000, 1e300),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer({ min: -5, max: 10 }),
);
const numberText = fc.oneof(
  number.map((x) => JSON.stringify(x)),
  fc.constantFrom('1e999', '-0.0', '0.10000000000000000555', '2.5E+3', '7e-400', '1.000000000000000000001', '0.1e1'),
);
const scalar = fc.oneof(numberText, fc.constantFrom('"x"', 'null', 'true', '{}', '{"a": [1]}', '"\\u00e9\\n"', '"é"'));
const pair = fc.oneof({ weight: 8, arbitrary: fc.tuple(numberText, numberText).map(([t, v]) => `[${t}, ${v}]`) }, { weight: 1, arbitrary: scalar }, { weight: 1, arbitrary: fc.array(scalar, { maxLength: 3 }).map((a) => `[${a.join(',')}]`) });
const pcf = fc.oneof(
  { weight: 6, arbitrary: fc.array(pair, { maxLength: 5 }).map((ps) => `[${['[0, 1]', ...ps].join(', ')}]`) },
  { weight: 1, arbitrary: fc.array(pair, { maxLength: 4 }).map((ps) => `[${ps.join(',')}]`) },
  { weight: 1, arbitrary: scalar },
);
/** A nest of PCFs of depth 1 to 3, mostly rectangular. */
const nest: fc.Arbitrary<string> = fc.integer({ min: 1, max: 3 }).chain((depth) =>
  fc.array(fc.integer({ min: 0, max: 3 }), { minLength: depth, maxLength: depth }).chain((shape) => {
    const build = (d: number): fc.Arbitrary<string> => {
      if (d === depth) return pcf;
      const regular = fc.array(build(d + 1), { minLength: shape[d]!, maxLength: shape[d]! });
      const ragged = fc.array(build(d + 1), { maxLength: 3 });
      return fc.oneof({ weight: 5, arbitrary: regular }, { weight: 1, arbitrary: ragged }).map((xs) => `[${xs.join(', ')}]`);
    };
    return build(0);
  }),
);
const document = fc.oneof(
  { weight: 6, arbitrary: nest },
  { weight: 2, arbitrary: nest.map((n) => `{"note": [1, {"pcfs": 2}], "pcfs": ${n}}`) },
  { weight: 1, arbitrary: fc.tuple(nest, nest).map(([a, b]) => `{"pcfs": ${a}, "pcfs": ${b}}`) },
  { weight: 1, arbitrary: fc.oneof(scalar, fc.constantFrom('{"pcfs": 5}', '{"pcf": []}', '[[0, 1], [2, 0]]', '[1, 2]', '[[]]')) },
  // Broken documents: cut short, or with a stray character.
  { weight: 1, arbitrary: fc.tuple(nest, fc.nat()).map(([n, k]) => n.slice(0, k % Math.max(1, n.length))) },
  { weight: 1, arbitrary: fc.tuple(nest, fc.nat(), fc.constantFrom(',', ']', '[', 'x', '-', '.', '"', '}')).map(([n, k, c]) => n.slice(0, k % (n.length + 1)) + c + n.slice(k % (n.length + 1))) },
);

describe('the JSON stream reader', () => {
  it('gives the set or the message the whole-string reader gave, however the bytes are cut', () => {
    fc.assert(
      fc.property(document, fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }), fc.constantFrom<PcfDtype>('float64', 'float32'), (text, cuts, dtype) => {
        const bytes = new TextEncoder().encode(text);
        expect(outcome(() => streamParse(bytes, cuts, dtype))).toEqual(outcome(() => wholeStringParse(text, dtype)));
      }),
      { numRuns: 1500 },
    );
  });

  it('reports a syntax error at the same line, column and byte however the bytes are cut', () => {
    // Pieces longer than a number, so a token cut at a piece's end is finished in place.
    const body = fc.array(fc.tuple(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(', ', ',\n', ',\r\n  ')), { minLength: 20, maxLength: 60 });
    fc.assert(
      fc.property(body, fc.nat(), fc.constantFrom('x', ']', '.', '"\u0001"', '-e'), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 5 }), (items, at, stray, cuts) => {
        const text = `[${items.map(([x, sep]) => `${JSON.stringify(x)}${sep}`).join('')}0]`;
        const k = at % text.length;
        const bytes = new TextEncoder().encode(text.slice(0, k) + stray + text.slice(k));
        const message = (pieces: number[]): string => {
          const scanner = new JsonScanner(new PcfJsonCollector('float64', false));
          let from = 0;
          try {
            for (const cut of [...pieces.map((c) => Math.floor(c * bytes.length)).sort((a, b) => a - b), bytes.length]) {
              scanner.push(bytes.subarray(from, Math.max(from, cut)));
              from = Math.max(from, cut);
            }
            scanner.end();
            return 'no error';
          } catch (err) {
            return (err as Error).message;
          }
        };
        expect(message(cuts)).toBe(message([]));
      }),
      { numRuns: 300 },
    );
  });

  it('places an unexpected end at the end of the document, however it is cut, never past it', () => {
    for (const text of ['[[[0,1],[1,2]],[[0,1', '[[[0,1],[1,2]],[[0,1],', '[[[0,1],[1,2]],[[0,1.', '[\n  [[0, 1]', '']) {
      const bytes = new TextEncoder().encode(text);
      for (const cut of [0, 1, Math.floor(bytes.length / 2), Math.max(0, bytes.length - 1)]) {
        const scanner = new JsonScanner(new PcfJsonCollector('float64', false));
        scanner.push(bytes.subarray(0, cut));
        scanner.push(bytes.subarray(cut));
        const error = (() => {
          try {
            scanner.end();
          } catch (err) {
            return err as JsonSyntaxError;
          }
          return undefined;
        })();
        expect(error?.reason, JSON.stringify(text)).toBe('Unexpected end of JSON input');
        expect(error?.offset, `${JSON.stringify(text)} cut at ${cut}`).toBe(bytes.length);
      }
    }
  });

  it('keeps the verdict of the first elements when later elements look like a different nesting', () => {
    // Found by the property above: a string first, then a PCF-like array, used to read as "a single PCF".
    for (const text of ['{"pcfs": ["x", [0]]}', '{"note": [1, {"pcfs": 2}], "pcfs": ["x", [0]]}', '["x", [[0, 1]]]']) {
      expect(outcome(() => streamParse(new TextEncoder().encode(text), [], 'float64'))).toEqual(outcome(() => wholeStringParse(text, 'float64')));
    }
    expect(outcome(() => streamParse(new TextEncoder().encode('{"pcfs": ["x", [0]]}'), [], 'float64'))).toEqual({
      error: 'InputFormatError: expected an array of PCFs (each an array of [t, v] pairs), got an array of length 2',
    });
  });

  it('reads numbers exactly as JSON.parse does', () => {
    fc.assert(
      fc.property(fc.array(numberText, { minLength: 1, maxLength: 30 }), (texts) => {
        const doc = `[[${texts.map((t, k) => `[${k}, ${t}]`).join(',')}]]`;
        const expected = texts.map((t) => JSON.parse(t) as number);
        const got = outcome(() => streamParse(new TextEncoder().encode(doc), [], 'float64'));
        if (expected.every(Number.isFinite)) expect('set' in got && got.set.values).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('skips a UTF-8 byte-order mark, also when it arrives split across reads', () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('[[[0, 1]]]')]);
    expect(streamParse(bytes, [1 / bytes.length], 'float64').count).toBe(1);
    expect(parsePcfJson('\ufeff[[[0, 2]]]').values[0]).toBe(2);
  });

  it('names the line and column of a syntax error, with the SyntaxError as cause', () => {
    let caught: unknown;
    try {
      parsePcfJson('[[[0, 1],\n  [1, 2]x]]', { file: 'a.json' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(InputFormatError);
    expect((caught as Error).message).toBe("a.json: invalid JSON: Unexpected token 'x', expected ',' or ']' at line 2 column 9 (byte 18)");
    expect((caught as Error).cause).toBeInstanceOf(SyntaxError);
  });

  it('says what to change for a trailing comma, NaN or Infinity, and a zip archive named .json', () => {
    const message = (text: string): string => {
      try {
        parsePcfJson(text, { file: 'a.json' });
      } catch (err) {
        return (err as Error).message;
      }
      throw new Error(`parsed: ${text}`);
    };
    const notFinite = '; NaN and Infinity are not JSON numbers: every time and value must be a finite number';
    expect(message('[[[0, 1], [2, 0],]]')).toBe("a.json: invalid JSON: Unexpected token ']', expected a value at line 1 column 18 (byte 17); JSON allows no comma before ']': remove it");
    expect(message('{"pcfs": [[[0, 1]]],}')).toBe("a.json: invalid JSON: Unexpected token '}', expected a string key at line 1 column 21 (byte 20); JSON allows no comma before '}': remove it");
    expect(message('[[[0, NaN]]]')).toBe(`a.json: invalid JSON: Unexpected token 'N', expected a value at line 1 column 7 (byte 6)${notFinite}`);
    expect(message('[[[0, -Infinity]]]')).toBe(`a.json: invalid JSON: Unexpected token 'I', expected a digit at line 1 column 8 (byte 7)${notFinite}`);
    expect(message('PK\u0003\u0004')).toBe("a.json: invalid JSON: Unexpected token 'P', expected a value at line 1 column 1 (byte 0); this is a zip archive, not JSON: an .npz file must be named FILE.npz");
    // No advice where none fits: a missing value after a key, a stray ']' at the start.
    expect(message('{"pcfs": }')).toBe("a.json: invalid JSON: Unexpected token '}', expected a value at line 1 column 10 (byte 9)");
    expect(message(']')).toBe("a.json: invalid JSON: Unexpected token ']', expected a value at line 1 column 1 (byte 0)");
  });
});

describe('readPcfFile on a JSON file larger than a string can hold', () => {
  it('loads a document above 512 MiB, written in chunks, with every PCF in place', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pxl-big-json-'));
    try {
      const path = join(dir, 'big.json');
      // One PCF of 3 breakpoints per 64-byte line, written as the same 64 KiB block over and over:
      // 2^23 + 4096 lines pass 512 MiB (2^29 bytes), about where V8's longest string ends.
      const entry = (j: number, last: boolean): string => `[[0,${j}],[1.25,0.5],[2.5,${(j % 7) - 3}]]${last ? '' : ','}`.padEnd(63) + '\n';
      const perBlock = 1024;
      const blocks = 2 ** 13 + 4;
      const lines = perBlock * blocks;
      const block = Buffer.from(Array.from({ length: perBlock }, (_, j) => entry(j, false)).join(''));
      const lastBlock = Buffer.from(Array.from({ length: perBlock }, (_, j) => entry(j, j === perBlock - 1)).join(''));
      const handle = await open(path, 'w');
      try {
        await handle.write('[\n');
        for (let k = 0; k < blocks; k++) await handle.write(k === blocks - 1 ? lastBlock : block);
        await handle.write(']\n');
      } finally {
        await handle.close();
      }
      expect((await stat(path)).size).toBeGreaterThan(2 ** 29);
      const set = await readPcfFile(path);
      expect(set.count).toBe(lines);
      expect(set.offsets[lines]).toBe(3 * lines);
      for (const k of [0, 1, 1023, 1024, 5000, lines - 1]) {
        const j = k % perBlock;
        expect([...set.times.subarray(3 * k, 3 * k + 3)]).toEqual([0, 1.25, 2.5]);
        expect([...set.values.subarray(3 * k, 3 * k + 3)]).toEqual([j, 0.5, (j % 7) - 3]);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('reports a malformed PCF deep in a file with the file name and the PCF number', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pxl-json-'));
    try {
      const path = join(dir, 'in.json');
      const good = Array.from({ length: 50_000 }, () => '[[0, 1], [1, 0]]');
      await writeFile(path, `{"pcfs": [${good.join(',')}, [[0, 1], [1, 0]], [[0, 1], [2, 3], [2, 4]]]}`);
      await expect(readPcfFile(path)).rejects.toThrow(new InputFormatError('PCF 50001: breakpoints 1 and 2 have the same time (2)', path));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

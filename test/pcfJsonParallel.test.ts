import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import type { Worker } from 'node:worker_threads';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { InputFormatError, PcfError } from '../src/core/errors.js';
import { parsePcfJson } from '../src/pcf/io.js';
import { readPcfFile, readPcfJsonOnePass } from '../src/pcf/pcfFileRead.js';
import { parseJsonPart } from '../src/pcf/jsonPart.js';
import { joinJsonParts, partsDecided } from '../src/pcf/jsonPartsJoin.js';
import { readPcfJsonInParts } from '../src/pcf/jsonPartsRead.js';
import { findPcfBoundary, pcfJsonForm, pcfJsonSplits } from '../src/pcf/jsonSplit.js';
import type { PcfDtype } from '../src/pcf/pcf.js';
import type { PcfSet } from '../src/pcf/pcfSet.js';

// Every thread the reader starts, to check that each has ended when a read settles.
const started = vi.hoisted(() => [] as Worker[]);
vi.mock('../src/platform/thread.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../src/platform/thread.js')>();
  return {
    ...real,
    startThread: (...args: Parameters<typeof real.startThread>) => {
      const thread = real.startThread(...args);
      started.push(thread);
      return thread;
    },
  };
});

const bytesOf = (text: string): Uint8Array => new TextEncoder().encode(text);

/** " at line L column C (byte B)" for the character at `index` of an ASCII `text`. */
function where(text: string, index: number): string {
  const line = text.slice(0, index).split('\n').length;
  return ` at line ${line} column ${index - (text.lastIndexOf('\n', index - 1) + 1) + 1} (byte ${index})`;
}
const textOf = (bytes: Uint8Array): string => new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);

/** The bytes of `bytes` from `a` to `b` in chunks of `chunk`, as a thread reads its part. */
function* chunks(bytes: Uint8Array, a: number, b: number, chunk: number): Generator<Uint8Array> {
  for (let i = a; i < b; i += chunk) yield bytes.subarray(i, Math.min(b, i + chunk));
}

/**
 * `bytes` read in parts cut at `splits`, on this thread, joined as the threaded reader joins them;
 * 'one pass' where the reader would read the document in one pass instead.
 */
function partsParse(bytes: Uint8Array, splits: number[], dtype: PcfDtype, chunk = 1 << 20): PcfSet | 'one pass' {
  const form = pcfJsonForm(bytes.subarray(0, 4096));
  if (form === undefined) return 'one pass';
  const bounds = [0, ...splits, bytes.length];
  const parts = bounds.slice(1).map((end, i) => parseJsonPart(chunks(bytes, bounds[i]!, end, chunk), bounds[i]!, i === 0 ? undefined : form, i === bounds.length - 2, dtype));
  return joinJsonParts(parts, form, dtype, false, undefined) ?? 'one pass';
}

/** What a read gives, comparable bit for bit: the set's bytes, or the error's class, message and cause. */
function outcome(read: () => PcfSet | 'one pass'): unknown {
  try {
    const set = read();
    if (set === 'one pass') return set;
    const bits = (a: ArrayLike<number> & { buffer: ArrayBufferLike; byteOffset: number; byteLength: number }): string => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('hex');
    return { dtype: set.dtype, count: set.count, shape: [...set.shape], times: bits(set.times), values: bits(set.values), offsets: [...set.offsets] };
  } catch (err) {
    const e = err as Error & { cause?: Error & { pcfIndex?: number } };
    return { error: e.constructor.name, message: e.message, cause: e.cause?.constructor.name, causeMessage: e.cause?.message, pcfIndex: e.cause?.pcfIndex };
  }
}

// Numbers in the spellings JSON allows; both readers see the same bytes, so any spelling must agree.
const value = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: -9, max: 9 }), fc.constantFrom(0.1, 1e-300, 123456789.125, 2 ** 53 + 2));
const spelled = fc.tuple(value, fc.constantFrom('plain', 'exp', 'EXP', 'int')).map(([x, how]) => {
  if (how === 'exp') return x.toExponential();
  if (how === 'EXP') return x.toExponential(3).toUpperCase();
  if (how === 'int' && Number.isInteger(x) && Math.abs(x) < 1e15) return `${x}.000`;
  return JSON.stringify(x);
});
const time = fc.oneof(fc.double({ min: 1e-9, max: 1e9, noNaN: true }), fc.integer({ min: 1, max: 50 })).map((t) => JSON.stringify(t));
const space = fc.constantFrom('', '', ' ', '\n', '\r\n', '\t', ' \n  ');

/** One PCF as its pieces: '[' then pairs then ']' with whitespace anywhere, starting at time 0. */
const pcfText = fc.tuple(fc.array(fc.tuple(time, spelled), { maxLength: 6 }), spelled, fc.array(space, { minLength: 12, maxLength: 12 })).map(([pairs, v0, ws]) => {
  const w = (k: number): string => ws[k % ws.length]!;
  const all = [['0', v0], ...pairs].map(([t, v], k) => `${w(k)}[${w(k + 1)}${t}${w(k + 2)},${v}${w(k + 3)}]`);
  return `[${all.join(',')}${w(5)}]`;
});

/** A document of PCFs in either form, a BOM sometimes, and an error put in at PCF `at` sometimes. */
const documentOf = (errors: boolean) =>
  fc
    .record({
      pcfs: fc.array(pcfText, { minLength: 1, maxLength: 40 }),
      form: fc.constantFrom('array', 'object', 'object with a note'),
      bom: fc.boolean(),
      gaps: fc.array(space, { minLength: 4, maxLength: 4 }),
      error: errors ? fc.constantFrom('number', 'token', 'pair', 'first time', 'same time', 'end', 'none') : fc.constant('none'),
      at: fc.nat(),
    })
    .map(({ pcfs, form, bom, gaps, error, at }) => {
      const k = at % pcfs.length;
      const bad = { number: '[[0, 1.e5]]', token: '[[0, 1], x]', pair: '[[0, 1], [2]]', 'first time': '[[1, 1], [2, 0]]', 'same time': '[[0, 1], [3, 0], [3, 1]]' } as Record<string, string>;
      if (bad[error] !== undefined) pcfs[k] = bad[error]!;
      const array = `[${gaps[0]}${pcfs.join(`,${gaps[1]}`)}${gaps[2]}]`;
      let text = form === 'array' ? array : form === 'object' ? `{"pcfs":${gaps[3]}${array}}` : `{ "pcfs": ${array},\n "note": "]],[[0, 1]],[["}`;
      if (error === 'end') text = text.slice(0, -1);
      return (bom ? '\ufeff' : '') + text;
    });

describe('cutting a JSON document of PCFs between PCFs', () => {
  it('tells the forms the parts can resume in from the first bytes', () => {
    expect(pcfJsonForm(bytesOf('[[[0, 1]]]'))).toBe('array');
    expect(pcfJsonForm(bytesOf('\ufeff \n[ [\t[ -0.5, 1]]]'))).toBe('array');
    expect(pcfJsonForm(bytesOf('{ "pcfs" :\n[[[0,1]]]}'))).toBe('object');
    expect(pcfJsonForm(bytesOf('[[[[0, 1]]]]'))).toBeUndefined(); // a nested shape
    expect(pcfJsonForm(bytesOf('{"note": 1, "pcfs": [[[0, 1]]]}'))).toBeUndefined();
    expect(pcfJsonForm(bytesOf('[]'))).toBeUndefined();
    expect(pcfJsonForm(bytesOf(''))).toBeUndefined();
  });

  it('finds the start of the next PCF after a ] ] , [ [ boundary, whitespace allowed', () => {
    const text = '[[[0, 1], [2, 3]] ,\n [ [0, 5]], [[0, 1]]]';
    expect(findPcfBoundary(bytesOf(text), 0)).toBe(text.indexOf('[ [0, 5]'));
    expect(findPcfBoundary(bytesOf(text), text.indexOf('[ [0, 5]'))).toBe(text.lastIndexOf('[[0, 1]]'));
    expect(findPcfBoundary(bytesOf('[[0, 1], [2, 3]]'), 0)).toBe(-1); // between pairs, not PCFs
    expect(findPcfBoundary(bytesOf('],[['), 0)).toBe(-1); // the comma must have ]] before it inside the bytes
    expect(findPcfBoundary(bytesOf(' ]],[['), 0)).toBe(4);
  });

  it('cuts near equal offsets, in increasing order, and not where no boundary is near', async () => {
    const pcf = '[[0, 1], [1, 2]]';
    const bytes = bytesOf(`[${Array.from({ length: 30_000 }, () => pcf).join(',')}]`);
    const readAt = async (p: number, n: number): Promise<Uint8Array> => bytes.subarray(p, p + n);
    const splits = await pcfJsonSplits(readAt, bytes.length, 4);
    expect(splits).toHaveLength(3);
    for (const [k, s] of splits.entries()) {
      expect(textOf(bytes.subarray(s - 1, s + pcf.length))).toBe(`,${pcf}`);
      expect(Math.abs(s - ((k + 1) * bytes.length) / 4)).toBeLessThan(pcf.length + 1);
    }
    expect(await pcfJsonSplits(readAt, bytes.length, 1)).toEqual([]);
    const onePcf = bytesOf(`[[${Array.from({ length: 20_000 }, (_, t) => `[${t}, 1]`).join(',')}]]`);
    expect(await pcfJsonSplits(async (p, n) => onePcf.subarray(p, p + n), onePcf.length, 2)).toEqual([]);
  });
});

describe('joining parts read at once', () => {
  it('gives the one-pass set bit for bit, cut at boundaries, in both forms, float64 and float32', () => {
    fc.assert(
      fc.property(documentOf(false), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 4 }), fc.constantFrom<PcfDtype>('float64', 'float32'), fc.integer({ min: 1, max: 64 }), (text, guesses, dtype, chunk) => {
        const bytes = bytesOf(text);
        const splits = [...new Set(guesses.map((g) => findPcfBoundary(bytes, Math.floor(g * bytes.length)))).values()].filter((s) => s > 0).sort((a, b) => a - b);
        const parts = outcome(() => partsParse(bytes, splits, dtype, chunk));
        // A boundary found in the note's string, after the array, is a cut that does not hold.
        const note = text.indexOf('"note"');
        if (parts === 'one pass' && note >= 0 && splits.some((s) => s > note)) return;
        expect(parts).toEqual(outcome(() => parsePcfJson(textOf(bytes), { dtype })));
      }),
      { numRuns: 200 },
    );
  });

  it('never gives another set or message than one pass, wherever the cuts fall', () => {
    const seen = { joined: 0, errors: 0, runs: 0 };
    fc.assert(
      fc.property(documentOf(true), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 4 }), fc.boolean(), (text, cuts, atBoundaries) => {
        const bytes = bytesOf(text);
        const at = cuts.map((c) => Math.floor(c * bytes.length));
        const splits = [...new Set(atBoundaries ? at.map((s) => findPcfBoundary(bytes, s)) : at)].filter((s) => s > 0 && s < bytes.length).sort((a, b) => a - b);
        const parts = outcome(() => partsParse(bytes, splits, 'float64', 7));
        seen.runs++;
        if (parts === 'one pass') return;
        seen.joined++;
        if ((parts as { error?: string }).error !== undefined) seen.errors++;
        expect(parts).toEqual(outcome(() => parsePcfJson(textOf(bytes))));
      }),
      { numRuns: 400 },
    );
    // The parts, not the fallback, answered a good share, errors included.
    expect(seen.joined).toBeGreaterThan(seen.runs / 4);
    expect(seen.errors).toBeGreaterThan(seen.runs / 10);
  });

  it('reports an error in a later part with the line, column and byte, and the PCF number, of one pass', () => {
    const good = Array.from({ length: 50 }, (_, k) => `[[0, ${k}],\n [1, 0]]`);
    const cases = [
      ['[[0, 1],\n   [2, 1.e5]]', (text: string) => `invalid JSON: Unexpected token 'e', expected a digit after the decimal point${where(text, text.indexOf('1.e5') + 2)}`],
      ['[[0, 1], [2]]', () => 'PCF 40, breakpoint 1: expected a [t, v] pair of numbers, got an array of length 1'],
      ['[[0, 1], [2, 0], [2, 1]]', () => 'PCF 40: breakpoints 1 and 2 have the same time (2)'],
    ] as const;
    for (const [bad, message] of cases) {
      const pcfs = [...good];
      pcfs[40] = bad;
      const text = `{"pcfs": [\n${pcfs.join(',\n')}\n]}`;
      const bytes = bytesOf(text);
      const splits = [findPcfBoundary(bytes, 200), findPcfBoundary(bytes, 600)];
      const parts = outcome(() => partsParse(bytes, splits, 'float64'));
      expect(splits[1]).toBeLessThan(text.indexOf(bad));
      expect(parts).toMatchObject({ error: 'InputFormatError', message: message(text) });
      expect(parts).toEqual(outcome(() => parsePcfJson(textOf(bytes))));
    }
  });

  it('knows the outcome before every part has answered once an answered part decides it', () => {
    const text = '[[[0, 1]], [[0, 2]], [[0, x]], [[0, 4]]]';
    const bytes = bytesOf(text);
    const read = (a: number, b: number, i: number) => parseJsonPart(chunks(bytes, a, b, 4), a, i === 0 ? undefined : 'array', b === bytes.length, 'float64');
    const [s1, s2, s3] = ['[[0, 2]]', '[[0, x]]', '[[0, 4]]'].map((pcf) => text.indexOf(pcf));
    const good0 = read(0, s1!, 0);
    const bad2 = read(s2!, s3!, 2);
    expect(bad2.syntax?.reason).toBe("Unexpected token 'x', expected a value");
    expect(partsDecided([good0, undefined, bad2, undefined], 'array')).toBe(false); // part 1 may hold an earlier error
    const good1 = read(s1!, s2!, 1);
    expect(partsDecided([good0, good1, bad2, undefined], 'array')).toBe(true);
    expect(outcome(() => joinJsonParts([good0, good1, bad2, undefined], 'array', 'float64', false, undefined)!)).toEqual(outcome(() => parsePcfJson(textOf(bytes))));
    const cutInside = read(0, 5, 0); // "[[[0," : not between PCFs
    expect(partsDecided([cutInside, undefined], 'array')).toBe(true);
    expect(joinJsonParts([cutInside, undefined], 'array', 'float64', false, undefined)).toBeUndefined();
    expect(partsDecided([read(0, s1!, 0), undefined], 'array')).toBe(false);
  });

  it('leaves to one pass a cut that did not hold and a later "pcfs" key', () => {
    const bytes = bytesOf('[[[0, 1]], [[0, 2]], [[0, 3]]]');
    expect(partsParse(bytes, [12], 'float64')).toBe('one pass'); // inside the second PCF
    const twice = bytesOf('{"pcfs": [[[0, 1]], [[0, 2]]], "pcfs": [[[0, 3]]]}');
    expect(partsParse(twice, [findPcfBoundary(twice, 0)], 'float64')).toBe('one pass');
    expect(parsePcfJson(textOf(twice)).count).toBe(1);
  });
});

describe('reading a JSON file of PCFs on several threads', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pxl-json-parts-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const allEnded = (): void => {
    expect(started.length).toBeGreaterThan(0);
    for (const thread of started) expect(thread.threadId).toBe(-1);
    started.length = 0;
  };
  const pcfs = Array.from({ length: 3000 }, (_, k) => `[[0, ${k / 7}], [${1 + (k % 5)}, -${k}], [0.5, 1e-3]]`);

  it('equals one pass bit for bit, float64 and float32, shared or not, and every thread has ended', async () => {
    const path = join(dir, 'good.json');
    await writeFile(path, `\ufeff{"pcfs": [\n${pcfs.join(',\n')}\n]}\n`);
    for (const [dtype, shared] of [['float64', false], ['float32', true]] as const) {
      const parts = await readPcfJsonInParts(path, dtype, shared, { minBytes: 0, parts: 3 });
      allEnded();
      const one = await readPcfJsonOnePass(path, dtype, shared);
      expect(outcome(() => parts!)).toEqual(outcome(() => one));
      expect(parts!.times.buffer instanceof SharedArrayBuffer).toBe(shared);
      expect(parts!.offsets.buffer instanceof SharedArrayBuffer).toBe(shared);
    }
  });

  it('rejects an error in the second part as one pass does, and every thread has ended', async () => {
    const path = join(dir, 'bad.json');
    const bad = [...pcfs];
    bad[2500] = '[[0, 1],\n [2, -]]';
    const text = `[\n${bad.join(',\n')}\n]`;
    await writeFile(path, text);
    const error = await readPcfJsonInParts(path, 'float64', false, { minBytes: 0, parts: 2 }).catch((err: unknown) => err);
    allEnded();
    expect(error).toBeInstanceOf(InputFormatError);
    expect((error as Error).message).toBe(`${path}: invalid JSON: Unexpected token ']', expected a digit${where(text, text.indexOf('-]') + 1)}`);
    expect(await readPcfJsonOnePass(path, 'float64', false).catch((err: unknown) => (err as Error).message)).toBe((error as Error).message);
    // An error near the start: the first part decides, and the second is stopped.
    await writeFile(path, `[[[0, 1]], [[0, 1e]], ${pcfs.join(',')}]`);
    const early = await readPcfJsonInParts(path, 'float64', false, { minBytes: 0, parts: 2 }).catch((err: unknown) => err);
    allEnded();
    expect((early as Error).message).toBe(`${path}: invalid JSON: Unexpected token ']', expected a digit in the exponent at line 1 column 19 (byte 18)`);
    const invalid = [...pcfs];
    invalid[2999] = '[[2, 1]]';
    await writeFile(path, `[${invalid.join(',')}]`);
    const pcfError = await readPcfJsonInParts(path, 'float64', false, { minBytes: 0, parts: 2 }).catch((err: unknown) => err);
    allEnded();
    expect(pcfError).toBeInstanceOf(InputFormatError);
    expect((pcfError as Error).message).toBe(`${path}: PCF 2999: the first breakpoint must be at time 0, but the earliest is breakpoint 0 at time 2`);
    expect((pcfError as Error).cause).toBeInstanceOf(PcfError);
  });

  it.runIf(process.platform !== 'win32')('reads a named pipe (a FIFO named .json, which opens once only) in one pass', async () => {
    const { execFileSync, spawn } = await import('node:child_process');
    const source = join(dir, 'source.json');
    const fifo = join(dir, 'fifo.json');
    const text = `[${pcfs.slice(0, 50).join(', ')}]`;
    await writeFile(source, text);
    execFileSync('mkfifo', [fifo]);
    // The writer's open waits for a reader; it then writes the document once and closes.
    const writer = spawn('sh', ['-c', 'cat "$0" > "$1"', source, fifo], { stdio: 'ignore' });
    try {
      const set = await readPcfFile(fifo);
      expect(outcome(() => set)).toEqual(outcome(() => parsePcfJson(text)));
    } finally {
      writer.kill('SIGKILL');
    }
  }, 20_000);

  it('reads awkward cuts, empty and single-PCF files right through readPcfFile', async () => {
    const path = join(dir, 'cuts.json');
    const text = `[${pcfs.slice(0, 200).join(', ')}]`;
    await writeFile(path, text);
    const one = outcome(() => parsePcfJson(text));
    // A cut inside a number, one inside a pair, one right after the opening bracket.
    const awkward = [text.indexOf('1e-3') + 2, text.indexOf('[1, -'), 1];
    for (const split of awkward) {
      const parts = await readPcfJsonInParts(path, 'float64', false, { minBytes: 0, splits: [split] });
      expect(parts).toBeUndefined();
    }
    allEnded();
    expect(one).toMatchObject({ count: 200 });
    const read = await readPcfFile(path);
    expect(outcome(() => read)).toEqual(one);
    for (const [text, count] of [['[]', 0], [' [ [[0, 1], [1, 0]] ] ', 1]] as const) {
      await writeFile(path, text);
      expect(await readPcfJsonInParts(path, 'float64', false, { minBytes: 0, parts: 2 })).toBeUndefined();
      const set = await readPcfFile(path);
      expect(set.count).toBe(count);
      expect(outcome(() => set)).toEqual(outcome(() => parsePcfJson(text)));
    }
  });

  it('reads a file of 64 MiB or more in parts by default, and a smaller one in one pass', async () => {
    const path = join(dir, 'default.json');
    const pcf = '[[0,1],[1,0]],';
    const n = Math.ceil((64 << 20) / pcf.length);
    await writeFile(path, `[${pcf.repeat(n - 1)}[[0,1],[2,0]]]`);
    const set = await readPcfFile(path);
    expect(set.count).toBe(n);
    expect(set.offsets[n]).toBe(2 * n);
    for (const k of [0, 1, Math.floor(n / 2), n - 2]) expect([set.times[2 * k], set.times[2 * k + 1], set.values[2 * k], set.values[2 * k + 1]]).toEqual([0, 1, 1, 0]);
    expect([set.times[2 * n - 1], set.offsets[n - 1]]).toEqual([2, 2 * n - 2]);
    if (availableParallelism() > 1) allEnded();
    else expect(started).toHaveLength(0);
    await writeFile(path, `[${pcf.repeat(1000)}[[0,1]]]`);
    expect((await readPcfFile(path)).count).toBe(1001);
    expect(started).toHaveLength(0);
  });

  it('rejects a file that ends before a part does, with every thread ended', async () => {
    const path = join(dir, 'short.json');
    const text = `[${pcfs.slice(0, 100).join(',')}]`;
    await writeFile(path, text);
    const error = await readPcfJsonInParts(path, 'float64', false, { minBytes: 0, splits: [text.length + 50] }).catch((err: unknown) => err);
    allEnded();
    expect(error).toBeInstanceOf(InputFormatError);
    expect((error as Error).message).toBe(`${path}: cannot read the file: the file ended at byte ${text.length}, before byte ${text.length + 50}; was it changed while being read?`);
  });
});

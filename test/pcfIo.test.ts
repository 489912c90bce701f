import { describe, it, expect } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InputFormatError, OptionError, PcfError } from '../src/core/errors.js';
import { parsePcfJson } from '../src/pcf/io.js';
import { readPcfFile } from '../src/pcf/pcfFileRead.js';
import { decodeNpy, encodeNpy } from '../src/pcf/npy.js';

function formatError(fn: () => unknown): InputFormatError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InputFormatError);
    return err as InputFormatError;
  }
  throw new Error('expected an InputFormatError');
}

describe('parsePcfJson', () => {
  it('reads an array of PCFs', () => {
    const set = parsePcfJson('[[[0, 10], [2, 5], [3, 0]], [[0, 5], [6, 0]]]');
    expect(set.count).toBe(2);
    expect(set.shape).toEqual([2]);
    expect([...set.offsets]).toEqual([0, 3, 5]);
    expect([...set.values]).toEqual([10, 5, 0, 5, 0]);
  });

  it('reads an object with a pcfs array, sorting each PCF by time', () => {
    const set = parsePcfJson('{"pcfs": [[[6, 0], [0, 5]]], "note": "ignored"}');
    expect([...set.times]).toEqual([0, 6]);
    expect([...set.values]).toEqual([5, 0]);
  });

  it('reads nested arrays of PCFs with their shape, row-major', () => {
    const set = parsePcfJson('[[[[0, 1]], [[0, 2]], [[0, 3]]], [[[0, 4]], [[0, 5]], [[0, 6]]]]');
    expect(set.shape).toEqual([2, 3]);
    expect([...set.values]).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('reads an empty document as zero PCFs', () => {
    expect(parsePcfJson('[]').count).toBe(0);
    expect(parsePcfJson('{"pcfs": []}').shape).toEqual([0]);
  });

  it('stores float32 when asked', () => {
    const set = parsePcfJson('[[[0, 0.1]]]', { dtype: 'float32' });
    expect(set.values).toBeInstanceOf(Float32Array);
    expect(set.values[0]).toBe(Math.fround(0.1));
  });

  it('rejects invalid JSON, naming the file and keeping the cause', () => {
    const err = formatError(() => parsePcfJson('[[[0, 1]', { file: 'a.json' }));
    expect(err.message).toMatch(/^a\.json: invalid JSON: /);
    expect(err.file).toBe('a.json');
    expect(err.cause).toBeInstanceOf(SyntaxError);
  });

  it('rejects documents that are not arrays of PCFs', () => {
    expect(formatError(() => parsePcfJson('5', { file: 'a.json' })).message).toBe('a.json: expected an array of PCFs or an object with a "pcfs" array, got 5');
    expect(formatError(() => parsePcfJson('{"pcf": []}')).message).toBe('expected an array of PCFs or an object with a "pcfs" array, got an object whose "pcfs" is undefined');
    expect(formatError(() => parsePcfJson('[[0, 1], [2, 0]]')).message).toBe('expected an array of PCFs (each an array of [t, v] pairs), got a single PCF; wrap it in [ ]');
    expect(formatError(() => parsePcfJson('[1, 2]')).message).toBe('expected an array of PCFs (each an array of [t, v] pairs), got an array of length 2');
  });

  it('rejects a malformed breakpoint, naming PCF and breakpoint', () => {
    const doc = '[[[0, 1]], [[0, 1]], [[0, 1]], [[0, 1], [1, 2], "x"]]';
    expect(formatError(() => parsePcfJson(doc, { file: 'in.json' })).message).toBe("in.json: PCF 3, breakpoint 2: expected a [t, v] pair of numbers, got 'x'");
    expect(formatError(() => parsePcfJson('[[[0, 1], [1, null]]]')).message).toBe('PCF 0, breakpoint 1: expected a [t, v] pair of numbers, got null');
    expect(formatError(() => parsePcfJson('[[[0, 1], [1, 2, 3]]]')).message).toBe('PCF 0, breakpoint 1: expected a [t, v] pair of numbers, got an array of length 3');
    expect(formatError(() => parsePcfJson('[[[0, 1]], 7]')).message).toBe('PCF 1: expected an array of [t, v] pairs, got 7');
  });

  it('rejects ragged nesting', () => {
    expect(formatError(() => parsePcfJson('[[[[0, 1]], [[0, 2]]], [[[0, 3]]]]')).message).toBe(
      'expected an array of 2 entries at [1], got an array of length 1 (the nesting must be rectangular, shape [2, 2])',
    );
  });

  it('wraps an invalid PCF as an InputFormatError with the PcfError as cause', () => {
    const err = formatError(() => parsePcfJson('[[[0, 1]], [[0, 1], [-2, 0]]]', { file: 'b.json' }));
    expect(err.message).toBe('b.json: PCF 1: breakpoint 1 has a negative time (-2)');
    expect(err.cause).toBeInstanceOf(PcfError);
    expect((err.cause as PcfError).pcfIndex).toBe(1);
    expect(formatError(() => parsePcfJson('[[[1, 1]]]')).message).toBe('PCF 0: the first breakpoint must be at time 0, but the earliest is breakpoint 0 at time 1');
    expect(formatError(() => parsePcfJson('[[[0, 1]], []]')).message).toBe('PCF 1: has no breakpoints; a PCF starts with a breakpoint at time 0');
    // an empty array inside the document is a PCF with no breakpoints, refused as the API refuses it
    expect(formatError(() => parsePcfJson('[[]]')).message).toBe('PCF 0: has no breakpoints; a PCF starts with a breakpoint at time 0');
  });

  it('rejects an unknown dtype with an OptionError', () => {
    expect(() => parsePcfJson('[]', { dtype: 'float16' as 'float32' })).toThrow(new OptionError("dtype must be one of 'float64', 'float32', got 'float16'"));
  });
});

describe('readPcfFile', () => {
  it('reads a file and names it in errors; a missing file rejects', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pxl-pcf-'));
    try {
      const good = join(dir, 'good.json');
      await writeFile(good, '{"pcfs": [[[0, 1], [1, 0]]]}');
      expect((await readPcfFile(good, { dtype: 'float32' })).dtype).toBe('float32');
      const bad = join(dir, 'bad.json');
      await writeFile(bad, '[[[0, 1], [1, "x"]]]');
      await expect(readPcfFile(bad)).rejects.toThrow(new InputFormatError("PCF 0, breakpoint 1: expected a [t, v] pair of numbers, got 'x'", bad));
      const missing = join(dir, 'missing.json');
      await expect(readPcfFile(missing)).rejects.toBeInstanceOf(InputFormatError);
      await expect(readPcfFile(missing)).rejects.toThrow(/cannot read the file: ENOENT/);
    } finally {
      await rm(dir, { recursive: true });
    }
  });
});

describe('npy', () => {
  const ascii = (bytes: Uint8Array, from: number, to: number): string => String.fromCharCode(...bytes.subarray(from, to));

  it('writes the v1.0 preamble and a float64 header padded to 64 bytes, ending in a newline', () => {
    const bytes = encodeNpy(new Float64Array([1, 2, 3, 4, 5, 6]), [2, 3]);
    expect([...bytes.subarray(0, 8)]).toEqual([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
    const headerLength = bytes[8]! | (bytes[9]! << 8);
    expect((10 + headerLength) % 64).toBe(0);
    const header = ascii(bytes, 10, 10 + headerLength);
    expect(header.trimEnd()).toBe("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }");
    expect(header.endsWith('\n')).toBe(true);
    expect(bytes.length).toBe(10 + headerLength + 48);
    expect(new DataView(bytes.buffer).getFloat64(10 + headerLength + 8, true)).toBe(2);
  });

  it("writes float32 as '<f4' and a 1-D shape with a trailing comma", () => {
    const bytes = encodeNpy(new Float32Array([0.5, 1.5, 2.5]), [3]);
    const headerLength = bytes[8]! | (bytes[9]! << 8);
    expect(ascii(bytes, 10, 10 + headerLength).trimEnd()).toBe("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }");
    expect(bytes.length - 10 - headerLength).toBe(12);
  });

  it('round-trips data, shape and dtype, including empty and multi-dimensional arrays', () => {
    const cases: Array<[Float64Array | Float32Array, number[]]> = [
      [new Float64Array([1.5, -2, Number.MAX_VALUE, 0]), [4]],
      [new Float32Array([1, 2, 3, 4, 5, 6, 7, 8]), [2, 2, 2]],
      [new Float64Array(0), [0]],
      [new Float64Array(0), [3, 0]],
      [new Float64Array([42]), []],
    ];
    for (const [data, shape] of cases) {
      const bytes = encodeNpy(data, shape);
      expect((10 + (bytes[8]! | (bytes[9]! << 8))) % 64).toBe(0);
      const back = decodeNpy(bytes);
      expect(back.shape).toEqual(shape);
      expect(back.dtype).toBe(data instanceof Float64Array ? 'float64' : 'float32');
      expect(back.data).toEqual(data);
    }
  });

  it('encodes a typed array view with its own offset', () => {
    const whole = new Float64Array([9, 1, 2, 9]);
    expect(decodeNpy(encodeNpy(whole.subarray(1, 3), [2])).data).toEqual(new Float64Array([1, 2]));
  });

  it('rejects a shape that does not match the data', () => {
    expect(() => encodeNpy(new Float64Array(5), [2, 3])).toThrow(new OptionError('shape [2, 3] holds 6 elements, but data has 5'));
    expect(() => encodeNpy(new Float64Array(5), [-5])).toThrow(new OptionError('shape must be a list of non-negative integers, got [-5]'));
  });

  it('rejects files it cannot read, saying why', () => {
    expect(() => decodeNpy(new Uint8Array([1, 2, 3]))).toThrow(new InputFormatError('not an .npy file: bad magic string'));
    const bytes = encodeNpy(new Float64Array([1, 2]), [2]);
    expect(() => decodeNpy(bytes.subarray(0, bytes.length - 1))).toThrow(new InputFormatError('.npy data has 15 bytes, but shape (2) of <f8 needs 16'));
  });
});

describe('decodeNpy on a Node Buffer', () => {
  it('reads the values, not the header, when the bytes come from fs.readFile', async () => {
    const { encodeNpy, decodeNpy } = await import('../src/pcf/npy.js');
    const bytes = Buffer.from(encodeNpy(new Float64Array([1.5, -2, 3]), [3]));
    expect(Array.from(decodeNpy(bytes).data)).toEqual([1.5, -2, 3]);
  });
});

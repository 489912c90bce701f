import { describe, it, expect } from 'vitest';
import { ArgumentError, OptionError, PcfError } from '../src/core/errors.js';
import { Pcf } from '../src/pcf/pcf.js';
import { flattenPcfTree, pcfAt, pcfSetFrom, pcfSetFromNested, pcfSize, pcfSubset } from '../src/pcf/pcfSet.js';

const f = [[0, 10], [2, 5], [3, 0]] as Array<[number, number]>;
const g = [[0, 5], [6, 0]] as Array<[number, number]>;
const h = [[0, 1]] as Array<[number, number]>;

function fail(message: string): never {
  throw new ArgumentError(message);
}

describe('pcfSetFrom', () => {
  it('concatenates breakpoints and records where each PCF starts', () => {
    const set = pcfSetFrom([f, g, h]);
    expect(set.dtype).toBe('float64');
    expect(set.count).toBe(3);
    expect(set.shape).toEqual([3]);
    expect([...set.offsets]).toEqual([0, 3, 5, 6]);
    expect([...set.times]).toEqual([0, 2, 3, 0, 6, 0]);
    expect([...set.values]).toEqual([10, 5, 0, 5, 0, 1]);
    expect(pcfSize(set, 1)).toBe(2);
  });

  it('mixes Pcf objects and raw lists, sorting raw lists', () => {
    const set = pcfSetFrom([Pcf.from(g), [[6, 0], [0, 5]]]);
    expect([...set.times]).toEqual([0, 6, 0, 6]);
    expect([...set.values]).toEqual([5, 0, 5, 0]);
  });

  it('converts float64 Pcf objects into a float32 set with rounding', () => {
    const set = pcfSetFrom([Pcf.from([[0, 0.1]])], 'float32');
    expect(set.values).toBeInstanceOf(Float32Array);
    expect(set.values[0]).toBe(Math.fround(0.1));
  });

  it('allocates on SharedArrayBuffers when asked', () => {
    const set = pcfSetFrom([f], 'float64', { shared: true });
    expect(set.times.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(set.values.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(set.offsets.buffer).toBeInstanceOf(SharedArrayBuffer);
  });

  it('accepts an empty list', () => {
    const set = pcfSetFrom([]);
    expect(set.count).toBe(0);
    expect([...set.offsets]).toEqual([0]);
  });

  it('rejects entries that are neither Pcf objects nor lists of pairs', () => {
    expect(() => pcfSetFrom([f, 5 as unknown as Array<[number, number]>])).toThrow(new PcfError(1, 'expected a Pcf or a list of [t, v] pairs, got 5'));
  });

  it('names the index of the invalid PCF', () => {
    expect(() => pcfSetFrom([f, g, [[1, 0]]])).toThrow(new PcfError(2, 'the first breakpoint must be at time 0, but the earliest is breakpoint 0 at time 1'));
  });

  it('takes a shape whose product is the count, and rejects one that is not', () => {
    expect(pcfSetFrom([f, g, h, f, g, h], 'float64', { shape: [2, 3] }).shape).toEqual([2, 3]);
    expect(() => pcfSetFrom([f, g], 'float64', { shape: [3] })).toThrow(new OptionError('shape [3] holds 3 PCFs, but 2 were given'));
    expect(() => pcfSetFrom([f], 'float64', { shape: [1.5] })).toThrow(new OptionError('shape must be a list of non-negative integers, got [1.5]'));
  });

  it('rejects an unknown dtype', () => {
    expect(() => pcfSetFrom([f], 'int32' as 'float64')).toThrow(new OptionError("dtype must be one of 'float64', 'float32', got 'int32'"));
  });
});

describe('pcfAt and pcfSubset', () => {
  const set = pcfSetFrom([f, g, h], 'float32');

  it('pcfAt returns a copy of one PCF with the set dtype', () => {
    const p = pcfAt(set, 1);
    expect(p.dtype).toBe('float32');
    expect(p.points()).toEqual(g);
    expect(() => pcfAt(set, 3)).toThrow(new OptionError('index must be an integer in [0, 2], got 3'));
  });

  it('pcfSubset views a range of PCFs with offsets re-based to 0', () => {
    const sub = pcfSubset(set, 1, 3);
    expect(sub.count).toBe(2);
    expect(sub.shape).toEqual([2]);
    expect([...sub.offsets]).toEqual([0, 2, 3]);
    expect([...sub.times]).toEqual([0, 6, 0]);
    expect(sub.times.buffer).toBe(set.times.buffer);
    expect(pcfSubset(set, 2, 2).count).toBe(0);
    expect(() => pcfSubset(set, 2, 1)).toThrow(new OptionError('subset [2, 1) must satisfy 0 <= start <= end <= 3'));
  });
});

describe('flattenPcfTree', () => {
  it('reads a flat list of PCFs as shape [n]', () => {
    expect(flattenPcfTree([f, g], fail)).toEqual({ leaves: [f, g], shape: [2] });
  });

  it('reads nested arrays row-major with the nesting as shape', () => {
    const { leaves, shape } = flattenPcfTree([[f, g, h], [h, g, f]], fail);
    expect(shape).toEqual([2, 3]);
    expect(leaves).toEqual([f, g, h, h, g, f]);
  });

  it('treats Pcf objects as leaves', () => {
    const p = Pcf.from(f);
    expect(flattenPcfTree([[p], [p]], fail).shape).toEqual([2, 1]);
  });

  it('reads an empty top level as zero PCFs and an empty array inside it as a PCF with no breakpoints', () => {
    expect(flattenPcfTree([], fail).shape).toEqual([0]);
    expect(flattenPcfTree([[], []], fail)).toEqual({ leaves: [[], []], shape: [2] });
    expect(flattenPcfTree([[]], fail)).toEqual({ leaves: [[]], shape: [1] });
    expect(flattenPcfTree([[], f], fail)).toEqual({ leaves: [[], f], shape: [2] });
  });

  it('keeps a PCF with a malformed first breakpoint as a leaf, for the breakpoint check to name', () => {
    expect(flattenPcfTree([['x'], f], fail)).toEqual({ leaves: [['x'], f], shape: [2] });
  });

  it('rejects ragged nesting, naming where', () => {
    expect(() => flattenPcfTree([[f, g], [h]], fail)).toThrow(
      new ArgumentError('expected an array of 2 entries at [1], got an array of length 1 (the nesting must be rectangular, shape [2, 2])'),
    );
  });

  it('rejects a bare PCF and non-arrays', () => {
    expect(() => flattenPcfTree(f, fail)).toThrow(new ArgumentError('expected an array of PCFs (each an array of [t, v] pairs), got a single PCF; wrap it in [ ]'));
    expect(() => flattenPcfTree(5, fail)).toThrow(new ArgumentError('expected an array of PCFs (each an array of [t, v] pairs), got 5'));
    expect(() => flattenPcfTree([1, 2], fail)).toThrow(new ArgumentError('expected an array of PCFs (each an array of [t, v] pairs), got an array of length 2'));
  });
});

describe('pcfSetFromNested', () => {
  it('builds a set shaped like the nesting', () => {
    const set = pcfSetFromNested([[f, g, h], [h, g, f]], 'float32');
    expect(set.shape).toEqual([2, 3]);
    expect(set.count).toBe(6);
    expect(pcfAt(set, 3).points()).toEqual(h);
  });

  it('numbers invalid PCFs row-major', () => {
    expect(() => pcfSetFromNested([[f, g], [h, [[0, 1], [0, 2]]]])).toThrow(new PcfError(3, 'breakpoints 0 and 1 have the same time (0)'));
  });
});

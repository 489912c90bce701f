import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { OptionError } from '../src/core/errors.js';
import { BlockScheduler, maxOutputElementsFor, subdivide, type BlockInfo, type BlockMode } from '../src/blocks/blockScheduler.js';
import { computesPair, type TriangleSkipMode } from '../src/blocks/triangleSkip.js';

const pairs = (bands: { first: number; last: number }[]) => bands.map((b) => [b.first, b.last]);
const corners = (blocks: readonly BlockInfo[]) => blocks.map((b) => [b.rowFirst, b.rowCount, b.colFirst, b.colCount]);

describe('subdivide', () => {
  it('cuts [0, n) into bands of side, the last band keeping the remainder (seed examples)', () => {
    expect(pairs(subdivide(3, 10))).toEqual([[0, 2], [3, 5], [6, 8], [9, 9]]);
    expect(pairs(subdivide(4, 8))).toEqual([[0, 3], [4, 7]]);
    expect(pairs(subdivide(5, 3))).toEqual([[0, 2]]);
  });

  it('returns no bands for n = 0', () => {
    expect(subdivide(3, 0)).toEqual([]);
  });

  it('rejects a side below 1 and a negative n', () => {
    expect(() => subdivide(0, 5)).toThrow(new OptionError('side must be an integer in [1, 9007199254740991], got 0'));
    expect(() => subdivide(2, -1)).toThrow(new OptionError('n must be an integer in [0, 9007199254740991], got -1'));
  });
});

describe('BlockScheduler', () => {
  it('splits a 9x9 lower triangle with side 3 into blocks A..F, with A, C, F on the diagonal (seed figure)', () => {
    const s = new BlockScheduler({ nRows: 9, nCols: 9, mode: 'lowerTriangle', maxOutputElements: 9 });
    expect(s.blockSide).toBe(3);
    // All blocks have equal work, so they keep row-major order: A, B, C, D, E, F.
    expect(s.blocks.map((b) => [b.index, b.rowFirst, b.colFirst, b.rowCount, b.colCount, b.diagonal])).toEqual([
      [0, 0, 0, 3, 3, true], // A
      [1, 3, 0, 3, 3, false], // B
      [2, 3, 3, 3, 3, true], // C
      [3, 6, 0, 3, 3, false], // D
      [4, 6, 3, 3, 3, false], // E
      [5, 6, 6, 3, 3, true], // F
    ]);
  });

  it('computes every block of a 2x3 cdist with side 2: a 2x2 and a 2x1 block (seed example)', () => {
    const s = new BlockScheduler({ nRows: 2, nCols: 3, mode: 'full', maxOutputElements: 4 });
    expect(s.blockSide).toBe(2);
    expect(corners(s.blocks)).toEqual([[0, 2, 0, 2], [0, 2, 2, 1]]);
    expect(s.blocks.map((b) => b.diagonal)).toEqual([false, false]);
  });

  it('orders blocks by descending work, ties in row-major grid order', () => {
    const s = new BlockScheduler({ nRows: 7, nCols: 7, mode: 'full', maxOutputElements: 9 });
    // bands [0,2] [3,5] [6,6]: four 3x3, then 3x1 / 1x3 in grid order, then the 1x1 corner.
    expect(corners(s.blocks)).toEqual([
      [0, 3, 0, 3], [0, 3, 3, 3], [3, 3, 0, 3], [3, 3, 3, 3],
      [0, 3, 6, 1], [3, 3, 6, 1], [6, 1, 0, 3], [6, 1, 3, 3],
      [6, 1, 6, 1],
    ]);
    expect(s.blocks.map((b) => b.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('divides the budget by nSplitsHint before taking the square root', () => {
    expect(new BlockScheduler({ nRows: 1000, nCols: 1000, mode: 'full', maxOutputElements: 1_000_000 }).blockSide).toBe(1000);
    expect(new BlockScheduler({ nRows: 1000, nCols: 1000, mode: 'full', maxOutputElements: 1_000_000, nSplitsHint: 100 }).blockSide).toBe(100);
    expect(new BlockScheduler({ nRows: 1000, nCols: 1000, mode: 'full', maxOutputElements: 1_000_000, nSplitsHint: 3 }).blockSide).toBe(577);
  });

  it('raises the side to minBlockSide, then still caps it at the matrix dimension', () => {
    const base = { nRows: 50, nCols: 20, mode: 'full' as const, maxOutputElements: 100, nSplitsHint: 100 };
    expect(new BlockScheduler(base).blockSide).toBe(1);
    expect(new BlockScheduler({ ...base, minBlockSide: 8 }).blockSide).toBe(8);
    expect(new BlockScheduler({ ...base, minBlockSide: 8 }).blocks.length).toBe(7 * 3);
    expect(new BlockScheduler({ ...base, minBlockSide: 500 }).blockSide).toBe(50);
  });

  it('clamps the side to [1, max(nRows, nCols)]', () => {
    expect(new BlockScheduler({ nRows: 4, nCols: 6, mode: 'full', maxOutputElements: 10_000 }).blockSide).toBe(6);
    expect(new BlockScheduler({ nRows: 4, nCols: 6, mode: 'full', maxOutputElements: 3, nSplitsHint: 5 }).blockSide).toBe(1);
    const empty = new BlockScheduler({ nRows: 0, nCols: 0, mode: 'lowerTriangle', maxOutputElements: 10 });
    expect([empty.blockSide, empty.blocks.length, empty.maxBlockElements, empty.totalPairs]).toEqual([1, 0, 0, 0]);
  });

  it('exposes its bands and the block maxima for sizing buffers once', () => {
    const s = new BlockScheduler({ nRows: 5, nCols: 11, mode: 'full', maxOutputElements: 16 });
    expect(pairs([...s.rowBands])).toEqual([[0, 3], [4, 4]]);
    expect(pairs([...s.colBands])).toEqual([[0, 3], [4, 7], [8, 10]]);
    expect([s.nRows, s.nCols, s.mode]).toEqual([5, 11, 'full']);
    expect([s.maxBlockRows, s.maxBlockCols, s.maxBlockElements, s.totalPairs]).toEqual([4, 4, 16, 55]);
  });

  it('rejects lowerTriangle mode on a rectangular matrix', () => {
    expect(() => new BlockScheduler({ nRows: 3, nCols: 4, mode: 'lowerTriangle', maxOutputElements: 10 })).toThrow(
      new OptionError("mode 'lowerTriangle' needs a square matrix, got nRows = 3 and nCols = 4; use mode 'full' for a rectangular one"),
    );
  });

  it('rejects each out-of-range option with a message naming it', () => {
    const ok = { nRows: 3, nCols: 3, mode: 'full' as BlockMode, maxOutputElements: 9 };
    const cases: [Record<string, unknown>, string][] = [
      [{ nRows: -1 }, 'nRows must be an integer in [0, 9007199254740991], got -1'],
      [{ nCols: 1.5 }, 'nCols must be an integer in [0, 9007199254740991], got 1.5'],
      [{ mode: 'upper' }, "mode must be one of 'lowerTriangle', 'full', got 'upper'"],
      [{ maxOutputElements: 0 }, 'maxOutputElements must be an integer in [1, 9007199254740991], got 0'],
      [{ nSplitsHint: 0 }, 'nSplitsHint must be an integer in [1, 9007199254740991], got 0'],
      [{ minBlockSide: -2 }, 'minBlockSide must be an integer in [0, 9007199254740991], got -2'],
    ];
    for (const [patch, message] of cases) {
      expect(() => new BlockScheduler({ ...ok, ...patch } as never)).toThrow(new OptionError(message));
    }
  });

  it('covers every pair the mode requires exactly once, and never overlaps blocks', () => {
    const shape = fc.record({
      nRows: fc.integer({ min: 0, max: 30 }),
      nCols: fc.integer({ min: 0, max: 30 }),
      mode: fc.constantFrom<BlockMode>('full', 'lowerTriangle'),
      maxOutputElements: fc.integer({ min: 1, max: 1200 }),
      nSplitsHint: fc.integer({ min: 1, max: 40 }),
      minBlockSide: fc.integer({ min: 0, max: 12 }),
      skip: fc.constantFrom<TriangleSkipMode>('lowerTriangle', 'lowerTriangleSkipDiag'),
    });
    fc.assert(
      fc.property(shape, ({ skip, ...o }) => {
        const opts = o.mode === 'lowerTriangle' ? { ...o, nCols: o.nRows } : o;
        const s = new BlockScheduler(opts);
        const skipMode: TriangleSkipMode = o.mode === 'full' ? 'none' : skip;
        const cells = new Uint8Array(opts.nRows * opts.nCols);
        const computed = new Uint8Array(opts.nRows * opts.nCols);
        for (const b of s.blocks) {
          expect(b.rowCount * b.colCount).toBeLessThanOrEqual(s.maxBlockElements);
          for (let i = b.rowFirst; i < b.rowFirst + b.rowCount; i++) {
            for (let j = b.colFirst; j < b.colFirst + b.colCount; j++) {
              cells[i * opts.nCols + j]! += 1;
              if (computesPair(skipMode, i, j)) computed[i * opts.nCols + j]! += 1;
            }
          }
          const meetsDiagonal = b.rowFirst <= b.colFirst + b.colCount - 1 && b.colFirst <= b.rowFirst + b.rowCount - 1;
          expect(b.diagonal).toBe(o.mode === 'lowerTriangle' && meetsDiagonal);
        }
        for (let i = 0; i < opts.nRows; i++) {
          for (let j = 0; j < opts.nCols; j++) {
            expect(cells[i * opts.nCols + j]).toBeLessThanOrEqual(1);
            expect(computed[i * opts.nCols + j]).toBe(computesPair(skipMode, i, j) ? 1 : 0);
          }
        }
        const work = s.blocks.map((b) => b.rowCount * b.colCount);
        expect(work).toEqual([...work].sort((a, b) => b - a));
        expect(s.blocks.map((b) => b.index)).toEqual(s.blocks.map((_, k) => k));
        expect(s.totalPairs).toBe(work.reduce((a, b) => a + b, 0));
      }),
    );
  });
});

describe('maxOutputElementsFor', () => {
  it('keeps fraction of the memory, halves it for the output and divides by the element size', () => {
    expect(maxOutputElementsFor(1000, 8)).toBe(50);
    expect(maxOutputElementsFor(1000, 4)).toBe(100);
    expect(maxOutputElementsFor(1000, 8, 0.5)).toBe(31);
    expect(maxOutputElementsFor(80 * 2 ** 30, 4)).toBe(Math.floor((80 * 2 ** 30 * 0.8) / 8));
  });

  it('rejects negative byte counts, bad element sizes and fractions outside (0, 1]', () => {
    expect(() => maxOutputElementsFor(-1, 8)).toThrow(new OptionError('bytesAvailable must be an integer in [0, 9007199254740991], got -1'));
    expect(() => maxOutputElementsFor(100, 0)).toThrow(new OptionError('bytesPerElement must be an integer in [1, 1024], got 0'));
    expect(() => maxOutputElementsFor(100, 8, 0)).toThrow(new OptionError('fraction must be a number in (0, 1], got 0'));
    expect(() => maxOutputElementsFor(100, 8, 1.5)).toThrow(new OptionError('fraction must be a number in (0, 1], got 1.5'));
  });
});

import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { OptionError } from '../src/core/errors.js';
import { BlockScheduler, type BlockInfo } from '../src/blocks/blockScheduler.js';
import { computesPair, pairsInBlock, pairsInBlocks, type TriangleSkipMode } from '../src/blocks/triangleSkip.js';

const block = (rowFirst: number, rowCount: number, colFirst: number, colCount: number): BlockInfo => ({
  index: 0, rowFirst, rowCount, colFirst, colCount, diagonal: false,
});

describe('computesPair', () => {
  it('computes all pairs, i > j, or i >= j depending on the mode', () => {
    const grid = (mode: TriangleSkipMode) => [0, 1, 2].map((i) => [0, 1, 2].map((j) => (computesPair(mode, i, j) ? 1 : 0)));
    expect(grid('none')).toEqual([[1, 1, 1], [1, 1, 1], [1, 1, 1]]);
    expect(grid('lowerTriangleSkipDiag')).toEqual([[0, 0, 0], [1, 0, 0], [1, 1, 0]]);
    expect(grid('lowerTriangle')).toEqual([[1, 0, 0], [1, 1, 0], [1, 1, 1]]);
  });
});

describe('pairsInBlock', () => {
  it('counts the known answers of a 3x3 diagonal block and an off-diagonal block', () => {
    expect(pairsInBlock('lowerTriangleSkipDiag', block(0, 3, 0, 3))).toBe(3);
    expect(pairsInBlock('lowerTriangle', block(0, 3, 0, 3))).toBe(6);
    expect(pairsInBlock('none', block(0, 3, 0, 3))).toBe(9);
    expect(pairsInBlock('lowerTriangleSkipDiag', block(6, 3, 0, 3))).toBe(9);
    expect(pairsInBlock('lowerTriangle', block(0, 2, 5, 4))).toBe(0);
  });

  it('matches a count over every pair for random blocks', () => {
    const arb = fc.record({
      mode: fc.constantFrom<TriangleSkipMode>('none', 'lowerTriangleSkipDiag', 'lowerTriangle'),
      rowFirst: fc.integer({ min: 0, max: 40 }),
      rowCount: fc.integer({ min: 0, max: 20 }),
      colFirst: fc.integer({ min: 0, max: 40 }),
      colCount: fc.integer({ min: 0, max: 20 }),
    });
    fc.assert(
      fc.property(arb, ({ mode, rowFirst, rowCount, colFirst, colCount }) => {
        let expected = 0;
        for (let i = rowFirst; i < rowFirst + rowCount; i++) {
          for (let j = colFirst; j < colFirst + colCount; j++) if (computesPair(mode, i, j)) expected++;
        }
        expect(pairsInBlock(mode, block(rowFirst, rowCount, colFirst, colCount))).toBe(expected);
      }),
    );
  });

  it('rejects an unknown mode', () => {
    expect(() => pairsInBlock('upper' as TriangleSkipMode, block(0, 1, 0, 1))).toThrow(
      new OptionError("mode must be one of 'none', 'lowerTriangleSkipDiag', 'lowerTriangle', got 'upper'"),
    );
  });
});

describe('pairsInBlocks', () => {
  it('totals n(n-1)/2 and n(n+1)/2 over a lower-triangle schedule', () => {
    const s = new BlockScheduler({ nRows: 23, nCols: 23, mode: 'lowerTriangle', maxOutputElements: 25 });
    expect(pairsInBlocks('lowerTriangleSkipDiag', s.blocks)).toBe((23 * 22) / 2);
    expect(pairsInBlocks('lowerTriangle', s.blocks)).toBe((23 * 24) / 2);
  });
});

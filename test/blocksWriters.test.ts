import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { LogicError, OptionError } from '../src/core/errors.js';
import { BlockScheduler, type BlockInfo } from '../src/blocks/blockScheduler.js';
import { computesPair, type TriangleSkipMode } from '../src/blocks/triangleSkip.js';
import { DenseTensor } from '../src/blocks/denseTensor.js';
import { condensedIndex, DistanceMatrix } from '../src/blocks/distanceMatrix.js';
import { SymmetricMatrix } from '../src/blocks/symmetricMatrix.js';
import { DenseWriter, DistanceMatrixWriter, SymmetricMatrixWriter, type ResultWriter } from '../src/blocks/resultWriter.js';
import type { FloatArray } from '../src/blocks/floatArray.js';

/** A value that differs for every pair and is exact in float32, so scatter mistakes show. */
const valueOf = (i: number, j: number) => i * 64 + j + 1;

/**
 * Runs a schedule the way the pipeline will: one reused buffer, cleared, filled where the mode
 * computes, row-major or (`columns`) column-major.
 */
function runSchedule(s: BlockScheduler, skip: TriangleSkipMode, writer: ResultWriter, buf: FloatArray, columns = false): void {
  for (const b of s.blocks) {
    buf.fill(0, 0, b.rowCount * b.colCount);
    buf.fill(-999, b.rowCount * b.colCount); // beyond the block: must be ignored
    for (let r = 0; r < b.rowCount; r++) {
      for (let c = 0; c < b.colCount; c++) {
        const i = b.rowFirst + r;
        const j = b.colFirst + c;
        if (computesPair(skip, i, j)) buf[columns ? c * b.rowCount + r : r * b.colCount + c] = valueOf(i, j);
      }
    }
    if (columns) writer.writeColumns!(b, buf);
    else writer.write(b, buf);
  }
}

const schedule = fc.record({
  n: fc.integer({ min: 0, max: 25 }),
  maxOutputElements: fc.integer({ min: 1, max: 700 }),
  nSplitsHint: fc.integer({ min: 1, max: 20 }),
  float32: fc.boolean(),
});

// Blocks of up to 90 rows: a DistanceMatrixWriter moves a block in tiles of rows, so blocks must span several.
const tallSchedule = fc.record({
  n: fc.integer({ min: 0, max: 90 }),
  maxOutputElements: fc.integer({ min: 1, max: 8100 }),
  nSplitsHint: fc.integer({ min: 1, max: 4 }),
  float32: fc.boolean(),
});

describe('DistanceMatrix', () => {
  it("stores (i, j) with i < j in scipy's condensed order, at n*i - i*(i+1)/2 + (j - i - 1), and reads symmetrically with a zero diagonal", () => {
    // scipy.spatial.distance.squareform([1, 2, 3, 12, 13, 23]) puts 1 at (0,1), 2 at (0,2), 3 at (0,3), 12 at (1,2), ...
    const d = new DistanceMatrix(4, new Float64Array([1, 2, 3, 12, 13, 23]));
    expect([d.n, d.dtype, d.condensed.length]).toEqual([4, 'float64', 6]);
    expect([d.get(0, 1), d.get(1, 0), d.get(0, 3), d.get(1, 2), d.get(3, 1), d.get(2, 3), d.get(2, 2)]).toEqual([1, 1, 3, 12, 13, 23, 0]);
    expect(Array.from(d.toSquare().data)).toEqual([0, 1, 2, 3, 1, 0, 12, 13, 2, 12, 0, 23, 3, 13, 23, 0]);
    expect(d.toSquare().shape).toEqual([4, 4]);
    expect([0, 1, 2, 3].flatMap((i) => [0, 1, 2, 3].filter((j) => j > i).map((j) => condensedIndex(4, i, j)))).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('allocates zeroed float32 storage and rejects bad sizes and indices', () => {
    const d = new DistanceMatrix(5, 'float32');
    expect(d.condensed).toBeInstanceOf(Float32Array);
    expect(d.toSquare().dtype).toBe('float32');
    expect(new DistanceMatrix(1).condensed.length).toBe(0);
    expect(() => new DistanceMatrix(3, new Float64Array(2))).toThrow(new OptionError('data has 2 elements but a DistanceMatrix of n = 3 needs 3'));
    expect(() => d.get(5, 0)).toThrow(new OptionError('i must be an integer in [0, 4], got 5'));
  });
});

describe('SymmetricMatrix', () => {
  it('stores (i, j) with i >= j at i(i+1)/2 + j and reads symmetrically', () => {
    const k = new SymmetricMatrix(3, new Float32Array([1, 2, 3, 4, 5, 6]));
    expect([k.n, k.dtype, k.get(0, 0), k.get(1, 1), k.get(0, 2), k.get(2, 1)]).toEqual([3, 'float32', 1, 3, 4, 5]);
    expect(Array.from(k.toSquare().data)).toEqual([1, 2, 4, 2, 3, 5, 4, 5, 6]);
  });
});

describe('DenseTensor', () => {
  it('reads row-major elements by one index per axis', () => {
    const t = new DenseTensor([2, 3, 2], new Float64Array(Array.from({ length: 12 }, (_, k) => k)));
    expect([t.size, t.get(0, 0, 1), t.get(1, 2, 0), t.get(1, 0, 1)]).toEqual([12, 1, 10, 7]);
    expect(new DenseTensor([]).size).toBe(1);
  });

  it('rejects bad shapes, data and indices', () => {
    expect(() => new DenseTensor([2, -1])).toThrow(new OptionError('shape[1] must be an integer in [0, 9007199254740991], got -1'));
    expect(() => new DenseTensor([2], new Float64Array(3))).toThrow(new OptionError('data has 3 elements but shape [2] needs 2'));
    expect(() => new DenseTensor([2], new Int32Array(2) as never)).toThrow(new OptionError('data must be a Float32Array or Float64Array, got a Int32Array'));
    expect(() => new DenseTensor([2, 2]).get(1)).toThrow(new OptionError('get needs 2 indices for shape [2, 2], got 1'));
    expect(() => new DenseTensor([2, 2]).get(0, 2)).toThrow(new OptionError('index 1 must be an integer in [0, 1], got 2'));
  });
});

describe('result writers', () => {
  it('scatter every block of a random lower-triangle schedule into a DistanceMatrix as a direct fill would', () => {
    fc.assert(
      fc.property(tallSchedule, ({ n, float32, ...o }) => {
        const s = new BlockScheduler({ nRows: n, nCols: n, mode: 'lowerTriangle', ...o });
        const out = new DistanceMatrix(n, float32 ? 'float32' : 'float64');
        runSchedule(s, 'lowerTriangleSkipDiag', new DistanceMatrixWriter(out), new Float64Array(s.maxBlockElements + 3));
        const direct = new DistanceMatrix(n);
        for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) direct.condensed[n * j - (j * (j + 1)) / 2 + (i - j - 1)] = valueOf(i, j);
        expect(Array.from(out.condensed)).toEqual(Array.from(direct.condensed));
      }),
    );
  });

  it('scatter column-major blocks of a random lower-triangle schedule into a DistanceMatrix as a direct fill would', () => {
    fc.assert(
      fc.property(tallSchedule, ({ n, float32, ...o }) => {
        const s = new BlockScheduler({ nRows: n, nCols: n, mode: 'lowerTriangle', ...o });
        const out = new DistanceMatrix(n, float32 ? 'float32' : 'float64');
        const buf = float32 ? new Float32Array(s.maxBlockElements + 3) : new Float64Array(s.maxBlockElements + 3);
        runSchedule(s, 'lowerTriangleSkipDiag', new DistanceMatrixWriter(out), buf, true);
        const direct = new DistanceMatrix(n);
        for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) direct.condensed[n * j - (j * (j + 1)) / 2 + (i - j - 1)] = valueOf(i, j);
        expect(Array.from(out.condensed)).toEqual(Array.from(direct.condensed));
      }),
    );
  });

  it('scatter every block of a random lower-triangle schedule into a SymmetricMatrix as a direct fill would', () => {
    fc.assert(
      fc.property(schedule, ({ n, float32, ...o }) => {
        const s = new BlockScheduler({ nRows: n, nCols: n, mode: 'lowerTriangle', ...o });
        const out = new SymmetricMatrix(n);
        const buf = float32 ? new Float32Array(s.maxBlockElements) : new Float64Array(s.maxBlockElements);
        runSchedule(s, 'lowerTriangle', new SymmetricMatrixWriter(out), buf);
        const direct = new SymmetricMatrix(n);
        for (let i = 0; i < n; i++) for (let j = 0; j <= i; j++) direct.packed[(i * (i + 1)) / 2 + j] = valueOf(i, j);
        expect(Array.from(out.packed)).toEqual(Array.from(direct.packed));
      }),
    );
  });

  it('scatter every block of a random full schedule into a batched DenseTensor at row * nCols + col', () => {
    const arb = fc.record({
      xShape: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 3 }),
      nCols: fc.integer({ min: 0, max: 15 }),
      maxOutputElements: fc.integer({ min: 1, max: 400 }),
      nSplitsHint: fc.integer({ min: 1, max: 10 }),
    });
    fc.assert(
      fc.property(arb, ({ xShape, nCols, ...o }) => {
        const nRows = xShape.reduce((a, b) => a * b, 1);
        const s = new BlockScheduler({ nRows, nCols, mode: 'full', ...o });
        const out = new DenseTensor([...xShape, nCols], 'float32');
        runSchedule(s, 'none', new DenseWriter(out, nCols), new Float64Array(s.maxBlockElements));
        const direct = new Float32Array(nRows * nCols).map((_, k) => valueOf(Math.floor(k / nCols), k % nCols));
        expect(Array.from(out.data)).toEqual(Array.from(direct));
      }),
    );
  });

  it('throw a LogicError naming the block, the entry and the value when a skipped diagonal entry is non-zero', () => {
    const s = new BlockScheduler({ nRows: 9, nCols: 9, mode: 'lowerTriangle', maxOutputElements: 9 });
    const c = s.blocks[2] as BlockInfo; // block C: rows 3-5, cols 3-5
    const buf = new Float64Array(9);
    buf[4] = 0.5; // (4, 4)
    const write = () => new DistanceMatrixWriter(new DistanceMatrix(9)).write(c, buf);
    expect(write).toThrow(LogicError);
    expect(write).toThrow(
      'block 2 (rows [3, 5], cols [3, 5]) holds 0.5 at skipped entry (4, 4); a DistanceMatrix keeps only entries with i > j, so the kernel must leave the diagonal and the upper triangle at 0',
    );
    // Column-major, (4, 4) is at c * rowCount + r = 1 * 3 + 1 as well; (3, 5) at 2 * 3 + 0.
    expect(() => new DistanceMatrixWriter(new DistanceMatrix(9)).writeColumns(c, buf)).toThrow(
      new LogicError('block 2 (rows [3, 5], cols [3, 5]) holds 0.5 at skipped entry (4, 4); a DistanceMatrix keeps only entries with i > j, so the kernel must leave the diagonal and the upper triangle at 0'),
    );
    const upper = new Float64Array(9);
    upper[6] = 2;
    expect(() => new DistanceMatrixWriter(new DistanceMatrix(9)).writeColumns(c, upper)).toThrow('holds 2 at skipped entry (3, 5)');
    // The same diagonal value is a legitimate kernel-matrix entry.
    expect(() => new SymmetricMatrixWriter(new SymmetricMatrix(9)).write(c, buf)).not.toThrow();
  });

  it('throw a LogicError when a SymmetricMatrix block holds a non-zero above the diagonal', () => {
    const s = new BlockScheduler({ nRows: 9, nCols: 9, mode: 'lowerTriangle', maxOutputElements: 9 });
    const buf = new Float32Array(9);
    buf[2] = -3; // block A, (0, 2)
    expect(() => new SymmetricMatrixWriter(new SymmetricMatrix(9)).write(s.blocks[0] as BlockInfo, buf)).toThrow(
      new LogicError('block 0 (rows [0, 2], cols [0, 2]) holds -3 at skipped entry (0, 2); a SymmetricMatrix keeps only entries with i >= j, so the kernel must leave the upper triangle at 0'),
    );
  });

  it('throw a LogicError for a buffer shorter than the block or a block outside the output', () => {
    const block: BlockInfo = { index: 7, rowFirst: 2, rowCount: 2, colFirst: 0, colCount: 3, diagonal: false };
    expect(() => new DistanceMatrixWriter(new DistanceMatrix(4)).write(block, new Float64Array(5))).toThrow(
      new LogicError('invariant violated: block 7 (rows [2, 3], cols [0, 2]) needs a buffer of 6 elements, got 5'),
    );
    expect(() => new DenseWriter(new DenseTensor([3, 3])).write(block, new Float64Array(6))).toThrow(
      new LogicError('invariant violated: block 7 (rows [2, 3], cols [0, 2]) lies outside the 3 x 3 output'),
    );
  });

  it('reject a DenseWriter nCols that does not divide the tensor', () => {
    expect(() => new DenseWriter(new DenseTensor([2, 3]), 4)).toThrow(new OptionError('nCols = 4 does not divide the size 6 of a tensor of shape [2, 3]'));
  });
});

/**
 * packedRows.ts: a result block packed by a worker and unpacked by the coordinator is the block,
 * with zeros where the kernel computes nothing, and travels as exactly the pairs it computes.
 * Those bytes are little-endian: a big-endian machine refuses to join a cluster.
 */
import { describe, expect, it } from 'vitest';
import { pairsInBlock, type BlockInfo, type TriangleSkipMode } from '../src/blocks/index.js';
import { packedLength, packRows, unpackRows } from '../src/cluster/packedRows.js';
import { checkByteOrder } from '../src/cluster/protocol.js';
import { UnsupportedError } from '../src/core/errors.js';

/** A block as a kernel in `skip` leaves it: value i * 1000 + j + 1 where it computes the pair, else 0. */
function computed(skip: TriangleSkipMode, b: BlockInfo): Float64Array {
  const values = new Float64Array(b.rowCount * b.colCount);
  for (let r = 0; r < b.rowCount; r++) {
    for (let c = 0; c < b.colCount; c++) {
      const i = b.rowFirst + r;
      const j = b.colFirst + c;
      const computes = skip === 'none' || (skip === 'lowerTriangle' ? i >= j : i > j);
      values[r * b.colCount + c] = computes ? i * 1000 + j + 1 : 0;
    }
  }
  return values;
}

const blocks: BlockInfo[] = [
  { index: 0, rowFirst: 0, rowCount: 3, colFirst: 0, colCount: 3, diagonal: true },
  { index: 1, rowFirst: 4, rowCount: 4, colFirst: 4, colCount: 3, diagonal: true },
  { index: 2, rowFirst: 8, rowCount: 2, colFirst: 0, colCount: 4, diagonal: false },
  { index: 3, rowFirst: 0, rowCount: 1, colFirst: 0, colCount: 1, diagonal: true },
];

describe('packed result rows', () => {
  for (const skip of ['none', 'lowerTriangle', 'lowerTriangleSkipDiag'] as const) {
    it(`packs the computed pairs of ${skip} blocks in row order and unpacks them to the block`, () => {
      for (const b of blocks) {
        const block = computed(skip, b);
        const travel = Float64Array.from(block);
        const n = packRows(travel, skip, b);
        expect(n).toBe(pairsInBlock(skip, b));
        expect(packedLength(skip, b)).toBe(n);
        expect(Array.from(travel.subarray(0, n))).toEqual(Array.from(block).filter((v) => v !== 0));
        // The coordinator's buffer holds stale values beyond the packed ones: they must become zeros.
        const landed = new Float64Array(block.length).fill(-1);
        landed.set(travel.subarray(0, n));
        unpackRows(landed, skip, b);
        expect(Array.from(landed)).toEqual(Array.from(block));
      }
    });
  }

  it('sends a diagonal block of side 3 without its upper triangle and diagonal as 3 values', () => {
    const b = blocks[0]!;
    const travel = computed('lowerTriangleSkipDiag', b);
    expect(packRows(travel, 'lowerTriangleSkipDiag', b)).toBe(3);
    expect(Array.from(travel.subarray(0, 3))).toEqual([1001, 2001, 2002]);
  });
});

describe('byte order', () => {
  it('lets a little-endian machine join and refuses a big-endian one, saying why', () => {
    expect(() => checkByteOrder('LE')).not.toThrow();
    expect(() => checkByteOrder()).not.toThrow();
    expect(() => checkByteOrder('BE')).toThrow(UnsupportedError);
    expect(() => checkByteOrder('BE')).toThrow(/big-endian; pxl coordinators and workers exchange little-endian bytes/);
  });
});

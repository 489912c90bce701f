import { describe, expect, it } from 'vitest';
import { BlockScheduler, type BlockInfo } from '../src/blocks/blockScheduler.js';
import { lineElements, stageBlock, stagedElements, stagedRuns, stageLines, stagingLines, type StagedRun } from '../src/blocks/blockStaging.js';
import { npyFileLayout, type FileLayout } from '../src/blocks/npyLayout.js';
import { LogicError } from '../src/core/errors.js';

/** A block's buffer as a kernel leaves it: distinct values where the layout keeps a pair, 0 elsewhere. */
function blockData(kind: FileLayout, b: BlockInfo): Float64Array {
  const buf = new Float64Array(b.rowCount * b.colCount);
  for (let r = 0; r < b.rowCount; r++) {
    for (let c = 0; c < b.colCount; c++) {
      const i = b.rowFirst + r;
      const j = b.colFirst + c;
      if (kind === 'dense' || i > j || (kind === 'square' && i === j)) buf[r * b.colCount + c] = i * 1000 + j + 0.5;
    }
  }
  return buf;
}

describe('block staging', () => {
  for (const kind of ['square', 'condensed', 'dense'] as const) {
    it(`stages a ${kind} block a few lines at a time exactly as in one call`, () => {
      const n = 75;
      const layout = npyFileLayout(kind, 'float64', n, n);
      const scheduler = new BlockScheduler({ nRows: n, nCols: n, mode: kind === 'dense' ? 'full' : 'lowerTriangle', maxOutputElements: 40 * 40, nSplitsHint: 1, minBlockSide: 0 });
      expect(scheduler.blocks.some((b) => b.rowFirst === b.colFirst)).toBe(true);
      expect(scheduler.blocks.some((b) => b.rowFirst !== b.colFirst)).toBe(true);
      for (const block of scheduler.blocks) {
        const buf = blockData(kind, block);
        const whole = new Float64Array(stagedElements(layout, block)).fill(-1);
        const runs: StagedRun[] = [];
        stageBlock(layout, block, buf, whole, runs);
        for (const step of [1, 7, 32]) {
          const steps = new Float64Array(whole.length).fill(-1);
          const lines = stagingLines(layout, block);
          for (let first = 0; first < lines; first += step) stageLines(layout, block, buf, steps, first, Math.min(lines, first + step));
          expect(steps, `block ${block.index}, ${step} lines a step`).toEqual(whole);
        }
        const again: StagedRun[] = [];
        stagedRuns(layout, block, again);
        expect(again).toEqual(runs);
        // Every staged element goes to the file once, and a line fills at most lineElements of it.
        expect(runs.reduce((s, r) => s + r.length, 0)).toBe(whole.length);
        expect(lineElements(layout, block) * stagingLines(layout, block)).toBeGreaterThanOrEqual(whole.length);
        expect(whole.includes(-1)).toBe(false);
      }
    });
  }

  it('refuses, in the step that stages it, a value where a condensed file keeps nothing', () => {
    const layout = npyFileLayout('condensed', 'float64', 4, 4);
    const block: BlockInfo = { index: 3, rowFirst: 0, rowCount: 4, colFirst: 0, colCount: 4, diagonal: true };
    const buf = blockData('condensed', block);
    buf[1 * 4 + 2] = 7;
    const staging = new Float64Array(stagedElements(layout, block));
    expect(() => stageLines(layout, block, buf, staging, 0, 2)).not.toThrow();
    expect(() => stageLines(layout, block, buf, staging, 2, 4)).toThrow(new LogicError('block 3 (rows from 0, cols from 0) holds 7 at skipped entry (1, 2); a condensed result keeps only entries with i > j, so the kernel must leave the diagonal and the upper triangle at 0'));
  });
});

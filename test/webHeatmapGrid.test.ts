import { describe, expect, it } from 'vitest';
import { colorAt, cssGradient } from '../src/web/colormap.js';
import { cellSpan, heatmapGrid } from '../src/web/heatmapGrid.js';
import { distanceView, type MatrixView } from '../src/web/matrixView.js';

/** A distance view whose entry (i, j) is |x_i - x_j|. */
function lineView(xs: readonly number[]): MatrixView {
  const n = xs.length;
  const condensed = new Float64Array((n * (n - 1)) / 2);
  let k = 0;
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) condensed[k++] = Math.abs(xs[i]! - xs[j]!);
  return distanceView(n, condensed);
}

describe('heatmapGrid', () => {
  it('at full size lists the entries in the given order', () => {
    const view = lineView([0, 10, 1]);
    const grid = heatmapGrid(view, [0, 2, 1], 100);
    expect(grid.size).toBe(3);
    expect([...grid.cells]).toEqual([0, 1, 10, 1, 0, 9, 10, 9, 0]);
    expect(grid.min).toBe(0);
    expect(grid.max).toBe(10);
  });

  it('shrinks a large matrix by averaging blocks of entries', () => {
    const view = lineView([0, 0, 4, 4]);
    const grid = heatmapGrid(view, [0, 1, 2, 3], 2);
    expect(grid.size).toBe(2);
    // Top-left block: entries among items 0 and 1 (all 0); off-diagonal block: all 4.
    expect([...grid.cells]).toEqual([0, 4, 4, 0]);
  });

  it('covers every ordered position exactly once with its cell spans', () => {
    const n = 1003;
    const size = 560;
    let next = 0;
    for (let k = 0; k < size; k++) {
      const [from, to] = cellSpan(n, size, k);
      expect(from).toBe(next);
      expect(to).toBeGreaterThan(from);
      next = to;
    }
    expect(next).toBe(n);
  });

  it('refuses an order of the wrong length and a bad side', () => {
    const view = lineView([0, 1, 2]);
    expect(() => heatmapGrid(view, [0, 1], 10)).toThrow('heatmapGrid: the order lists 2 items, the matrix has 3');
    expect(() => heatmapGrid(view, [0, 1, 2], 0)).toThrow('heatmapGrid: side must be an integer >= 1, got 0');
  });
});

describe('colorAt', () => {
  it('runs from dark to bright, clamps outside [0, 1] and greys NaN', () => {
    const brightness = ([r, g, b]: number[]): number => 0.3 * r! + 0.59 * g! + 0.11 * b!;
    let last = -1;
    for (let k = 0; k <= 20; k++) {
      const now = brightness(colorAt(k / 20));
      expect(now).toBeGreaterThan(last);
      last = now;
    }
    expect(colorAt(-3)).toEqual(colorAt(0));
    expect(colorAt(7)).toEqual(colorAt(1));
    expect(colorAt(Number.NaN)).toEqual([128, 128, 128]);
    expect(cssGradient()).toMatch(/^linear-gradient\(to right, rgb\(68 1 84\) 0%, .* rgb\(253 231 37\) 100%\)$/);
  });
});

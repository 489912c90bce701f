import { describe, expect, it } from 'vitest';
import { DistanceMatrix, SymmetricMatrix } from '../src/index.js';
import { distanceView, kernelView } from '../src/web/matrixView.js';

describe('matrixView', () => {
  it('reads a pdist result at every (i, j) as DistanceMatrix.get does', () => {
    const n = 5;
    const d = new DistanceMatrix(n);
    d.condensed.forEach((_, k) => (d.condensed[k] = k + 1));
    const view = distanceView(n, d.condensed);
    expect(view.kind).toBe('distance');
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
      expect(view.value(i, j)).toBe(d.get(i, j));
      if (i !== j) expect(view.dissimilarity(i, j)).toBe(d.get(i, j));
    }
  });

  it('reads an l2Kernel result as SymmetricMatrix.get does, and its dissimilarity is the induced L2 distance', () => {
    const n = 3;
    // Gram matrix of the vectors (1, 0), (0, 2), (3, 4): distances 2.236..., 4.472..., 4.472...
    const vectors = [[1, 0], [0, 2], [3, 4]];
    const k = new SymmetricMatrix(n);
    let at = 0;
    for (let i = 0; i < n; i++) for (let j = 0; j <= i; j++) k.packed[at++] = vectors[i]![0]! * vectors[j]![0]! + vectors[i]![1]! * vectors[j]![1]!;
    const view = kernelView(n, k.packed);
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) expect(view.value(i, j)).toBe(k.get(i, j));
    expect(view.dissimilarity(0, 1)).toBeCloseTo(Math.sqrt(5), 12);
    expect(view.dissimilarity(2, 0)).toBeCloseTo(Math.sqrt(20), 12);
    expect(view.dissimilarity(1, 2)).toBeCloseTo(Math.sqrt(13), 12);
  });

  it('clamps a kernel dissimilarity that rounding makes negative under the root to 0', () => {
    // K(0,0) + K(1,1) - 2 K(0,1) = -2 eps: rounding, not a real negative squared distance.
    const view = kernelView(2, Float64Array.from([1, 1 + Number.EPSILON, 1]));
    expect(1 + 1 - 2 * (1 + Number.EPSILON)).toBeLessThan(0);
    expect(view.dissimilarity(0, 1)).toBe(0);
  });

  it('refuses arrays of the wrong length, naming both lengths', () => {
    expect(() => distanceView(4, new Float64Array(5))).toThrow('distanceView: 4 items need 6 condensed entries, got 5');
    expect(() => kernelView(3, new Float32Array(3))).toThrow('kernelView: 3 items need 6 packed entries, got 3');
  });
});

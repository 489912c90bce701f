/**
 * One read interface over the two results the page computes: a distance matrix (pdist, stored
 * condensed in scipy's order) and a kernel matrix (l2Kernel, stored packed lower triangle). The
 * heatmap reads entries through it and the clustering reads dissimilarities. Pure: structural
 * types only, so it loads in Node for tests without the browser bundle.
 */

/** A float array of a pxl result. */
export type Floats = Float64Array | Float32Array;

/** The entries of an n x n symmetric result, and a dissimilarity to cluster its items by. */
export interface MatrixView {
  /** 'distance': Lp distances (0 on the diagonal); 'kernel': L2 inner products. */
  readonly kind: 'distance' | 'kernel';
  readonly n: number;
  /** Entry (i, j), both in [0, n - 1]; not checked (the heatmap only asks for valid cells). */
  value(i: number, j: number): number;
  /**
   * How far apart items i != j are: the entry itself for distances; for a kernel, the distance it
   * induces, sqrt(K(i,i) + K(j,j) - 2 K(i,j)) (the L2 distance of the two PCFs), clamped at 0
   * against rounding.
   */
  dissimilarity(i: number, j: number): number;
}

/** A view of pdist's result: `condensed` holds (i, j), i < j, at n*i - i*(i+1)/2 + (j - i - 1). */
export function distanceView(n: number, condensed: Floats): MatrixView {
  if (condensed.length !== (n * (n - 1)) / 2) throw new RangeError(`distanceView: ${n} items need ${(n * (n - 1)) / 2} condensed entries, got ${condensed.length}`);
  const value = (i: number, j: number): number => {
    if (i === j) return 0;
    const a = i < j ? i : j;
    const b = i < j ? j : i;
    return condensed[n * a - (a * (a + 1)) / 2 + (b - a - 1)]!;
  };
  return { kind: 'distance', n, value, dissimilarity: value };
}

/** A view of l2Kernel's result: `packed` holds (i, j), i >= j, at i*(i+1)/2 + j. */
export function kernelView(n: number, packed: Floats): MatrixView {
  if (packed.length !== (n * (n + 1)) / 2) throw new RangeError(`kernelView: ${n} items need ${(n * (n + 1)) / 2} packed entries, got ${packed.length}`);
  const value = (i: number, j: number): number => {
    const hi = i > j ? i : j;
    const lo = i > j ? j : i;
    return packed[(hi * (hi + 1)) / 2 + lo]!;
  };
  const dissimilarity = (i: number, j: number): number => Math.sqrt(Math.max(0, value(i, i) + value(j, j) - 2 * value(i, j)));
  return { kind: 'kernel', n, value, dissimilarity };
}

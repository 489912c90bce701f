/**
 * The order in which the heatmap lists rows and columns: the leaves of an average-linkage
 * (UPGMA) dendrogram, left to right, so that items of one cluster sit next to each other and the
 * matrix shows its structure as blocks along the diagonal. Pure: no DOM, unit-tested in Node.
 *
 * The dendrogram is built by the nearest-neighbour chain algorithm, O(n^2) time and memory for n
 * items (average linkage is reducible, so the chain finds the same merges as the textbook
 * closest-pair loop, which is O(n^3)). Above `maxClustered` items only an evenly spaced sample is
 * clustered and every other item joins its nearest sampled item, which keeps memory and time
 * bounded for the sizes a page can compute.
 */

/** Dissimilarity of items i and j: symmetric, finite, not negative; (i, i) is never asked for. */
export type Dissimilarity = (i: number, j: number) => number;

/** Options of {@link clusterOrder}. */
export interface ClusterOrderOptions {
  /** Most items clustered exactly; larger inputs cluster a sample of this size. Default 1500 (18 MiB). */
  readonly maxClustered?: number;
}

/** Default of {@link ClusterOrderOptions.maxClustered}. */
export const DEFAULT_MAX_CLUSTERED = 1500;

/**
 * A permutation of 0 .. n - 1 that puts clustered items together: the leaf order of the
 * average-linkage dendrogram of `distance`.
 *
 * @throws RangeError when n is not a non-negative safe integer, or maxClustered is not an integer >= 2.
 * @example clusterOrder(4, (i, j) => Math.abs([0, 10, 1, 11][i]! - [0, 10, 1, 11][j]!)) // [0, 2, 1, 3] or a mirror
 */
export function clusterOrder(n: number, distance: Dissimilarity, options: ClusterOrderOptions = {}): Uint32Array {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`clusterOrder: n must be an integer >= 0, got ${n}`);
  const maxClustered = options.maxClustered ?? DEFAULT_MAX_CLUSTERED;
  if (!Number.isSafeInteger(maxClustered) || maxClustered < 2) throw new RangeError(`clusterOrder: maxClustered must be an integer >= 2, got ${maxClustered}`);
  if (n <= maxClustered) return averageLinkageLeaves(n, distance);
  return sampledOrder(n, maxClustered, distance);
}

/** Leaf order of the exact average-linkage dendrogram of n items. */
export function averageLinkageLeaves(n: number, distance: Dissimilarity): Uint32Array {
  const order = new Uint32Array(n);
  if (n <= 2) {
    for (let i = 0; i < n; i++) order[i] = i;
    return order;
  }
  // Cluster distances, full square: slot s holds the cluster whose smallest member index is s.
  const d = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const raw = distance(i, j);
      // NaN counts as infinitely far, so that every comparison below is well ordered.
      const v = Number.isNaN(raw) ? Infinity : raw;
      d[i * n + j] = v;
      d[j * n + i] = v;
    }
  }
  const size = new Float64Array(n).fill(1);
  const active = new Uint8Array(n).fill(1);
  // Dendrogram nodes: leaves 0 .. n-1, merges n .. 2n-2 with their two children.
  const nodeOf = new Int32Array(n);
  for (let i = 0; i < n; i++) nodeOf[i] = i;
  const left = new Int32Array(n - 1);
  const right = new Int32Array(n - 1);
  let merges = 0;
  const chain: number[] = [];
  while (merges < n - 1) {
    if (chain.length === 0) chain.push(active.indexOf(1));
    for (;;) {
      const a = chain[chain.length - 1]!;
      const previous = chain.length >= 2 ? chain[chain.length - 2]! : -1;
      // The nearest active cluster to a; ties go to the previous chain element, which is what
      // guarantees the chain ends in a pair of reciprocal nearest neighbours.
      let best = previous;
      let bestD = previous >= 0 ? d[a * n + previous]! : Infinity;
      for (let x = 0; x < n; x++) {
        if (x === a || active[x] === 0) continue;
        const v = d[a * n + x]!;
        if (v < bestD || best < 0) {
          bestD = v;
          best = x;
        }
      }
      if (best === previous) {
        chain.length -= 2;
        const keep = Math.min(a, previous);
        const drop = Math.max(a, previous);
        // Lance-Williams update for average linkage: the size-weighted mean of the two distances.
        const sa = size[keep]!;
        const sb = size[drop]!;
        for (let x = 0; x < n; x++) {
          if (active[x] === 0 || x === keep || x === drop) continue;
          const v = (sa * d[keep * n + x]! + sb * d[drop * n + x]!) / (sa + sb);
          d[keep * n + x] = v;
          d[x * n + keep] = v;
        }
        size[keep] = sa + sb;
        active[drop] = 0;
        left[merges] = nodeOf[keep]!;
        right[merges] = nodeOf[drop]!;
        nodeOf[keep] = n + merges;
        merges++;
        break;
      }
      chain.push(best);
    }
  }
  // Leaves left to right from the root (the last merge), iteratively: n may be thousands deep.
  let k = 0;
  const stack = [n + merges - 1];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node < n) order[k++] = node;
    else {
      stack.push(right[node - n]!);
      stack.push(left[node - n]!);
    }
  }
  return order;
}

/**
 * For n above `m`: cluster m evenly spaced items, then list each of them followed by the items
 * nearest to it (closest first).
 */
function sampledOrder(n: number, m: number, distance: Dissimilarity): Uint32Array {
  const sample = new Uint32Array(m);
  for (let s = 0; s < m; s++) sample[s] = Math.floor((s * n) / m);
  const sampleOrder = averageLinkageLeaves(m, (a, b) => distance(sample[a]!, sample[b]!));
  const nearest = new Uint32Array(n);
  const nearestD = new Float64Array(n);
  const isSample = new Uint8Array(n);
  for (let s = 0; s < m; s++) isSample[sample[s]!] = 1;
  for (let i = 0; i < n; i++) {
    if (isSample[i] === 1) continue;
    let best = 0;
    let bestD = Infinity;
    for (let s = 0; s < m; s++) {
      const v = distance(i, sample[s]!);
      if (v < bestD) {
        bestD = v;
        best = s;
      }
    }
    nearest[i] = best;
    nearestD[i] = bestD;
  }
  const members: number[][] = Array.from({ length: m }, () => []);
  for (let i = 0; i < n; i++) if (isSample[i] === 0) members[nearest[i]!]!.push(i);
  const order = new Uint32Array(n);
  let k = 0;
  for (const s of sampleOrder) {
    order[k++] = sample[s]!;
    const group = members[s]!;
    group.sort((x, y) => nearestD[x]! - nearestD[y]!);
    for (const i of group) order[k++] = i;
  }
  return order;
}

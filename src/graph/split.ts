import { chunk, type Chunk } from '../core/chunk.js';
import { checkCoords, dimsWord, type Dims } from '../core/dims.js';
import { OptionError } from '../core/errors.js';
import type { Range } from '../core/range.js';
import { checkInteger, checkOptionsObject, describe } from '../core/validate.js';
import { evenDeal, shareStart } from './evenShares.js';

/** Options of {@link split}. */
export interface SplitOptions {
  /**
   * Every chunk starts at a multiple of this along each dimension, and every chunk but the last along
   * a dimension has a multiple of it as extent (the last one takes what remains). One number applies
   * to every dimension. Default 1.
   */
  granularity?: number | readonly number[];
  /**
   * How many leading dimensions to cut: 1 (dimension 0 only) or 2 (dimensions 0 and 1; a 3-D range
   * keeps dimension 2 whole). Default: 2 when the range has two or more dimensions, else 1.
   */
  axes?: 1 | 2;
}

const SPLIT_OPTIONS: readonly (keyof SplitOptions)[] = ['granularity', 'axes'];

/**
 * Splits a kernel's index space into at most `count` chunks, one per core or device, in row-major
 * order (dimension 0 outermost), as Celerity's split does. Along each cut dimension with `n` parts,
 * every part gets `⌊extent / (n·g)⌋·g` items (`g` the granularity), the whole granules left over go
 * one each to the first parts, and the last part also takes the tail that is not a whole granule
 * (see `evenShares.ts`; `access.evenSplit` deals buffer rows by the same rule). A chunk is never
 * empty, so fewer than `count` chunks come back when there are fewer granules than that (and none
 * for an empty range; a 0-dimensional range is one item, so one chunk). Examples: 13 items on 5 → 3,3,3,2,2; 80 on 3 with granularity 16 → 32,32,16;
 * 100 on 3 with granularity 16 → 32,32,36.
 *
 * Two-dimensional grids: factor pairs `f × count/f` are tried from `f = ⌊√count⌋` down. For a pair,
 * the orientation that yields more chunks wins (a dimension has at most as many parts as granules);
 * on a tie, a square-ish range (√area / extent of dimension 0 within 5% of 1) takes more cuts along
 * dimension 0, any other the smaller chunk circumference `⌊e0/c0⌋ + ⌊e1/c1⌋`. The first pair that
 * yields exactly `count` chunks is taken, else the one that yields the most. So 256×64 on 8 → 4×2
 * chunks of 64×32, 100×100 on 6 → 3×2 (rows 34,33,33 × columns 50,50), 128×128 on 12 with
 * granularity (16,8) → 4×3 (rows 32,32,32,32 × columns 48,40,40), and 1000×10 on 4 → 2×2.
 * @throws {OptionError} when `count` is not a positive integer, or a granularity or `axes` is invalid,
 *   or an option is unknown; GeometryError when `globalRange` is not 0 to 3 non-negative integers.
 */
export function split<D extends Dims>(globalRange: Range<D>, count: number, options?: SplitOptions): Chunk<D>[] {
  const extent = checkCoords('split globalRange', globalRange);
  const dims = extent.length;
  checkInteger('split count', count, 1, Number.MAX_SAFE_INTEGER);
  const o = checkOptionsObject('split options', options, SPLIT_OPTIONS);
  const gran = granularityOf(o.granularity ?? 1, dims);
  // A 0-dimensional range is one item: one chunk, whatever the count.
  if (dims === 0) return [chunk([], [], []) as unknown as Chunk<D>];
  const axes = checkInteger('split axes', o.axes ?? Math.min(2, dims), 1, Math.min(2, dims));
  if (extent.some((e) => e === 0)) return [];
  const units = extent.map((e, d) => Math.ceil(e / gran[d]!));
  const parts = axes === 1 ? [Math.min(count, units[0]!)] : grid(count, extent, units);
  const cuts = extent.map((e, d) => (d < parts.length ? cut(e, gran[d]!, parts[d]!) : [{ offset: 0, size: e }]));
  const chunks: Chunk<D>[] = [];
  for (const p of product(cuts)) {
    chunks.push(chunk(p.map((s) => s.offset), p.map((s) => s.size), extent) as unknown as Chunk<D>);
  }
  return chunks;
}

interface Segment {
  readonly offset: number;
  readonly size: number;
}

/** Cuts `[0, extent)` into `parts` segments by the even-shares rule; `parts` never exceeds the granules, so none is empty. */
function cut(extent: number, granularity: number, parts: number): Segment[] {
  const deal = evenDeal(extent, parts, granularity);
  const out: Segment[] = [];
  for (let i = 0; i < parts; i++) {
    const offset = shareStart(deal, i);
    out.push({ offset, size: shareStart(deal, i + 1) - offset });
  }
  return out;
}

/** The parts along dimensions 0 and 1 for `count` chunks (see {@link split} for the rule). */
function grid(count: number, extent: readonly number[], units: readonly number[]): [number, number] {
  let best: [number, number] = [0, 0];
  for (let f = Math.floor(Math.sqrt(count)); f >= 1; f--) {
    while (f > 1 && count % f !== 0) f--;
    const pair = orient(f, count / f, extent, units);
    if (pair[0] * pair[1] > best[0] * best[1]) best = pair;
    if (pair[0] * pair[1] === count) break;
  }
  return best;
}

/** Which of the factors `f0 <= f1` cuts dimension 0, limited by the granules of each dimension. */
function orient(f0: number, f1: number, extent: readonly number[], units: readonly number[]): [number, number] {
  const a: [number, number] = [Math.min(f0, units[0]!), Math.min(f1, units[1]!)];
  const b: [number, number] = [Math.min(f1, units[0]!), Math.min(f0, units[1]!)];
  if (a[0] * a[1] !== b[0] * b[1]) return a[0] * a[1] > b[0] * b[1] ? a : b;
  // Square-ish ranges cut dimension 0 more often: its chunks are then contiguous runs of memory.
  const squareness = Math.sqrt(extent[0]! * extent[1]!) / extent[0]!;
  if (squareness > 0.95 && squareness < 1.05) return f0 >= f1 ? a : b;
  // Otherwise the shorter chunk edges: less boundary, so stencils exchange less.
  const edge = (p: [number, number]): number => Math.floor(extent[0]! / p[0]) + Math.floor(extent[1]! / p[1]);
  return edge(a) < edge(b) ? a : b;
}

function granularityOf(value: number | readonly number[], dims: number): number[] {
  if (typeof value === 'number') return new Array<number>(dims).fill(checkInteger('split granularity', value, 1, Number.MAX_SAFE_INTEGER));
  if (!Array.isArray(value) || value.length !== dims) {
    throw new OptionError(`split granularity must be a number or one number per dimension of the ${dimsWord(dims)} range, got ${describe(value)}`);
  }
  return value.map((g: unknown, d) => checkInteger(`split granularity[${d}]`, g, 1, Number.MAX_SAFE_INTEGER));
}

/** All combinations of one segment per dimension, dimension 0 outermost. */
function product(cuts: readonly Segment[][]): Segment[][] {
  return cuts.reduce<Segment[][]>((acc, segs) => acc.flatMap((prefix) => segs.map((s) => [...prefix, s])), [[]]);
}

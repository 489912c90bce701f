import { chunk, type Chunk } from '../core/chunk.js';
import { checkCoords, dimsWord, type Dims } from '../core/dims.js';
import { OptionError } from '../core/errors.js';
import type { Range } from '../core/range.js';
import { checkInteger, checkOptionsObject, describe } from '../core/validate.js';

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
 * order (dimension 0 outermost). Along each cut dimension the extent is dealt out in units of the
 * granularity as evenly as possible, larger parts first, so the first chunk is the largest; a chunk is
 * never empty, so fewer than `count` chunks come back when there are fewer units than that (and none
 * for an empty range). Examples: 13 items on 5 → 3,3,3,2,2; 80 on 3 with granularity 16 → 32,32,16.
 *
 * Two-dimensional grids: among the factor pairs `rows × columns = count`, split picks the one that
 * (1) yields the most non-empty chunks, then (2) makes the largest chunk's rows + columns smallest
 * (square-ish chunks have the least boundary, so stencils exchange the least), then (3) cuts dimension
 * 0 more often. So 100×100 on 6 → 3×2 (rows 34,33,33 × columns 50,50), 128×128 on 12 with
 * granularity (16,8) → 4×3 (rows 32,32,32,32 × columns 48,40,40), and 1000×10 on 4 → 4×1.
 * @throws {OptionError} when `count` is not a positive integer, or a granularity or `axes` is invalid,
 *   or an option is unknown; GeometryError when `globalRange` is not 1 to 3 non-negative integers.
 */
export function split<D extends Dims>(globalRange: Range<D>, count: number, options?: SplitOptions): Chunk<D>[] {
  const extent = checkCoords('split globalRange', globalRange);
  const dims = extent.length;
  checkInteger('split count', count, 1, Number.MAX_SAFE_INTEGER);
  const o = checkOptionsObject('split options', options, SPLIT_OPTIONS);
  const gran = granularityOf(o.granularity ?? 1, dims);
  const axes = checkInteger('split axes', o.axes ?? Math.min(2, dims), 1, Math.min(2, dims));
  if (extent.some((e) => e === 0)) return [];
  const units = extent.map((e, d) => Math.ceil(e / gran[d]!));
  const parts = axes === 1 ? [Math.min(count, units[0]!)] : grid(count, extent, units, gran);
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

/** Cuts `[0, extent)` into `parts` segments of whole granules, larger first, the last one trimmed. */
function cut(extent: number, granularity: number, parts: number): Segment[] {
  const units = Math.ceil(extent / granularity);
  const base = Math.floor(units / parts);
  const extra = units % parts;
  const out: Segment[] = [];
  let offset = 0;
  for (let i = 0; i < parts; i++) {
    const size = Math.min((base + (i < extra ? 1 : 0)) * granularity, extent - offset);
    out.push({ offset, size });
    offset += size;
  }
  return out;
}

/** The rows × columns grid for `count` chunks (see {@link split} for the rule). */
function grid(count: number, extent: readonly number[], units: readonly number[], gran: readonly number[]): [number, number] {
  let best: { rows: number; cols: number; chunks: number; perimeter: number } | undefined;
  for (const rows of divisorsDescending(count)) {
    const r = Math.min(rows, units[0]!);
    const c = Math.min(count / rows, units[1]!);
    const chunks = r * c;
    const perimeter = cut(extent[0]!, gran[0]!, r)[0]!.size + cut(extent[1]!, gran[1]!, c)[0]!.size;
    // Rows are tried from most to fewest, so on a full tie the earlier (more rows) candidate stays.
    if (best === undefined || chunks > best.chunks || (chunks === best.chunks && perimeter < best.perimeter)) {
      best = { rows: r, cols: c, chunks, perimeter };
    }
  }
  return [best!.rows, best!.cols];
}

function divisorsDescending(n: number): number[] {
  const small: number[] = [];
  const large: number[] = [];
  for (let i = 1; i * i <= n; i++) {
    if (n % i !== 0) continue;
    small.push(i);
    if (i * i !== n) large.push(n / i);
  }
  return [...large, ...small.reverse()];
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

/**
 * How pxl deals an extent out to `parts` consecutive shares, the one rule that `split` (kernel
 * chunks) and `access.evenSplit` (buffer rows per chunk) share, as Celerity's split and even_split do:
 *
 * - every share gets `step = ⌊extent / (parts·g)⌋·g` items, a whole number of granules `g`;
 * - the whole granules left over go one each to the first shares;
 * - the last share also takes the tail that is not a whole granule.
 *
 * So share `i` starts at `i·step + min(i, R)·g`, where `R = ⌊(extent − parts·step) / g⌋`, and the
 * end of the last share is the extent. 10 in 3 → [0,4) [4,7) [7,10); 100 in 3 with g = 16 → 32, 32, 36.
 * Shares may be empty when there are fewer granules than parts.
 */

/** The parameters of one even deal: built once, asked per share. */
export interface EvenDeal {
  readonly extent: number;
  readonly parts: number;
  readonly granularity: number;
  readonly step: number;
  /** Whole granules left after every share took `step`, handed to the first shares. */
  readonly extraGranules: number;
}

/** The deal of `extent` into `parts` shares of granularity `granularity` (all positive integers but `extent`, which may be 0). */
export function evenDeal(extent: number, parts: number, granularity: number): EvenDeal {
  const step = Math.floor(extent / (parts * granularity)) * granularity;
  const extraGranules = Math.floor((extent - parts * step) / granularity);
  return { extent, parts, granularity, step, extraGranules };
}

/** Where share `i` starts, for `0 <= i <= parts`; share `parts` "starts" at the extent. */
export function shareStart(deal: EvenDeal, i: number): number {
  if (i >= deal.parts) return deal.extent;
  // i·step <= parts·step <= extent, so this stays a safe integer.
  return i * deal.step + Math.min(i, deal.extraGranules) * deal.granularity;
}

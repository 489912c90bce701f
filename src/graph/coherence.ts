import { boxOfRange } from '../core/box.js';
import { checkCoords, type Dims } from '../core/dims.js';
import { OptionError } from '../core/errors.js';
import type { Range } from '../core/range.js';
import { checkIndexSet, emptyRegion, formatRegion, region as makeRegion, union, type IndexSet, type Region } from '../core/region.js';
import { checkInteger, checkOneOf, describe } from '../core/validate.js';
import { RegionMap, type RegionEntry } from './regionMap.js';

declare const memorySpaceBrand: unique symbol;

/** Identifies a memory space; branded so it never type-checks as a task or buffer id. */
export type MemorySpaceId = number & { readonly [memorySpaceBrand]: true };

/** What kind of memory a space is. */
export type MemorySpaceKind = 'host' | 'gpu' | 'remote';

/**
 * A memory that can hold a copy of a buffer: the host's shared memory (where the CPU backend's cores
 * work, zero copies), a GPU's memory, or a remote node's memory. A kernel runs in one space and
 * needs the newest copy of what it reads there first.
 */
export interface MemorySpace {
  readonly id: MemorySpaceId;
  readonly kind: MemorySpaceKind;
  readonly name: string;
}

/**
 * Makes a {@link MemorySpace}.
 * @throws {OptionError} when `id` is not a non-negative integer or `kind` is unknown.
 * @example memorySpace(1, 'gpu', 'GPU 0')
 */
export function memorySpace(id: number, kind: MemorySpaceKind, name: string): MemorySpace {
  checkInteger('memory space id', id, 0, Number.MAX_SAFE_INTEGER);
  checkOneOf('memory space kind', kind, ['host', 'gpu', 'remote'] as const);
  if (typeof name !== 'string' || name === '') throw new OptionError('a memory space needs a non-empty name');
  return Object.freeze({ id: id as MemorySpaceId, kind, name });
}

/** The host's shared memory: where the CPU backend's MU cores and the host both read and write. */
export const HOST_MEMORY: MemorySpace = memorySpace(0, 'host', 'host shared memory');

/** One copy of a buffer region from one memory space to another. */
export interface Copy<D extends Dims = Dims> {
  readonly from: MemorySpaceId;
  readonly to: MemorySpaceId;
  readonly region: Region<D>;
}

/** Renders a copy as `space 1 → space 0 {[(0,0),(4,8))}`. */
export function formatCopy(c: Copy): string {
  return `space ${c.from} → space ${c.to} ${formatRegion(c.region)}`;
}

/** The spaces holding a region's newest copy, sorted by id; empty where nothing was ever written. */
export type Holders = readonly MemorySpaceId[];

const holdersKey = (h: Holders): string => h.join(',');

/**
 * The coherence table of one buffer: which memory spaces hold the newest copy of which region.
 *
 * A write in space S makes S the only holder of what it wrote; a copy into S adds S to the holders
 * of what it copied. {@link copiesFor} answers "what must move so that S has the newest copy of
 * this region", exactly: the copies' regions are disjoint, and their union is precisely the part of
 * the region whose newest copy lives elsewhere (never-written points need no copy). Source choice:
 * the holder with the smallest id, so the plan is deterministic.
 *
 * With only host shared memory every kernel runs where the newest copy already is, and the copies
 * are always empty; GPU and remote memory spaces use the same bookkeeping.
 */
export class CoherenceTable<D extends Dims = Dims> {
  readonly bufferRange: Range<D>;
  readonly #map: RegionMap<D, Holders>;

  /**
   * @param bufferRange the buffer's extent.
   * @param initial where the buffer's initial contents are (host data given at creation), or
   *   undefined when the buffer starts unwritten.
   * @throws GeometryError for an extent that is not 0 to 3 non-negative integers; OptionError for
   *   an `initial` that is not a memory space id.
   */
  constructor(bufferRange: Range<D>, initial?: MemorySpaceId) {
    checkCoords('CoherenceTable bufferRange', bufferRange);
    if (initial !== undefined) checkInteger('CoherenceTable initial (a memory space id)', initial, 0, Number.MAX_SAFE_INTEGER);
    this.bufferRange = bufferRange;
    this.#map = new RegionMap<D, Holders>(bufferRange, initial === undefined ? [] : [initial], holdersKey);
  }

  /** The holders of each part of `region` (parts never written have no holder). */
  holders(region: IndexSet<D>): RegionEntry<D, Holders>[] {
    checkIndexSet('CoherenceTable.holders', 'region', region);
    return this.#map.query(region);
  }

  /** The part of `region` no space holds: it was never written. */
  unwritten(region: IndexSet<D>): Region<D> {
    checkIndexSet('CoherenceTable.unwritten', 'region', region);
    const parts = this.#map.query(region).filter((e) => e.value.length === 0);
    return makeRegion(this.bufferRange.length as D, parts.map((e) => e.region));
  }

  /**
   * The copies that give `space` the newest copy of everything in `region` that has one, one per
   * source space, ordered by source id. Does not change the table; see {@link applyCopies}.
   */
  copiesFor(space: MemorySpaceId, region: IndexSet<D>): Copy<D>[] {
    checkInteger('CoherenceTable.copiesFor space (a memory space id)', space, 0, Number.MAX_SAFE_INTEGER);
    checkIndexSet('CoherenceTable.copiesFor', 'region', region);
    const bySource = new Map<MemorySpaceId, Region<D>>();
    for (const { region: part, value } of this.#map.query(region)) {
      if (value.length === 0 || value.includes(space)) continue;
      const from = value[0]!;
      bySource.set(from, union(bySource.get(from) ?? emptyRegion(this.bufferRange.length as D), part));
    }
    return [...bySource.entries()].sort((a, b) => a[0] - b[0]).map(([from, r]) => Object.freeze({ from, to: space, region: r }));
  }

  /** Records that these copies ran: each target now holds the newest copy of its region too. */
  applyCopies(copies: readonly Copy<D>[]): void {
    if (!Array.isArray(copies)) throw new OptionError(`CoherenceTable.applyCopies: copies must be an array of copies (from copiesFor), got ${describe(copies)}`);
    copies.forEach((c: Partial<Copy<D>> | null, i) => checkIndexSet('CoherenceTable.applyCopies', 'the region of copies', c?.region, i));
    for (const c of copies) this.#map.update(c.region, (h) => (h.length === 0 || h.includes(c.to) ? h : [...h, c.to].sort((a, b) => a - b)));
  }

  /** Records a write in `space`: it alone holds the newest copy of `region` now. */
  written(space: MemorySpaceId, region: IndexSet<D>): void {
    checkInteger('CoherenceTable.written space (a memory space id)', space, 0, Number.MAX_SAFE_INTEGER);
    checkIndexSet('CoherenceTable.written', 'region', region);
    this.#map.assign(region, [space]);
  }

  /** Every entry of the table: disjoint regions covering the buffer, each with its holders. */
  get entries(): readonly RegionEntry<D, Holders>[] {
    return this.#map.entries;
  }

  /** The whole buffer as a region. */
  get everything(): Region<D> {
    return makeRegion(this.bufferRange.length as D, [boxOfRange(this.bufferRange)]);
  }
}

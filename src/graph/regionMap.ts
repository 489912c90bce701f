import { boxOfRange } from '../core/box.js';
import type { Dims } from '../core/dims.js';
import type { Range } from '../core/range.js';
import { difference, intersection, isEmpty, regionOf, union, type IndexSet, type Region } from '../core/region.js';

/** One part of a region map (a buffer's regions keyed by value): the points that map to `value`. */
export interface RegionEntry<D extends Dims, V> {
  readonly region: Region<D>;
  readonly value: V;
}

/**
 * A value for every point of a buffer, stored as disjoint regions with one value each: what the task
 * graph keeps per buffer (the last writer of each point, the readers since then) and what the
 * coherence table keeps (which memory spaces hold the newest copy of each point).
 *
 * Normal form: the entries partition `[0, domain)` exactly, and no two entries have values of the
 * same key, so points with equal values always share one entry. The number of entries is therefore
 * bounded by the number of distinct values, however many updates came before; a ping-pong of two
 * writers keeps two entries per buffer, not one per step.
 *
 * Not thread-safe; the graph is built on the main thread only.
 */
export class RegionMap<D extends Dims, V> {
  readonly domain: Range<D>;
  readonly #key: (value: V) => string;
  #entries: RegionEntry<D, V>[];

  /**
   * @param domain the extent every point of which has a value.
   * @param initial the value of every point at the start.
   * @param key equal keys mean equal values: their regions are merged into one entry.
   */
  constructor(domain: Range<D>, initial: V, key: (value: V) => string) {
    this.domain = domain;
    this.#key = key;
    this.#entries = [{ region: regionOf(boxOfRange(domain)), value: initial }];
  }

  /** Every entry, in no particular order; together they partition the domain. */
  get entries(): readonly RegionEntry<D, V>[] {
    return this.#entries;
  }

  /** The values on `region`, as disjoint parts of it (empty parts left out). */
  query(region: IndexSet<D>): RegionEntry<D, V>[] {
    const out: RegionEntry<D, V>[] = [];
    if (isEmpty(region)) return out;
    for (const e of this.#entries) {
      const part = intersection(e.region, region);
      if (!isEmpty(part)) out.push({ region: part, value: e.value });
    }
    return out;
  }

  /** Replaces the value of every point of `region` by `f` of its old value. */
  update(region: IndexSet<D>, f: (old: V) => V): void {
    if (isEmpty(region)) return;
    const next = new Map<string, { region: Region<D>; value: V }>();
    const add = (r: Region<D>, value: V): void => {
      const k = this.#key(value);
      const same = next.get(k);
      if (same === undefined) next.set(k, { region: r, value });
      else same.region = union(same.region, r);
    };
    for (const e of this.#entries) {
      const inside = intersection(e.region, region);
      if (isEmpty(inside)) {
        add(e.region, e.value);
        continue;
      }
      const outside = difference(e.region, region);
      if (!isEmpty(outside)) add(outside, e.value);
      add(inside, f(e.value));
    }
    this.#entries = [...next.values()];
  }

  /** Replaces every value by `f` of it, everywhere; entries whose new values have equal keys merge. */
  map(f: (old: V) => V): void {
    const next = new Map<string, { region: Region<D>; value: V }>();
    for (const e of this.#entries) {
      const value = f(e.value);
      const k = this.#key(value);
      const same = next.get(k);
      if (same === undefined) next.set(k, { region: e.region, value });
      else same.region = union(same.region, e.region);
    }
    this.#entries = [...next.values()];
  }

  /** Sets every point of `region` to `value`. */
  assign(region: IndexSet<D>, value: V): void {
    this.update(region, () => value);
  }
}

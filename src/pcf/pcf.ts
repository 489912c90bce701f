import { OptionError, PcfError } from '../core/errors.js';
import { checkInteger, checkOptionsObject, describe } from '../core/validate.js';
import { checkBreakpoint, sameTimeMessage } from './breakpointCheck.js';

/**
 * Piecewise constant functions (PCFs) with masspcf's semantics: breakpoints (t_k, v_k) with
 * t_0 = 0 and strictly increasing times; f(t) = v_k on [t_k, t_{k+1}); the last value extends to
 * +infinity. Integrals run over [0, M) where M is the largest finite value of the dtype.
 */

/** Element type of a PCF's times and values. */
export type PcfDtype = 'float32' | 'float64';

/** The typed array that holds a PCF's times or values. */
export type PcfArray = Float64Array | Float32Array;

/** Largest finite float32, as a JS number. */
export const FLOAT32_MAX = 3.4028234663852886e38;

/** The dtypes a PCF can have, in a fixed order. */
export const PCF_DTYPES: readonly PcfDtype[] = ['float64', 'float32'];

/**
 * Upper limit M of every integral over PCFs of `dtype`: `Number.MAX_VALUE` for float64 and
 * {@link FLOAT32_MAX} for float32.
 *
 * @throws OptionError when `dtype` is not `'float64'` or `'float32'`.
 * @example integrationLimit('float32') // 3.4028234663852886e38
 */
export function integrationLimit(dtype: PcfDtype): number {
  if (dtype === 'float32') return FLOAT32_MAX;
  if (dtype === 'float64') return Number.MAX_VALUE;
  throw new OptionError(`integrationLimit: dtype must be one of 'float64', 'float32', got ${describe(dtype)}`);
}

/** Allocates a typed array of `dtype` with `length` elements, on a SharedArrayBuffer when `shared`. */
export function allocPcfArray(dtype: PcfDtype, length: number, shared = false): PcfArray {
  if (dtype === 'float32') return shared ? new Float32Array(new SharedArrayBuffer(4 * length)) : new Float32Array(length);
  return shared ? new Float64Array(new SharedArrayBuffer(8 * length)) : new Float64Array(length);
}

/** Options of {@link Pcf.from}. */
export interface PcfFromOptions {
  /** Storage type of times and values; float32 rounds them on construction. Default `'float64'`. */
  dtype?: PcfDtype;
  /** Index of this PCF in its collection, named by every error message. Default 0. */
  index?: number;
}

/**
 * Validates the breakpoints of PCF number `index` and writes them, sorted by time, into
 * `times[at..at+n)` and `values[at..at+n)` (rounded to the arrays' precision). Returns n.
 *
 * Checks, in order: at least one breakpoint; each breakpoint a pair (exactly two entries) of numbers with a finite,
 * non-negative time and a finite value (also after rounding to float32); after sorting, the first
 * time is 0 and no two times are equal. Breakpoints in messages are numbered in input order.
 *
 * @throws PcfError naming `index`, what is wrong and at which breakpoint.
 */
export function writeBreakpoints(
  points: ArrayLike<readonly [number, number]>,
  index: number,
  times: PcfArray,
  values: PcfArray,
  at: number,
): number {
  const n = points.length;
  if (n === 0) throw new PcfError(index, 'has no breakpoints; a PCF starts with a breakpoint at time 0');
  const f32 = times instanceof Float32Array;
  let sorted = true;
  let prev = -1;
  for (let k = 0; k < n; k++) {
    const p = points[k] as unknown;
    const pair = p as readonly [unknown, unknown] | null | undefined;
    if (pair === null || typeof pair !== 'object' || typeof pair[0] !== 'number' || typeof pair[1] !== 'number') {
      const got = pair !== null && typeof pair === 'object' ? (typeof pair[0] === 'number' ? pair[1] : pair[0]) : p;
      // A breakpoint that is itself a list of pairs: nested arrays of PCFs given where a list of PCFs goes.
      const first = pair !== null && typeof pair === 'object' ? (pair[0] as ArrayLike<unknown> | null | undefined) : undefined;
      const nested = Array.isArray(first) && typeof first[0] === 'number';
      const hint = nested ? '; it holds [t, v] pairs itself, so this looks like nested arrays of PCFs: pass pcfSetFromNested(array) for a set with a shape, or flatten it into one list of PCFs' : '';
      throw new PcfError(index, `breakpoint ${k} is not a [t, v] pair of numbers (got ${describe(got)})${hint}`);
    }
    // A third element is not ignored: it is most likely a column in the wrong place (as the JSON
    // reader and the CLI refuse it too).
    if ((pair as ArrayLike<unknown>).length !== 2) {
      throw new PcfError(index, `breakpoint ${k} is not a [t, v] pair of numbers (got ${describe(pair)}); each breakpoint has exactly two entries, time and value`);
    }
    const t = pair[0] + 0; // +0 turns -0 into 0
    const v = pair[1];
    checkBreakpoint(index, k, t, v, f32);
    if (!(t > prev)) sorted = false;
    prev = t;
    times[at + k] = t;
    values[at + k] = v;
  }
  let order: number[] | undefined;
  if (!sorted) {
    const keys = new Float64Array(n);
    for (let k = 0; k < n; k++) keys[k] = (points[k] as readonly [number, number])[0] + 0;
    order = Array.from({ length: n }, (_, k) => k).sort((x, y) => keys[x]! - keys[y]!);
    for (let k = 0; k < n; k++) {
      const src = points[order[k]!] as readonly [number, number];
      times[at + k] = src[0] + 0;
      values[at + k] = src[1];
    }
  }
  const orig = (k: number): number => (order === undefined ? k : order[k]!);
  if (times[at] !== 0) {
    throw new PcfError(index, `the first breakpoint must be at time 0, but the earliest is breakpoint ${orig(0)} at time ${times[at]}`);
  }
  for (let k = 1; k < n; k++) {
    if (times[at + k]! <= times[at + k - 1]!) {
      const a = orig(k - 1);
      const b = orig(k);
      throw new PcfError(index, sameTimeMessage(a, b, times[at + k]!, (points[a] as readonly [number, number])[0], (points[b] as readonly [number, number])[0], f32));
    }
  }
  return n;
}

/**
 * An immutable piecewise constant function. Build one with {@link Pcf.from}.
 *
 * @example
 * const f = Pcf.from([[0, 10], [2, 5], [3, 0]]);
 * f.evaluate(2.5); // 5
 */
export class Pcf {
  readonly #dtype: PcfDtype;
  readonly #times: PcfArray;
  readonly #values: PcfArray;

  private constructor(dtype: PcfDtype, times: PcfArray, values: PcfArray) {
    this.#dtype = dtype;
    this.#times = times;
    this.#values = values;
  }

  /**
   * Builds a PCF from breakpoints `[t, v]` in any order; they are sorted by time.
   *
   * @param points breakpoints; one must be at time 0.
   * @param options dtype (default `'float64'`) and the index errors name (default 0).
   * @throws PcfError when the breakpoints are empty, malformed, non-finite, negative in time,
   *   lack time 0 or repeat a time, or when `points` is not an array; OptionError for an unknown
   *   option, a dtype other than float64 and float32, or an index that is not an integer >= 0.
   * @example Pcf.from([[2, 0], [0, 1]], { dtype: 'float32' }).times // Float32Array [0, 2]
   */
  static from(points: ArrayLike<readonly [number, number]>, options: PcfFromOptions = {}): Pcf {
    const o = checkOptionsObject('Pcf.from options', options, ['dtype', 'index']);
    const dtype = o.dtype ?? 'float64';
    if (dtype !== 'float64' && dtype !== 'float32') {
      throw new OptionError(`dtype must be one of 'float64', 'float32', got ${describe(dtype)}`);
    }
    const index = checkInteger('index', o.index ?? 0, 0, Number.MAX_SAFE_INTEGER);
    if (points === null || typeof points !== 'object' || !Number.isSafeInteger(points.length)) {
      throw new PcfError(index, `expected an array of [t, v] pairs, got ${describe(points)}`);
    }
    const n = points.length;
    const times = allocPcfArray(dtype, n);
    const values = allocPcfArray(dtype, n);
    writeBreakpoints(points, index, times, values, 0);
    return new Pcf(dtype, times, values);
  }

  /** Storage type of times and values. */
  get dtype(): PcfDtype {
    return this.#dtype;
  }

  /** Breakpoint times, strictly increasing from 0. Treat as read-only. */
  get times(): PcfArray {
    return this.#times;
  }

  /** Breakpoint values; `values[k]` holds on `[times[k], times[k + 1])`. Treat as read-only. */
  get values(): PcfArray {
    return this.#values;
  }

  /** Number of breakpoints (at least 1). */
  get size(): number {
    return this.#times.length;
  }

  /**
   * The value at time `t`: `values[k]` for the last breakpoint with `times[k] <= t`.
   *
   * @throws OptionError when `t` is negative or NaN (a PCF is defined on [0, +infinity)).
   */
  evaluate(t: number): number {
    if (!(t >= 0)) throw new OptionError(`t must be a number >= 0, got ${describe(t)}`);
    const times = this.#times;
    let lo = 0;
    let hi = times.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (times[mid]! <= t) lo = mid;
      else hi = mid - 1;
    }
    return this.#values[lo]!;
  }

  /** The breakpoints as `[t, v]` pairs, sorted by time. */
  points(): Array<[number, number]> {
    return Array.from(this.#times, (t, k) => [t, this.#values[k]!]);
  }
}

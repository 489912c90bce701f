import { OptionError, OutOfMemoryError } from '../core/errors.js';
import { checkBoolean, checkInteger, checkOptionsObject, describe } from '../core/validate.js';
import { allocPcfArray } from './pcf.js';
import type { PcfArray, PcfDtype } from './pcf.js';
import { MAX_SET_BREAKPOINTS, type PcfSet } from './pcfSet.js';

/**
 * Seeded random PCFs for tests and benchmarks: the same options give the same PCFs on every
 * machine and every run.
 */

/**
 * xoshiro128** (Blackman and Vigna): a small, fast 32-bit generator with a 2^128 - 1 period,
 * seeded through splitmix32 so that nearby seeds give unrelated streams.
 */
export class SeededRng {
  #s0: number;
  #s1: number;
  #s2: number;
  #s3: number;

  /** @param seed any safe integer; seeds that differ give different streams. */
  constructor(seed: number) {
    let x = (seed >>> 0) ^ Math.imul(Math.floor(seed / 0x1_0000_0000) >>> 0, 0x9e3779b9);
    const next = (): number => {
      x = (x + 0x9e3779b9) | 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
      z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
      return (z ^ (z >>> 15)) >>> 0;
    };
    this.#s0 = next();
    this.#s1 = next();
    this.#s2 = next();
    this.#s3 = next();
  }

  /** The next 32 random bits as an unsigned integer. */
  nextUint32(): number {
    const s0 = this.#s0;
    const s1 = this.#s1;
    const s2 = this.#s2 ^ s0;
    const s3 = this.#s3 ^ s1;
    const m = Math.imul(s1, 5);
    const result = Math.imul((m << 7) | (m >>> 25), 9) >>> 0;
    const t = s1 << 9;
    this.#s1 = s1 ^ s2;
    this.#s0 = s0 ^ s3;
    this.#s2 = s2 ^ t;
    this.#s3 = (s3 << 11) | (s3 >>> 21);
    return result;
  }

  /** A uniform double in [0, 1) with 53 random bits. */
  nextDouble(): number {
    const hi = this.nextUint32() >>> 5; // 27 bits
    const lo = this.nextUint32() >>> 6; // 26 bits
    return (hi * 67108864 + lo) / 9007199254740992;
  }
}

/** Options of {@link randomPcfs}. */
export interface RandomPcfsOptions {
  /** Number of PCFs. */
  n: number;
  /** Breakpoints per PCF, at least 1. */
  points: number;
  /** Generator seed, a non-negative safe integer. Default 0. */
  seed?: number;
  /** Storage type. Default `'float64'`. */
  dtype?: PcfDtype;
  /** Allocate on SharedArrayBuffers: the CPU cores of pdist, cdist and l2Kernel then read it where it lies instead of copying it, so the process holds it once. Default false. */
  shared?: boolean;
}

/** Upper end (exclusive) of the random breakpoint times. */
export const RANDOM_TIME_SPAN = 10;

/**
 * `n` random PCFs of `points` breakpoints each: t_0 = 0, the other times sorted uniform on
 * [0, 10), values uniform on [0, 1) and the last value 0 (so every integral is finite). Times that
 * collide in float32 (whatever the dtype) or round to 0 or 10 in the dtype are redrawn, so every
 * PCF is valid, in float64 and rounded to float32.
 *
 * @throws OptionError for options that are not an object, an unknown option, n or points out of
 *   range (n * points at most {@link MAX_SET_BREAKPOINTS}), a bad seed or dtype; OutOfMemoryError
 *   when the arrays cannot be allocated.
 * @example randomPcfs({ n: 1000, points: 100, seed: 1 }).count // 1000
 */
export function randomPcfs(options: RandomPcfsOptions): PcfSet {
  if (options === null || typeof options !== 'object') {
    throw new OptionError(`randomPcfs options must be an object such as { n: 100, points: 10 }, got ${describe(options)}`);
  }
  const o = checkOptionsObject('randomPcfs options', options, ['n', 'points', 'seed', 'dtype', 'shared'], { count: 'n', breakpoints: 'points' });
  const n = checkInteger('n', o.n, 0, MAX_SET_BREAKPOINTS);
  const points = checkInteger('points', o.points, 1, MAX_SET_BREAKPOINTS);
  const seed = checkInteger('seed', o.seed ?? 0, 0, Number.MAX_SAFE_INTEGER);
  const dtype = o.dtype ?? 'float64';
  if (dtype !== 'float64' && dtype !== 'float32') {
    throw new OptionError(`dtype must be one of 'float64', 'float32', got ${describe(dtype)}`);
  }
  const shared = o.shared === undefined ? false : checkBoolean('shared', o.shared);
  // The set must be one pdist can take: no more breakpoints than any PcfSet holds.
  if (n * points > MAX_SET_BREAKPOINTS) {
    throw new OptionError(`n * points must be at most ${MAX_SET_BREAKPOINTS} (the most breakpoints a PCF set holds), got ${n} * ${points} = ${n * points}; lower n or points`);
  }
  const round = dtype === 'float32' ? Math.fround : (x: number): number => x;
  const rng = new SeededRng(seed);
  const bytes = n * points * 2 * (dtype === 'float32' ? 4 : 8) + 4 * (n + 1);
  let times: PcfArray;
  let values: PcfArray;
  let offsets: Uint32Array;
  try {
    times = allocPcfArray(dtype, n * points, shared);
    values = allocPcfArray(dtype, n * points, shared);
    offsets = shared ? new Uint32Array(new SharedArrayBuffer(4 * (n + 1))) : new Uint32Array(n + 1);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    throw new OutOfMemoryError(bytes, 0, `randomPcfs: ${n} PCFs of ${points} breakpoints need ${bytes} bytes, which could not be allocated (${err.message}); lower n or points`);
  }
  const draw = new Float64Array(points);
  for (let i = 0; i < n; i++) {
    const at = i * points;
    for (;;) {
      for (let k = 1; k < points; k++) draw[k] = round(rng.nextDouble() * RANDOM_TIME_SPAN);
      draw.subarray(1).sort();
      let ok = true;
      // Distinct in float32 as well: a float64 set must stay valid read or computed as float32.
      for (let k = 1; k < points; k++) if (!(Math.fround(draw[k]!) > Math.fround(draw[k - 1]!))) ok = false;
      if (ok && round(draw[points - 1]!) < RANDOM_TIME_SPAN) break;
    }
    for (let k = 0; k < points; k++) times[at + k] = draw[k]!;
    for (let k = 0; k < points - 1; k++) {
      let v = round(rng.nextDouble());
      while (v >= 1) v = round(rng.nextDouble());
      values[at + k] = v;
    }
    values[at + points - 1] = 0;
    offsets[i + 1] = at + points;
  }
  return { dtype, count: n, shape: Object.freeze([n]), times, values, offsets };
}

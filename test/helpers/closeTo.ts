import { AssertionError } from 'node:assert';

/** A vector or a matrix of numbers (rows may be any array-like of numbers). */
export type Numbers = ArrayLike<number> | ReadonlyArray<ArrayLike<number>>;

/** How close is close enough. */
export interface Tolerance {
  /** Relative tolerance, against the larger magnitude of the two entries. Default 0. */
  readonly rtol?: number;
  /** Absolute tolerance. Default 0. */
  readonly atol?: number;
  /** Whether an entry that is NaN in both arrays counts as equal. Default false: any NaN fails. */
  readonly nanEqual?: boolean;
  /** Names the compared thing in the failure message, e.g. "pdist of 40 PCFs". */
  readonly what?: string;
}

/**
 * Asserts that `actual` and `expected` have the same shape and that every pair of entries satisfies
 * `|a - e| <= atol + rtol * max(|a|, |e|)`. Infinities must be equal. NaN fails (in either array)
 * unless `nanEqual` and both are NaN, so a result left NaN-filled, or a reference that went NaN,
 * never passes. The failure names the first bad entry's index, both values and the bound, and how
 * many entries are bad in all.
 */
export function expectAllClose(actual: Numbers, expected: Numbers, tolerance: Tolerance = {}): void {
  const { rtol = 0, atol = 0, nanEqual = false, what = 'values' } = tolerance;
  const a = flatten(actual, 'actual', what);
  const e = flatten(expected, 'expected', what);
  if (a.shape !== e.shape) fail(`${what}: shape ${a.shape} differs from the expected ${e.shape}`);
  let bad = 0;
  let first = '';
  for (let k = 0; k < e.values.length; k++) {
    const x = a.values[k]!;
    const y = e.values[k]!;
    const ok = Number.isNaN(x) || Number.isNaN(y)
      ? nanEqual && Number.isNaN(x) && Number.isNaN(y)
      : x === y || (Number.isFinite(x) && Number.isFinite(y) && Math.abs(x - y) <= atol + rtol * Math.max(Math.abs(x), Math.abs(y)));
    if (ok) continue;
    if (bad++ === 0) {
      const bound = atol + rtol * Math.max(Math.abs(x), Math.abs(y));
      first = `${what}${e.index(k)}: got ${x}, expected ${y} (difference ${Math.abs(x - y)}, allowed ${bound} with rtol ${rtol}, atol ${atol})`;
    }
  }
  if (bad > 0) fail(`${first}; ${bad} of ${e.values.length} entries differ`);
}

function fail(message: string): never {
  throw new AssertionError({ message });
}

interface Flat {
  readonly values: number[];
  readonly shape: string;
  readonly index: (k: number) => string;
}

function flatten(data: Numbers, side: string, what: string): Flat {
  if (data === null || typeof data !== 'object' || typeof data.length !== 'number') fail(`${what}: the ${side} array is ${String(data)}, not an array`);
  const first = data.length > 0 ? (data as ArrayLike<unknown>)[0] : undefined;
  if (first === undefined || typeof first === 'number') {
    const values = Array.from(data as ArrayLike<number>);
    return { values, shape: `[${values.length}]`, index: (k) => `[${k}]` };
  }
  const rows = Array.from(data as ReadonlyArray<ArrayLike<number>>);
  const lengths = rows.map((r) => r.length);
  const starts: number[] = [];
  const values: number[] = [];
  for (const r of rows) {
    starts.push(values.length);
    for (let j = 0; j < r.length; j++) values.push(r[j]!);
  }
  const index = (k: number): string => {
    let i = starts.length - 1;
    while (starts[i]! > k) i--;
    return `[${i}][${k - starts[i]!}]`;
  };
  return { values, shape: `[${lengths.join(', ')}] (row lengths)`, index };
}

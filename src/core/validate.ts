import { OptionError } from './errors.js';

/**
 * Validators for user-supplied options. Each throws an {@link OptionError} whose message names the
 * option and the constraint, e.g. "batchSize must be an integer in [1, 1048575], got 0". Public
 * calls run them once, up front, before any work starts, so a bad option never surfaces later as a
 * raw TypeError from deep inside the runtime.
 */
export function checkInteger(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new OptionError(`${name} must be an integer in [${min}, ${max}], got ${describe(value)}`);
  }
  return value;
}

export function checkOneOf<T extends string>(name: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new OptionError(`${name} must be one of ${allowed.map((a) => `'${a}'`).join(', ')}, got ${describe(value)}`);
  }
  return value as T;
}

/**
 * A finite number in `[min, max]`.
 *
 * @example checkNumber('p', 0.5, 1, Infinity) // throws "p must be a finite number >= 1, got 0.5"
 */
export function checkNumber(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    const range = max === Infinity ? `>= ${min}` : min === -Infinity ? `<= ${max}` : `in [${min}, ${max}]`;
    throw new OptionError(`${name} must be a finite number ${range}, got ${describe(value)}`);
  }
  return value;
}

/** `true` or `false` (not a truthy string such as `'yes'`). */
export function checkBoolean(name: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw new OptionError(`${name} must be true or false, got ${describe(value)}`);
  return value;
}

/** A function, checked before any work starts so that a bad callback never fails midway. */
export function checkFunction<F extends (...args: never[]) => unknown>(name: string, value: unknown): F {
  if (typeof value !== 'function') throw new OptionError(`${name} must be a function, got ${describe(value)}`);
  return value as F;
}

/** An AbortSignal (from an AbortController, or `AbortSignal.timeout(ms)`). */
export function checkAbortSignal(name: string, value: unknown): AbortSignal {
  if (!(value instanceof AbortSignal)) {
    throw new OptionError(`${name} must be an AbortSignal (for example new AbortController().signal), got ${describe(value)}`);
  }
  return value;
}

/**
 * An options object: `undefined` reads as `{}`; `null`, arrays and non-objects are refused, and so
 * is any own key not in `known`, naming the nearest known key when one is close ("did you mean").
 * Keys whose value is `undefined` count as absent, as they do for every default in pxl.
 * `aliases` maps words users reach for (`threads`) to the option that does it (`topology`).
 *
 * @param name how the message names the object, e.g. `'pdist options'`.
 * @throws OptionError "pdist options has no option 'q'; did you mean 'p'? Valid options: ..."
 * @example const o = checkOptionsObject('createContext options', options, ['backend', 'trace']);
 */
export function checkOptionsObject<T extends object>(
  name: string,
  value: T | undefined,
  known: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): T {
  if (value === undefined) return {} as T;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new OptionError(`${name} must be an object of options (or left out), got ${describe(value)}`);
  }
  for (const key of Object.keys(value)) {
    if (known.includes(key) || (value as Record<string, unknown>)[key] === undefined) continue;
    const near = Object.hasOwn(aliases, key) ? aliases[key] : nearest(key, known);
    const hint = near === undefined ? '.' : `; did you mean '${near}'?`;
    throw new OptionError(`${name} has no option '${key}'${hint} Valid options: ${known.map((k) => `'${k}'`).join(', ')}`);
  }
  return value;
}

/**
 * The candidate closest to `word` by edit distance (case-insensitive), if it is close enough to be
 * a likely typo: at most a third of the longer word's letters differ, or one word contains the
 * other (`threads` → `coresPerCluster` is not close; `memSize` → `memorySize` is).
 */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const lc = c.toLowerCase();
    // Containment counts only for words long enough to mean something ('p' is in 'dtype').
    const contains = Math.min(w.length, lc.length) >= 3 && (lc.includes(w) || w.includes(lc));
    const d = contains ? Math.abs(lc.length - w.length) / 4 : editDistance(w, lc);
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  if (best === undefined) return undefined;
  const limit = Math.max(1, Math.floor(Math.max(w.length, best.length) / 3));
  return bestDistance <= limit ? best : undefined;
}

/** Levenshtein distance, with one row of the table. */
function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(above + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

/** A short, safe rendering of any value for error messages. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'bigint') return `${value}n`;
  // String(fn) is the function's whole source text: too long and beside the point in a message.
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return value.toString();
  if (value === null || typeof value !== 'object') return String(value);
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  const ctor = (value as object).constructor?.name;
  return ctor && ctor !== 'Object' ? `a ${ctor}` : 'an object';
}

import { OptionError } from './errors.js';

/**
 * Validators for user-supplied options. Each throws an {@link OptionError} whose message names the
 * option and the constraint, e.g. "batchSize must be an integer in [1, 1048575], got 0".
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

/** A short, safe rendering of any value for error messages. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'bigint') return `${value}n`;
  // String(fn) is the function's whole source text: too long and beside the point in a message.
  if (typeof value === 'function') return 'a function';
  if (value === null || typeof value !== 'object') return String(value);
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  const ctor = (value as object).constructor?.name;
  return ctor && ctor !== 'Object' ? `a ${ctor}` : 'an object';
}

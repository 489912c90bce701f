/**
 * Sizes as people type them on a command line: `512M`, `2G`, `2Gi`, `1.5GiB`, `1048576`. The unit
 * letters K, M, G and T are powers of 1024 (with or without a trailing `B`, `i` or `iB`), as
 * `ulimit` and container limits read them; a bare number (or one with `B`) is bytes.
 */
import { InvalidArgumentError } from 'commander';

const UNITS: Readonly<Record<string, number>> = { '': 1, K: 2 ** 10, M: 2 ** 20, G: 2 ** 30, T: 2 ** 40 };

/**
 * Bytes of `text`, rounded down to a whole byte.
 *
 * @throws InvalidArgumentError (commander's usage error) for anything else, saying what is accepted.
 * @example parseSize('512M') // 536870912
 * @example parseSize('1.5G') // 1610612736
 */
export function parseSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(?:([KMGT])(?:iB|i|B)?|B)?\s*$/i.exec(text);
  if (m === null) throw new InvalidArgumentError('expected a size such as 512M, 2G or 1073741824 (K, M, G, T are powers of 1024).');
  const bytes = Math.floor(Number(m[1]) * UNITS[(m[2] ?? '').toUpperCase()]!);
  // A well-formed size out of range is told so; the caller says what least it needs (0 is well-formed).
  if (!Number.isSafeInteger(bytes)) throw new InvalidArgumentError(`it is more than ${Number.MAX_SAFE_INTEGER} bytes, the most a size here can be.`);
  return bytes;
}

/**
 * The browser bundle's twin of powersOfFive.ts: the same table, built with BigInt at the first
 * number that needs it (12 to 25 ms once) instead of decoded from 10 kB of text, which would add
 * 11 kB gzipped to a bundle held under 100 kB. test/decimalToDouble.test.ts checks the two tables
 * word for word.
 */

/** Range of q with a table entry: below it w * 10^q rounds to 0, above it to infinity. */
export const SMALLEST_Q = -342;
export const LARGEST_Q = 308;

/**
 * The table as the method defines it, built with BigInt: for q >= 0 the leading 128 bits of 5^q,
 * truncated; for q < 0 the quotient 2^b / 5^-q plus one, with b putting it just above 2^127 for
 * q >= -27, and below that computed with twice the bits and then truncated to 128.
 */
export function powersOfFive(): Uint32Array {
  const table = new Uint32Array((LARGEST_Q - SMALLEST_Q + 1) * 4);
  const top = 1n << 128n;
  const half = 1n << 127n;
  for (let q = SMALLEST_Q; q <= LARGEST_Q; q++) {
    let c: bigint;
    if (q < 0) {
      const p = 5n ** BigInt(-q);
      // p is not a power of two, so 2^(z-1) < p < 2^z for z its bit length.
      const z = p.toString(2).length;
      if (q >= -27) {
        c = (1n << BigInt(z + 127)) / p + 1n;
      } else {
        c = (1n << BigInt(2 * z + 128)) / p + 1n;
        while (c >= top) c >>= 1n;
      }
    } else {
      c = 5n ** BigInt(q);
      while (c < half) c <<= 1n;
      while (c >= top) c >>= 1n;
    }
    const at = (q - SMALLEST_Q) * 4;
    for (let k = 0; k < 4; k++) table[at + k] = Number((c >> BigInt(96 - 32 * k)) & 0xffffffffn);
  }
  return table;
}

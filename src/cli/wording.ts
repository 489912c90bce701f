/** Small helpers for the sentences the CLI prints. */

/** `n` and `what`, with an s unless n is 1: "1 PCF", "3 PCFs". */
export function plural(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

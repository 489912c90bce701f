import { PcfError } from '../core/errors.js';
import { checkBreakpoint, sameTimeMessage } from './breakpointCheck.js';
import type { PcfArray } from './pcf.js';

/**
 * The checks and ordering of `writeBreakpoints` (pcf.ts) for breakpoints that arrive as two
 * columns of numbers instead of `[t, v]` pairs: the JSON stream reader validates each PCF as it
 * closes, without building an array per breakpoint. The messages are the same word for word, so a
 * document gets the same answer from the stream reader as from `pcfSetFrom`.
 *
 * @param ts times as read, `n` of them; `vs` the values beside them.
 * @param times receives the times in time order from index `at`, stored in its own precision
 *   (float32 rounding happens before the order and zero checks, as in `writeBreakpoints`);
 *   `values` likewise.
 * @throws PcfError naming PCF `index` and the breakpoint, numbered as in the input.
 */
export function writeFlatBreakpoints(ts: Float64Array, vs: Float64Array, n: number, index: number, times: PcfArray, values: PcfArray, at: number): void {
  if (n === 0) throw new PcfError(index, 'has no breakpoints; a PCF starts with a breakpoint at time 0');
  const f32 = times instanceof Float32Array;
  let sorted = true;
  let prev = -1;
  for (let k = 0; k < n; k++) {
    const t = ts[k]! + 0; // +0 turns -0 into 0
    const v = vs[k]!;
    checkBreakpoint(index, k, t, v, f32);
    if (!(t > prev)) sorted = false;
    prev = t;
    times[at + k] = t;
    values[at + k] = v;
  }
  let order: number[] | undefined;
  if (!sorted) {
    order = Array.from({ length: n }, (_, k) => k).sort((x, y) => ts[x]! + 0 - (ts[y]! + 0));
    for (let k = 0; k < n; k++) {
      times[at + k] = ts[order[k]!]! + 0;
      values[at + k] = vs[order[k]!]!;
    }
  }
  if (times[at] !== 0) {
    throw new PcfError(index, `the first breakpoint must be at time 0, but the earliest is breakpoint ${order === undefined ? 0 : order[0]} at time ${times[at]}`);
  }
  for (let k = 1; k < n; k++) {
    if (times[at + k]! <= times[at + k - 1]!) {
      const a = order === undefined ? k - 1 : order[k - 1]!;
      const b = order === undefined ? k : order[k]!;
      throw new PcfError(index, sameTimeMessage(a, b, times[at + k]!, ts[a]!, ts[b]!, f32));
    }
  }
}

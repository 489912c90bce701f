// The single-thread baselines of bench/pdist and bench/cli: every pair of a PcfSet once, on this
// thread, in plain JavaScript.
//
// - `plainLoop` is issue 16's "straightforward single-thread JavaScript loop": the merge of two
//   breakpoint lists written the obvious way, one rectangle per step, with an if for each side's
//   advance. Its branches follow the data, so they mispredict about half the time.
// - `pairKernelLoop` runs pxl's own JS pair kernels (src/pcf/pairKernels.ts), whose merge is written
//   to be branch-free: 2.6-2.8 times as fast as the plain loop on the development machine. It is
//   the stricter baseline, printed beside the plain one.
//
// Both sum the same rectangles with the same expressions in the same order as every pxl kernel, so
// their results equal pxl's float64 results bit for bit (p = 1 and 2).
import { integrationLimit } from 'pxl';
import { l1Pair, l2Pair } from '../../dist/pcf/pairKernels.js';

// L1 and L2 are written out separately, as a plain loop would be: a shared loop taking the
// integrand as a function or flag would measure that generality too.

/** The L1 distance of one pair, the plain way; same arguments as l1Pair. */
function plainL1(aTimes, aValues, aStart, aEnd, bTimes, bValues, bStart, bEnd, upper) {
  let i = aStart;
  let j = bStart;
  let t = 0;
  let sum = 0;
  while (i + 1 < aEnd || j + 1 < bEnd) {
    const ta = i + 1 < aEnd ? aTimes[i + 1] : Infinity;
    const tb = j + 1 < bEnd ? bTimes[j + 1] : Infinity;
    const right = ta < tb ? ta : tb;
    sum += (right - t) * Math.abs(aValues[i] - bValues[j]);
    t = right;
    if (ta === right) i++;
    if (tb === right) j++;
  }
  return sum + (upper - t) * Math.abs(aValues[i] - bValues[j]);
}

/** The L2 distance of one pair, the plain way; same arguments as l2Pair. */
function plainL2(aTimes, aValues, aStart, aEnd, bTimes, bValues, bStart, bEnd, upper) {
  let i = aStart;
  let j = bStart;
  let t = 0;
  let sum = 0;
  while (i + 1 < aEnd || j + 1 < bEnd) {
    const ta = i + 1 < aEnd ? aTimes[i + 1] : Infinity;
    const tb = j + 1 < bEnd ? bTimes[j + 1] : Infinity;
    const right = ta < tb ? ta : tb;
    const d = aValues[i] - bValues[j];
    sum += (right - t) * (d * d);
    t = right;
    if (ta === right) i++;
    if (tb === right) j++;
  }
  const d = aValues[i] - bValues[j];
  return Math.sqrt(sum + (upper - t) * (d * d));
}

/** Every pair (i, j), j < i, of a float64 `set` through `pair`, in scipy's condensed order of rows. */
function allPairs(set, pair) {
  const { times, values, offsets, count } = set;
  const upper = integrationLimit('float64');
  const out = new Float64Array((count * (count - 1)) / 2);
  let k = 0;
  for (let i = 1; i < count; i++) {
    for (let j = 0; j < i; j++) out[k++] = pair(times, values, offsets[i], offsets[i + 1], times, values, offsets[j], offsets[j + 1], upper);
  }
  return out;
}

/** Issue 16's baseline: the plain merge, one thread; entry (i, j) of row i > j at i(i-1)/2 + j. */
export function plainLoop(set, p) {
  return allPairs(set, p === 1 ? plainL1 : plainL2);
}

/** The stricter baseline: pxl's branch-free JS pair kernels, one thread; same order as plainLoop. */
export function pairKernelLoop(set, p) {
  return allPairs(set, p === 1 ? l1Pair : l2Pair);
}

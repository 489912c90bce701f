import { ArgumentError, OptionError, PcfError } from '../core/errors.js';
import { checkBoolean, checkOptionsObject, describe } from '../core/validate.js';
import { allocPcfArray, Pcf, PCF_DTYPES, writeBreakpoints } from './pcf.js';
import type { PcfArray, PcfDtype } from './pcf.js';

/**
 * The flattened layout the kernels read: every PCF's breakpoints concatenated into one times array
 * and one values array, and an offsets array saying where each PCF starts. PCF k owns breakpoints
 * `offsets[k] .. offsets[k + 1] - 1`.
 *
 * ```
 * PCF 0: breakpoints 0..2     offsets = [0, 3, 5, 8]
 * PCF 1: breakpoints 3..4
 * PCF 2: breakpoints 5..7
 * ```
 */
export interface PcfData {
  /** Breakpoint times; each PCF's slice starts at 0 and strictly increases. */
  readonly times: PcfArray;
  /** Breakpoint values, parallel to `times`. */
  readonly values: PcfArray;
  /** `count + 1` entries; `offsets[0] = 0`, `offsets[count]` = total breakpoints. */
  readonly offsets: Uint32Array;
}

/**
 * A validated collection of PCFs in the flattened {@link PcfData} layout, with a logical `shape`
 * (row-major) so cdist can take multi-dimensional inputs. Treat every array as read-only.
 */
export interface PcfSet extends PcfData {
  readonly dtype: PcfDtype;
  /** Number of PCFs, the product of `shape`. */
  readonly count: number;
  /** Logical shape; `[count]` for a flat list, e.g. `[2, 3]` for a 2 x 3 array of PCFs. */
  readonly shape: readonly number[];
}

/** A PCF, or its breakpoints as `[t, v]` pairs in any order. */
export type PcfLike = Pcf | ArrayLike<readonly [number, number]>;

/** Options of {@link pcfSetFrom}. */
export interface PcfSetOptions {
  /** Storage type of the set. Default `'float64'`. */
  dtype?: PcfDtype;
  /** Logical shape; its product must equal the number of PCFs. Default `[pcfs.length]`. */
  shape?: readonly number[];
  /** Allocate the arrays on SharedArrayBuffers, which worker threads can read: the CPU cores of pdist, cdist and l2Kernel then read it where it lies instead of copying it, so the process holds it once. Default false. */
  shared?: boolean;
}

/** Most breakpoints a set can hold: offsets are Uint32, and kernels index with int32 arithmetic. */
export const MAX_SET_BREAKPOINTS = 0x7fff_ffff;

/**
 * Validates and flattens PCFs into a {@link PcfSet}. Raw breakpoint lists are sorted by time; Pcf
 * objects of another dtype are converted (and re-validated, since rounding to float32 can merge
 * times).
 *
 * Takes its options as the second argument (`pcfSetFrom(pcfs, { dtype: 'float32', shared: true })`),
 * or a dtype string there and the other options third (`pcfSetFrom(pcfs, 'float32', { shared: true })`).
 *
 * @param pcfs the PCFs, in row-major order of `options.shape`.
 * @throws PcfError naming the index of the first invalid PCF; OptionError for a bad dtype, an
 *   unknown option (naming the nearest valid one), options given twice, or a shape that does not
 *   match; ArgumentError when `pcfs` is not an array or the set would exceed
 *   {@link MAX_SET_BREAKPOINTS}.
 * @example
 * const set = pcfSetFrom([[[0, 1], [2, 0]], [[0, 3]]]);
 * set.offsets // Uint32Array [0, 2, 3]
 * pcfSetFrom([[[0, 1]]], { dtype: 'float32' }).dtype // 'float32'
 */
export function pcfSetFrom(pcfs: readonly PcfLike[], options?: PcfSetOptions): PcfSet;
export function pcfSetFrom(pcfs: readonly PcfLike[], dtype?: PcfDtype, options?: Omit<PcfSetOptions, 'dtype'>): PcfSet;
export function pcfSetFrom(pcfs: readonly PcfLike[], dtypeOrOptions?: PcfDtype | PcfSetOptions, options?: Omit<PcfSetOptions, 'dtype'>): PcfSet {
  if (!Array.isArray(pcfs)) {
    throw new ArgumentError(`pcfSetFrom: pcfs must be an array of PCFs (each a Pcf or an array of [t, v] pairs), got ${describe(pcfs)}`);
  }
  const o = setOptions('pcfSetFrom', dtypeOrOptions, options, ['dtype', 'shape', 'shared']);
  const dtype = o.dtype ?? 'float64';
  if (o.shape !== undefined && !Array.isArray(o.shape)) throw new OptionError(`shape must be an array of non-negative integers, got ${describe(o.shape)}`);
  if (o.shared !== undefined) checkBoolean('shared', o.shared);
  const count = pcfs.length;
  const shape = checkShape(o.shape ?? [count], count);
  const shared = o.shared ?? false;
  const offsets = shared ? new Uint32Array(new SharedArrayBuffer(4 * (count + 1))) : new Uint32Array(count + 1);
  let total = 0;
  for (let k = 0; k < count; k++) {
    const pcf: unknown = pcfs[k];
    if (!(pcf instanceof Pcf) && (pcf === null || typeof pcf !== 'object' || typeof (pcf as ArrayLike<unknown>).length !== 'number')) {
      throw new PcfError(k, `expected a Pcf or a list of [t, v] pairs, got ${describe(pcf)}`);
    }
    total += pcf instanceof Pcf ? pcf.size : (pcf as ArrayLike<unknown>).length;
    if (total > MAX_SET_BREAKPOINTS) {
      throw new ArgumentError(`a PCF set holds at most ${MAX_SET_BREAKPOINTS} breakpoints; PCFs 0..${k} already have ${total}`);
    }
    offsets[k + 1] = total;
  }
  const times = allocPcfArray(dtype, total, shared);
  const values = allocPcfArray(dtype, total, shared);
  for (let k = 0; k < count; k++) {
    const pcf = pcfs[k];
    const at = offsets[k]!;
    if (pcf instanceof Pcf && pcf.dtype === dtype) {
      times.set(pcf.times, at);
      values.set(pcf.values, at);
    } else {
      const points = pcf instanceof Pcf ? pcf.points() : (pcf as ArrayLike<readonly [number, number]>);
      writeBreakpoints(points, k, times, values, at);
    }
  }
  return { dtype, count, shape, times, values, offsets };
}

/**
 * The options of {@link pcfSetFrom} or {@link pcfSetFromNested}, given either as one object (second
 * argument) or as a dtype string followed by an object; the dtype is checked here.
 */
function setOptions(who: string, dtypeOrOptions: unknown, options: unknown, known: readonly string[]): PcfSetOptions {
  const name = `${who} options`;
  if (dtypeOrOptions === undefined || typeof dtypeOrOptions === 'string') {
    const o = checkOptionsObject<PcfSetOptions>(name, options as PcfSetOptions | undefined, known);
    if (dtypeOrOptions !== undefined && o.dtype !== undefined) {
      throw new OptionError(`${who}: dtype is given twice, as the second argument (${describe(dtypeOrOptions)}) and in the options (${describe(o.dtype)}); give it once`);
    }
    const dtype = dtypeOrOptions ?? o.dtype;
    return { ...o, dtype: dtype === undefined ? undefined : checkDtype(dtype) };
  }
  if (dtypeOrOptions === null || typeof dtypeOrOptions !== 'object' || Array.isArray(dtypeOrOptions)) {
    throw new OptionError(`${who}: the second argument must be a dtype ('float64' or 'float32') or an options object { ${known.join(', ')} }, got ${describe(dtypeOrOptions)}`);
  }
  if (options !== undefined) {
    throw new OptionError(`${who}: options are given twice, as the second argument and as the third; pass one options object (the third argument follows only a dtype string)`);
  }
  const o = checkOptionsObject<PcfSetOptions>(name, dtypeOrOptions as PcfSetOptions, known);
  return o.dtype === undefined ? o : { ...o, dtype: checkDtype(o.dtype) };
}

function checkDtype(dtype: unknown): PcfDtype {
  if (dtype !== 'float64' && dtype !== 'float32') {
    throw new OptionError(`dtype must be one of 'float64', 'float32', got ${describe(dtype)}`);
  }
  return dtype;
}

function checkShape(shape: readonly number[], count: number): readonly number[] {
  let product = 1;
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 0) {
      throw new OptionError(`shape must be a list of non-negative integers, got [${shape.map((x) => describe(x)).join(', ')}]`);
    }
    product *= d;
  }
  if (shape.length === 0 || product !== count) {
    throw new OptionError(`shape [${shape.join(', ')}] holds ${shape.length === 0 ? 'no list of' : product} PCFs, but ${count} were given`);
  }
  return Object.freeze([...shape]);
}

/**
 * Whether `value` claims to be a {@link PcfSet} (a non-array object with `offsets` or `times`),
 * as opposed to a list of PCFs. Such a value must then pass {@link checkPcfSet}.
 */
export function isPcfSetLike(value: unknown): value is PcfSet {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && ('offsets' in value || 'times' in value);
}

/**
 * Checks a {@link PcfSet} built by hand (or changed after it was built) as thoroughly as
 * {@link pcfSetFrom} checks its input: the layout (dtype, count, shape, offsets, array types and
 * lengths), then every PCF (at least one breakpoint, the first at time 0, strictly increasing
 * finite times, finite values). Linear in the breakpoints: far below the cost of any pairwise call.
 *
 * @param what how messages name the set, e.g. `'pdist X'`.
 * @throws ArgumentError for a malformed layout; PcfError naming the first invalid PCF.
 */
export function checkPcfSet(set: PcfSet, what: string): void {
  const bad = (message: string): never => {
    throw new ArgumentError(`${what} is not a valid PcfSet: ${message}; build one with pcfSetFrom`);
  };
  if (!PCF_DTYPES.includes(set.dtype)) bad(`dtype must be one of 'float64', 'float32', got ${describe(set.dtype)}`);
  const Arr = set.dtype === 'float32' ? Float32Array : Float64Array;
  if (!Number.isSafeInteger(set.count) || set.count < 0) bad(`count must be an integer >= 0, got ${describe(set.count)}`);
  const count = set.count;
  if (!Array.isArray(set.shape) || set.shape.length === 0 || set.shape.some((d) => !Number.isInteger(d) || d < 0) || set.shape.reduce((a, d) => a * d, 1) !== count) {
    bad(`shape must be non-negative integers whose product is count (${count}), got ${Array.isArray(set.shape) ? `[${set.shape.join(', ')}]` : describe(set.shape)}`);
  }
  if (!(set.offsets instanceof Uint32Array) || set.offsets.length !== count + 1) bad(`offsets must be a Uint32Array of count + 1 = ${count + 1} entries, got ${describe(set.offsets)}${set.offsets instanceof Uint32Array ? ` of length ${set.offsets.length}` : ''}`);
  if (!(set.times instanceof Arr) || !(set.values instanceof Arr)) bad(`times and values must be ${Arr.name}s for dtype '${set.dtype}', got ${describe(set.times)} and ${describe(set.values)}`);
  const { offsets, times, values } = set;
  if (offsets[0] !== 0) bad(`offsets[0] must be 0, got ${offsets[0]}`);
  const total = offsets[count]!;
  if (times.length < total || values.length < total) bad(`offsets end at breakpoint ${total}, past the end of times (${times.length}) or values (${values.length})`);
  for (let k = 0; k < count; k++) {
    const start = offsets[k]!;
    const end = offsets[k + 1]!;
    if (end < start) bad(`offsets must not decrease, but offsets[${k + 1}] = ${end} < offsets[${k}] = ${start}`);
    if (end === start) throw new PcfError(k, 'has no breakpoints; a PCF starts with a breakpoint at time 0');
    if (times[start] !== 0) throw new PcfError(k, `the first breakpoint must be at time 0, got ${times[start]}`);
    for (let b = start; b < end; b++) {
      if (!Number.isFinite(values[b]!)) throw new PcfError(k, `breakpoint ${b - start} has a non-finite value (${values[b]})`);
      if (b > start && !(times[b]! > times[b - 1]!)) throw new PcfError(k, `breakpoint ${b - start} has time ${times[b]}, not after the time ${times[b - 1]} of breakpoint ${b - start - 1} (times must strictly increase)`);
      if (!Number.isFinite(times[b]!)) throw new PcfError(k, `breakpoint ${b - start} has a non-finite time (${times[b]})`);
    }
  }
}

/** Number of breakpoints of PCF `index` in `set`. */
export function pcfSize(set: PcfData, index: number): number {
  return set.offsets[index + 1]! - set.offsets[index]!;
}

/**
 * PCF number `index` of `set` as a standalone {@link Pcf} (a copy).
 *
 * @throws OptionError when `index` is not an integer in [0, count - 1].
 */
export function pcfAt(set: PcfSet, index: number): Pcf {
  if (!((set as Partial<PcfSet> | null)?.offsets instanceof Uint32Array)) throw new ArgumentError(`pcfAt: set must be a PcfSet (from pcfSetFrom), got ${describe(set)}`);
  if (!Number.isInteger(index) || index < 0 || index >= set.count) {
    throw new OptionError(`index must be an integer in [0, ${set.count - 1}], got ${describe(index)}`);
  }
  const start = set.offsets[index]!;
  const end = set.offsets[index + 1]!;
  const points: Array<[number, number]> = [];
  for (let k = start; k < end; k++) points.push([set.times[k]!, set.values[k]!]);
  return Pcf.from(points, { dtype: set.dtype, index });
}

/**
 * PCFs `start .. end - 1` of `set` as a flat set of their own: times and values are views into
 * `set`'s arrays (no copy), offsets are re-based to start at 0.
 *
 * @throws OptionError unless 0 <= start <= end <= count.
 */
export function pcfSubset(set: PcfSet, start: number, end: number): PcfSet {
  if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || start > end || end > set.count) {
    throw new OptionError(`subset [${describe(start)}, ${describe(end)}) must satisfy 0 <= start <= end <= ${set.count}`);
  }
  const lo = set.offsets[start]!;
  const hi = set.offsets[end]!;
  const offsets = new Uint32Array(end - start + 1);
  for (let k = 0; k <= end - start; k++) offsets[k] = set.offsets[start + k]! - lo;
  return {
    dtype: set.dtype,
    count: end - start,
    shape: Object.freeze([end - start]),
    times: set.times.subarray(lo, hi),
    values: set.values.subarray(lo, hi),
    offsets,
  };
}

/** The leaves of a nested array of PCFs, in row-major order, and the nesting's shape. */
export interface FlatPcfs {
  readonly leaves: unknown[];
  readonly shape: number[];
}

function isLeaf(x: unknown): boolean {
  if (x instanceof Pcf) return true;
  // A raw PCF is an array of [t, v] pairs: its first element is an array that starts with a number.
  return Array.isArray(x) && Array.isArray(x[0]) && typeof x[0][0] === 'number';
}

/**
 * Flattens a nested array of PCFs (Pcf objects or raw `[t, v]` lists) row-major and finds its
 * shape. The depth is read along the first elements: a leaf is a Pcf, or an array whose first
 * element is an array starting with a number; an array of PCFs has shape `[n]`, an array of 2
 * arrays of 3 PCFs has shape `[2, 3]`. An empty top level is zero PCFs; an empty array below it is
 * a PCF with no breakpoints (left for the breakpoint checks to refuse),
 * and a non-array two levels down marks its grandparent as a (malformed) PCF, left for the
 * breakpoint checks to report. Every sub-array must have the same length as its siblings. Leaves
 * are not validated.
 *
 * @param fail called with a message when the nesting is not a rectangular array of PCFs; it throws.
 */
export function flattenPcfTree(input: unknown, fail: (message: string) => never): FlatPcfs {
  if (isLeaf(input)) {
    fail('expected an array of PCFs (each an array of [t, v] pairs), got a single PCF; wrap it in [ ]');
  }
  const shape: number[] = [];
  let node: unknown = input;
  for (let depth = 0; ; depth++) {
    if (!Array.isArray(node)) {
      // Below two levels a non-array is a malformed breakpoint: its grandparent is a PCF.
      if (depth <= 1) fail(`expected an array of PCFs (each an array of [t, v] pairs), got ${describe(input)}`);
      shape.length = depth - 1;
      break;
    }
    shape.push(node.length);
    // An empty array inside the top level is a PCF with no breakpoints (refused later by the
    // breakpoint checks, as the API refuses it), not an empty dimension: `[[]]` is one empty PCF.
    if (node.length === 0 || isLeaf(node[0]) || (Array.isArray(node[0]) && node[0].length === 0)) break;
    node = node[0];
  }
  const leaves: unknown[] = [];
  const walk = (x: unknown, depth: number, path: string): void => {
    if (depth === shape.length) {
      leaves.push(x);
      return;
    }
    if (!Array.isArray(x) || x.length !== shape[depth]) {
      const where = path === '' ? 'the top level' : path;
      fail(`expected an array of ${shape[depth]} entries at ${where}, got ${describe(x)} (the nesting must be rectangular, shape [${shape.join(', ')}])`);
    }
    for (let k = 0; k < x.length; k++) walk(x[k], depth + 1, `${path}[${k}]`);
  };
  walk(input, 0, '');
  return { leaves, shape };
}

/**
 * Builds a {@link PcfSet} from a nested array of PCFs, taking the shape from the nesting:
 * `[[f, g, h], [p, q, r]]` gives shape `[2, 3]`. Options as for {@link pcfSetFrom} (without `shape`).
 *
 * @throws ArgumentError when the nesting is ragged or not made of PCFs; PcfError for an invalid PCF
 *   (numbered row-major).
 * @example pcfSetFromNested([[f, g], [h, k]]).shape // [2, 2]
 */
export function pcfSetFromNested(nested: unknown, options?: Omit<PcfSetOptions, 'shape'>): PcfSet;
export function pcfSetFromNested(nested: unknown, dtype?: PcfDtype, options?: Omit<PcfSetOptions, 'shape' | 'dtype'>): PcfSet;
export function pcfSetFromNested(nested: unknown, dtypeOrOptions?: PcfDtype | Omit<PcfSetOptions, 'shape'>, options?: Omit<PcfSetOptions, 'shape' | 'dtype'>): PcfSet {
  const o = setOptions('pcfSetFromNested', dtypeOrOptions, options, ['dtype', 'shared']);
  const { leaves, shape } = flattenPcfTree(nested, (message) => {
    throw new ArgumentError(message);
  });
  return pcfSetFrom(leaves as PcfLike[], { ...o, shape });
}

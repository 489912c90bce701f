import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext, type Context } from '../src/index.js';
import { referenceCdist } from '../src/pcf/distance.js';
import { integratePair, integrateRow, L2_INNER, pcfOp, widenPcfData, type PcfOp } from '../src/pcf/integrate.js';
import { cdist, l2Kernel, pdist } from '../src/pcf/operations.js';
import { l1Pair32, l2InnerPair32, l2Pair32 } from '../src/pcf/pairKernels32.js';
import { integrationLimit, type Pcf, type PcfDtype } from '../src/pcf/pcf.js';
import { pcfAt, pcfSetFrom, type PcfData, type PcfSet } from '../src/pcf/pcfSet.js';
import { randomPcfs } from '../src/pcf/random.js';
import { encodeModule } from '../src/pcf/wasm/encoder.js';
import { WasmRows, wasmRowsAvailable, type WasmRowOp } from '../src/pcf/wasm/wasmRows.js';
import { expectAllClose } from './helpers/closeTo.js';

const UPPER = integrationLimit('float64');
const OPS: Array<[WasmRowOp, string, PcfOp]> = [[0, 'L1', pcfOp(1)], [1, 'L2', pcfOp(2)], [2, 'L2 inner product', L2_INNER]];

/** PCFs of mixed lengths (1 to 40 breakpoints), float64 unless said. */
function mixedSet(n: number, seed: number, dtype: PcfDtype = 'float64'): PcfSet {
  const lengths = [1, 2, 3, 7, 40, 12];
  const pcfs: Pcf[] = [];
  for (let k = 0; k < n; k++) pcfs.push(pcfAt(randomPcfs({ n: 1, points: lengths[k % lengths.length]!, seed: seed * 1000 + k, dtype }), 0));
  return pcfSetFrom(pcfs, dtype);
}

/** Row `row` of `rows` against columns [j0, j1) of `cols`, by the wasm kernels (float32 results in a Float32Array). */
function wasmRow(w: WasmRows, op: WasmRowOp, rows: PcfData, row: number, j0: number, j1: number): Float64Array | Float32Array {
  const out = rows.times instanceof Float32Array ? new Float32Array(j1 - j0) : new Float64Array(j1 - j0);
  expect(w.row(op, rows, row, j0, j1, out, 0)).toBe(true);
  return out;
}

/** Row `row` of `rows` against columns [j0, j1) of `cols` by integrateRow: the JS kernels, float32 ones for float32 sets. */
function jsRow(op: PcfOp, rows: PcfData, row: number, cols: PcfData, j0: number, j1: number, upper: number): number[] {
  const out = new Float64Array(j1 - j0);
  integrateRow(op, rows, row, cols, j0, j1, out, 0, 'none', 0, 0, upper);
  return Array.from(out);
}

describe('WebAssembly row kernels', () => {
  it('are available on this runtime and the encoder emits a module WebAssembly accepts', () => {
    expect(wasmRowsAvailable()).toBe(true);
    const wasm = (globalThis as unknown as { WebAssembly: { validate(bytes: Uint8Array): boolean } }).WebAssembly;
    expect(wasm.validate(encodeModule([], 1))).toBe(true);
  });

  it('give the known answers', () => {
    const set = pcfSetFrom([[[0, 10], [2, 5], [3, 0]], [[0, 5], [6, 0]], [[0, 6], [3, 0]], [[0, 2], [1, 4], [2, 0]], [[0, 4], [3, 0]], [[0, 2], [3, 0]], [[0, 1]], [[0, 0]]], 'float64');
    const w = new WasmRows();
    expect(w.setColumns(set, 0, set.count, 3, UPPER)).toBe(true);
    expect(wasmRow(w, 0, set, 0, 1, 2)[0]).toBe(25);
    expect(wasmRow(w, 0, set, 2, 3, 4)[0]).toBe(12);
    expect(wasmRow(w, 1, set, 2, 3, 4)[0]).toBe(Math.sqrt(16 + 4 + 36));
    expect(Array.from(wasmRow(w, 2, set, 4, 4, 6))).toEqual([48, 24]);
    expect(wasmRow(w, 0, set, 6, 7, 8)[0]).toBe(UPPER); // |1 - 0| over [0, upper)
    expect(wasmRow(w, 0, set, 0, 0, 1)[0]).toBe(0);
  });

  for (const [code, name, op] of OPS) {
    it(`match integrateRow bit for bit for ${name} on random data of mixed lengths, across sets and column ranges`, () => {
      const a = mixedSet(23, 1);
      const b = mixedSet(31, 2);
      const f32 = widenPcfData(randomPcfs({ n: 9, points: 60, seed: 3, dtype: 'float32' }));
      const w = new WasmRows();
      for (const [rows, cols, j0, j1] of [[a, b, 0, 31], [a, b, 5, 17], [b, a, 22, 23], [a, a, 0, 23], [f32, a, 3, 20], [a, f32, 0, 9]] as const) {
        expect(w.setColumns(cols, j0, j1 - j0, 0, UPPER)).toBe(true); // row area starts empty and grows
        const rowCount = rows.offsets.length - 1;
        for (let i = 0; i < rowCount; i++) {
          const expected = new Float64Array(j1 - j0);
          integrateRow(op, rows, i, cols, j0, j1, expected, 0, 'none', 0, 0, UPPER);
          const got = wasmRow(w, code, rows, i, j0, j1);
          expect(Array.from(got)).toEqual(Array.from(expected));
          if (j1 - j0 > 2) expect(Array.from(wasmRow(w, code, rows, i, j0 + 1, j1 - 1))).toEqual(Array.from(expected.subarray(1, -1)));
        }
      }
    });
  }

  it('match integrateRow bit for bit for every column count and start, so lanes start idle, take columns and finish alone', () => {
    const set = mixedSet(14, 4);
    const w = new WasmRows();
    expect(w.setColumns(set, 0, set.count, 0, UPPER)).toBe(true);
    for (const [code, , op] of OPS) {
      for (let j0 = 0; j0 < set.count; j0++) {
        for (let j1 = j0 + 1; j1 <= set.count; j1++) {
          for (const i of [0, 4, 11]) {
            const expected = new Float64Array(j1 - j0);
            integrateRow(op, set, i, set, j0, j1, expected, 0, 'none', 0, 0, UPPER);
            expect(Array.from(wasmRow(w, code, set, i, j0, j1))).toEqual(Array.from(expected));
          }
        }
      }
    }
  });

  it('match integrateRow bit for bit on equal breakpoints, huge and tiny values and a time at the integration limit', () => {
    const upper32 = integrationLimit('float32');
    const grid: Array<Array<[number, number]>> = [
      [[0, 1], [1, 2], [2, 3], [3, 0]],
      [[0, 1], [1, 5], [3, 0]],
      [[0, 4], [2, 1], [3, 2]],
      [[0, 1e300], [1, -1e300], [2, 0]],
      [[0, -1e300], [1, 1e300], [5, 1e-300]],
      [[0, 1e-300], [0.5, -1e-310], [1, 5e-324]],
      [[0, 3]],
      [[0, 2], [upper32, 7]],
      [[0, 1], [1, 2], [upper32, 0]],
    ];
    const set = pcfSetFrom(grid, 'float64');
    for (const upper of [UPPER, upper32]) {
      const w = new WasmRows();
      expect(w.setColumns(set, 0, set.count, 0, upper)).toBe(true);
      for (const [code, , op] of OPS) {
        if (code === 1) continue; // L2 overflows here; the block kernel recomputes such rows in JS (tested below)
        for (let i = 0; i < set.count; i++) {
          const expected = new Float64Array(set.count);
          integrateRow(op, set, i, set, 0, set.count, expected, 0, 'none', 0, 0, upper);
          const got = new Float64Array(set.count);
          expect(w.row(code, set, i, 0, set.count, got, 0)).toBe(true);
          expect(Array.from(got)).toEqual(Array.from(expected));
        }
      }
      const small = pcfSetFrom(grid.filter((_, k) => k < 3 || k >= 6), 'float64');
      expect(w.setColumns(small, 0, small.count, 0, upper)).toBe(true);
      for (let i = 0; i < small.count; i++) {
        const expected = new Float64Array(small.count);
        integrateRow(pcfOp(2), small, i, small, 0, small.count, expected, 0, 'none', 0, 0, upper);
        const got = new Float64Array(small.count);
        expect(w.row(1, small, i, 0, small.count, got, 0)).toBe(true);
        // An infinite L2 sum is one the JS kernel recomputes scaled (so does the block kernel).
        for (let j = 0; j < small.count; j++) if (got[j] !== Infinity) expect(got[j]).toBe(expected[j]);
      }
    }
  });

  it('match integrateRow bit for bit on random sets with shared times (fast-check): refills, parked lanes and the scalar finish', () => {
    // Times from a grid of 40 values, so breakpoints of different PCFs often coincide; lengths 1 to 40.
    // Values keep L2 sums in range (no subnormal differences, last value 0 so no rectangle reaching
    // the integration limit overflows: rows out of range the block kernel recomputes in JS).
    const value = fc.double({ min: -1e3, max: 1e3, noNaN: true }).map((x) => (Math.abs(x) < 1e-6 ? 0 : x));
    const pcf = fc.uniqueArray(fc.integer({ min: 1, max: 40 }), { maxLength: 39 }).chain((ts) => {
      const times = [0, ...[...ts].sort((x, y) => x - y).map((k) => k / 4)];
      return fc.array(value, { minLength: times.length, maxLength: times.length })
        .map((vs) => times.map((t, k): [number, number] => [t, k === times.length - 1 ? 0 : vs[k]!]));
    });
    const arb = fc.tuple(fc.array(pcf, { minLength: 1, maxLength: 40 }), fc.array(pcf, { minLength: 1, maxLength: 5 }), fc.nat(), fc.nat());
    const w = new WasmRows();
    fc.assert(fc.property(arb, ([colPcfs, rowPcfs, x, y]) => {
      const cols = pcfSetFrom(colPcfs, 'float64');
      const rows = pcfSetFrom(rowPcfs, 'float64');
      const j0 = x % cols.count;
      const j1 = j0 + 1 + (y % (cols.count - j0));
      expect(w.setColumns(cols, j0, j1 - j0, 0, UPPER)).toBe(true);
      for (const [code, , op] of OPS) {
        for (let i = 0; i < rows.count; i++) {
          const expected = new Float64Array(j1 - j0);
          integrateRow(op, rows, i, cols, j0, j1, expected, 0, 'none', 0, 0, UPPER);
          expect(Array.from(wasmRow(w, code, rows, i, j0, j1))).toEqual(Array.from(expected));
        }
      }
    }), { numRuns: 150 });
  });

  it('match integrateRow bit for bit for a long row against many short columns and a short row against long ones', () => {
    const long = randomPcfs({ n: 3, points: 3000, seed: 11 });
    const short = mixedSet(90, 12); // 1 to 40 breakpoints
    const w = new WasmRows();
    for (const [rows, cols] of [[long, short], [short, long]] as const) {
      expect(w.setColumns(cols, 0, cols.count, 0, UPPER)).toBe(true);
      for (const [code, , op] of OPS) {
        for (const i of [0, 1, 2]) {
          const expected = new Float64Array(cols.count);
          integrateRow(op, rows, i, cols, 0, cols.count, expected, 0, 'none', 0, 0, UPPER);
          expect(Array.from(wasmRow(w, code, rows, i, 0, cols.count))).toEqual(Array.from(expected));
        }
      }
    }
  });

  it('agree with the brute-force reference on 100-breakpoint PCFs (relative 1e-12)', () => {
    const set = randomPcfs({ n: 12, points: 100, seed: 5 });
    const pcfs = Array.from({ length: set.count }, (_, k) => pcfAt(set, k));
    const w = new WasmRows();
    expect(w.setColumns(set, 0, set.count, 100, UPPER)).toBe(true);
    for (const [code, , op] of OPS) {
      const ref = referenceCdist(pcfs, pcfs, op);
      const got = Array.from({ length: set.count }, (_, i) => wasmRow(w, code, set, i, 0, set.count));
      expectAllClose(got, ref, { rtol: 1e-12, atol: 1e-12, what: `op ${code}` });
    }
  });

  it('round results to float32 when the output is a Float32Array', () => {
    const set = randomPcfs({ n: 10, points: 20, seed: 6 });
    const w = new WasmRows();
    w.setColumns(set, 0, set.count, 20, UPPER);
    const out = new Float32Array(set.count);
    expect(w.row(0, set, 4, 0, set.count, out, 0)).toBe(true);
    expect(Array.from(out)).toEqual(Array.from(wasmRow(w, 0, set, 4, 0, set.count), Math.fround));
  });

  it('refuse columns that would need over 1 GiB of memory, loading nothing', () => {
    const huge: PcfData = { times: new Float64Array(1), values: new Float64Array(1), offsets: Uint32Array.of(0, 2 ** 26) };
    expect(new WasmRows().setColumns(huge, 0, 1, 0, UPPER)).toBe(false);
  });
});

describe('WebAssembly float32 row kernels', () => {
  const UPPER32 = integrationLimit('float32');

  it('give the known answers in float32', () => {
    const set = pcfSetFrom([[[0, 10], [2, 5], [3, 0]], [[0, 5], [6, 0]], [[0, 6], [3, 0]], [[0, 2], [1, 4], [2, 0]], [[0, 4], [3, 0]], [[0, 2], [3, 0]], [[0, 1]], [[0, 0]]], 'float32');
    const w = new WasmRows('float32');
    expect(w.setColumns(set, 0, set.count, 3, UPPER32)).toBe(true);
    expect(wasmRow(w, 0, set, 0, 1, 2)[0]).toBe(25);
    expect(wasmRow(w, 0, set, 2, 3, 4)[0]).toBe(12);
    expect(wasmRow(w, 1, set, 2, 3, 4)[0]).toBe(Math.fround(Math.sqrt(16 + 4 + 36)));
    expect(Array.from(wasmRow(w, 2, set, 4, 4, 6))).toEqual([48, 24]);
    expect(wasmRow(w, 0, set, 6, 7, 8)[0]).toBe(UPPER32);
  });

  for (const [code, name, op] of OPS) {
    it(`match the float32 JS kernels bit for bit for ${name} on random data of mixed lengths, for every column count and start`, () => {
      const a = mixedSet(23, 1, 'float32');
      const b = mixedSet(31, 2, 'float32');
      const w = new WasmRows('float32');
      for (const [rows, cols] of [[a, b], [b, a], [a, a]] as const) {
        const n = cols.offsets.length - 1;
        for (const [j0, j1] of [[0, n], [5, 17], [n - 1, n], [2, 3]] as const) {
          expect(w.setColumns(cols, j0, j1 - j0, 0, UPPER32)).toBe(true);
          for (let i = 0; i < rows.offsets.length - 1; i++) expect(Array.from(wasmRow(w, code, rows, i, j0, j1))).toEqual(jsRow(op, rows, i, cols, j0, j1, UPPER32));
        }
      }
      const set = mixedSet(40, 4, 'float32');
      expect(w.setColumns(set, 0, set.count, 0, UPPER32)).toBe(true);
      for (let j0 = 0; j0 < set.count; j0 += 3) {
        for (let j1 = j0 + 1; j1 <= set.count; j1++) expect(Array.from(wasmRow(w, code, set, j0 % 7, j0, j1))).toEqual(jsRow(op, set, j0 % 7, set, j0, j1, UPPER32));
      }
    });
  }

  it('match the float32 JS kernels bit for bit on random sets with shared times (fast-check): refills, parked lanes and the scalar finish', () => {
    const value = fc.double({ min: -1e3, max: 1e3, noNaN: true }).map((x) => (Math.abs(x) < 1e-6 ? 0 : x));
    const pcf = fc.uniqueArray(fc.integer({ min: 1, max: 40 }), { maxLength: 39 }).chain((ts) => {
      const times = [0, ...[...ts].sort((x, y) => x - y).map((k) => k / 4)];
      return fc.array(value, { minLength: times.length, maxLength: times.length })
        .map((vs) => times.map((t, k): [number, number] => [t, k === times.length - 1 ? 0 : vs[k]!]));
    });
    const arb = fc.tuple(fc.array(pcf, { minLength: 1, maxLength: 60 }), fc.array(pcf, { minLength: 1, maxLength: 5 }), fc.nat(), fc.nat());
    const w = new WasmRows('float32');
    fc.assert(fc.property(arb, ([colPcfs, rowPcfs, x, y]) => {
      const cols = pcfSetFrom(colPcfs, 'float32');
      const rows = pcfSetFrom(rowPcfs, 'float32');
      const j0 = x % cols.count;
      const j1 = j0 + 1 + (y % (cols.count - j0));
      expect(w.setColumns(cols, j0, j1 - j0, 0, UPPER32)).toBe(true);
      for (const [code, , op] of OPS) {
        for (let i = 0; i < rows.count; i++) expect(Array.from(wasmRow(w, code, rows, i, j0, j1))).toEqual(jsRow(op, rows, i, cols, j0, j1, UPPER32));
      }
    }), { numRuns: 150 });
  });

  it('match the float32 JS kernels bit for bit for a long row against many short columns and a short row against long ones', () => {
    const long = randomPcfs({ n: 3, points: 3000, seed: 11, dtype: 'float32' });
    const short = mixedSet(90, 12, 'float32');
    const w = new WasmRows('float32');
    for (const [rows, cols] of [[long, short], [short, long]] as const) {
      expect(w.setColumns(cols, 0, cols.count, 0, UPPER32)).toBe(true);
      for (const [code, , op] of OPS) {
        for (const i of [0, 1, 2]) expect(Array.from(wasmRow(w, code, rows, i, 0, cols.count))).toEqual(jsRow(op, rows, i, cols, 0, cols.count, UPPER32));
      }
    }
  });

  it('refuse columns that would need over 1 GiB of memory, loading nothing', () => {
    const huge: PcfData = { times: new Float32Array(1), values: new Float32Array(1), offsets: Uint32Array.of(0, 2 ** 27) };
    expect(new WasmRows('float32').setColumns(huge, 0, 1, 0, UPPER32)).toBe(false);
  });
});

describe('the PCF block kernel on MU cores, through the wasm rows', () => {
  let ctx: Context;
  beforeAll(async () => {
    ctx = await createContext({ topology: { subs: 2, clustersPerSub: 1, coresPerCluster: 2 } });
  });
  afterAll(async () => {
    await ctx.destroy();
  });

  const set = mixedSet(57, 9);
  const small = { maxOutputElements: 300, minBlockSide: 8 };
  const pair = (op: PcfOp, x: PcfData, i: number, y: PcfData, j: number): number =>
    integratePair(op, x.times as Float64Array, x.values as Float64Array, x.offsets[i]!, x.offsets[i + 1]!, y.times as Float64Array, y.values as Float64Array, y.offsets[j]!, y.offsets[j + 1]!, UPPER);

  it('pdist (skip the diagonal and above) equals the JS pair kernels bit for bit, p = 1 and 2', async () => {
    for (const p of [1, 2]) {
      const d = await pdist(set, { context: ctx, p, ...small });
      for (let i = 1; i < set.count; i++) for (let j = 0; j < i; j++) expect(d.get(i, j)).toBe(pair(pcfOp(p), set, i, set, j));
    }
  });

  it('pdist of huge, tiny and equal-time PCFs equals the JS pair kernels bit for bit, p = 1 and 2 (L2 rows out of range recomputed)', async () => {
    const odd = pcfSetFrom([
      [[0, 1e300], [1, -1e300], [2, 0]], [[0, -1e300], [1, 1e300], [5, 1e-300]], [[0, 1e-200], [0.5, -1e-210], [1, 5e-324]],
      [[0, 1], [1, 2], [2, 3], [3, 0]], [[0, 1], [1, 5], [3, 0]], [[0, 3]], [[0, 4], [2, 1], [3, 2]],
    ], 'float64');
    for (const p of [1, 2]) {
      const d = await pdist(odd, { context: ctx, p, ...small });
      for (let i = 1; i < odd.count; i++) for (let j = 0; j < i; j++) expect(d.get(i, j)).toBe(pair(pcfOp(p), odd, i, odd, j));
    }
  });

  it('l2Kernel (skip above the diagonal) equals the JS pair kernel bit for bit, diagonal included', async () => {
    const k = await l2Kernel(set, { context: ctx, ...small });
    for (let i = 0; i < set.count; i++) for (let j = 0; j <= i; j++) expect(k.get(i, j)).toBe(pair(L2_INNER, set, i, set, j));
  });

  it('cdist (no skip) equals the JS pair kernels bit for bit, and p = 3 still runs in JS', async () => {
    const other = mixedSet(19, 10);
    for (const p of [1, 2, 3]) {
      const t = await cdist(set, other, { context: ctx, p, ...small });
      for (let i = 0; i < set.count; i++) for (let j = 0; j < other.count; j++) expect(t.get(i, j)).toBe(pair(pcfOp(p), set, i, other, j));
    }
    const inner = await cdist(set, other, { context: ctx, op: 'l2Inner', ...small });
    for (let i = 0; i < set.count; i++) for (let j = 0; j < other.count; j++) expect(inner.get(i, j)).toBe(pair(L2_INNER, set, i, other, j));
  });

  /** The float32 JS kernel of `op` (p = 1, 2 or the inner product) on PCF i of x and j of y. */
  const pair32 = (op: PcfOp, x: PcfData, i: number, y: PcfData, j: number): number => {
    const kernel = op.kind === 'l2inner' ? l2InnerPair32 : op.kind === 'l1' ? l1Pair32 : l2Pair32;
    return kernel(new Float64Array(x.times), new Float64Array(x.values), x.offsets[i]!, x.offsets[i + 1]!, new Float64Array(y.times), new Float64Array(y.values), y.offsets[j]!, y.offsets[j + 1]!, integrationLimit('float32'));
  };

  it('pdist, l2Kernel and cdist of float32 sets equal the float32 JS kernels bit for bit', async () => {
    const set32 = mixedSet(57, 9, 'float32');
    const other = mixedSet(19, 10, 'float32');
    for (const p of [1, 2]) {
      const d = await pdist(set32, { context: ctx, p, ...small });
      expect(d.dtype).toBe('float32');
      for (let i = 1; i < set32.count; i++) for (let j = 0; j < i; j++) expect(d.get(i, j)).toBe(pair32(pcfOp(p), set32, i, set32, j));
      const t = await cdist(set32, other, { context: ctx, p, ...small });
      for (let i = 0; i < set32.count; i++) for (let j = 0; j < other.count; j++) expect(t.get(i, j)).toBe(pair32(pcfOp(p), set32, i, other, j));
    }
    const k = await l2Kernel(set32, { context: ctx, ...small });
    for (let i = 0; i < set32.count; i++) for (let j = 0; j <= i; j++) expect(k.get(i, j)).toBe(pair32(L2_INNER, set32, i, set32, j));
  });

  it('pdist and l2Kernel of huge, tiny and limit-time float32 PCFs equal the float32 JS kernels bit for bit (rows they compute in float64 recomputed)', async () => {
    const odd = pcfSetFrom([
      [[0, 3e38], [1, -3e38], [2, 0]], [[0, -3e38], [1, 3e38], [5, 1e-30]], [[0, 1e-20], [0.5, -1e-25], [1, 1e-44]],
      [[0, 2e19], [1, -2e19], [2, 0]], [[0, 2e19], [2, 0]], [[0, 1], [1, 2], [2, 3], [3, 0]], [[0, 3]],
      [[0, 2], [integrationLimit('float32'), 7]], [[0, 1], [1, 5e19], [integrationLimit('float32'), 0]], [[0, 2]], [[0, 0]],
    ], 'float32');
    // Alone in its row: an L2 sum that underflows float32 ((1e-20)^2), flagged by its root only.
    const tiny = pcfSetFrom([[[0, 1e-20], [1, 0]], [[0, 0]], [[0, 1], [2, 0]]], 'float32');
    // Inner products whose last values' product underflows float32 over the widest rectangle.
    const faint = pcfSetFrom([[[0, 1e-23]], [[0, 1], [1, 3e-23]], [[0, 2], [3, 0]], [[0, 5e-24], [2, -1e-22]]], 'float32');
    for (const set of [odd, tiny, faint]) {
      for (const p of [1, 2]) {
        const d = await pdist(set, { context: ctx, p, ...small, minBlockSide: 3 });
        for (let i = 1; i < set.count; i++) for (let j = 0; j < i; j++) expect(d.get(i, j)).toBe(pair32(pcfOp(p), set, i, set, j));
      }
      const k = await l2Kernel(set, { context: ctx, ...small, minBlockSide: 3 });
      for (let i = 0; i < set.count; i++) for (let j = 0; j <= i; j++) expect(k.get(i, j)).toBe(pair32(L2_INNER, set, i, set, j));
    }
  });
});

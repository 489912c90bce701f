/**
 * The bodies of the WebAssembly row kernels (see rowModule.ts for the memory layout and the
 * arguments): one PCF against a run of columns, the same rectangle walk as l1Pair / l2Pair /
 * l2InnerPair (pairKernels.ts) with the same expressions in the same order, so every result is
 * identical bit for bit.
 *
 * Why the code looks as it does. A merge step of one pair is a dependency chain: load the two
 * times, compare, advance a pointer, load again; one pair at a time, the core waits on that chain
 * (about nine cycles a step here). So:
 * - Sentinels instead of bounds: every PCF ends in a record whose time is the integration limit
 *   `upper`. Once one PCF is out of breakpoints, its sentinel makes every later step advance the
 *   other, which is exactly the tail loop of pairKernels.ts, and the step whose right edge is
 *   `upper` is the last rectangle, `(upper - t) * op(f, g)`. One loop does the whole walk with no
 *   end pointers; a pair is done when its time reaches `upper`.
 * - Four pairs at once, in two groups of two f64x2 lanes: lane k of a group is one column against
 *   the row, with its own pointers, time and sum, so four chains overlap and each instruction does
 *   two pairs' arithmetic. A lane's (time, value) records are loaded whole and transposed into a
 *   times vector and a values vector.
 * - The step is branch-free: `f64x2.le` gives each lane's advance mask (equal times advance both),
 *   `f64x2.pmin` picks the right edge (b < a ? b : a, the scalar kernels' choice), and the pointers
 *   advance by mask & 16 bytes.
 * - When a lane's pair is done, its sum is stored and the lane takes the next column; once no
 *   columns are left, the lanes still walking finish one by one with the scalar step. Lanes never
 *   mix: each pair's sum adds its own rectangles in walk order, as the JS kernels do.
 */
import { Code, F64, I32, I64, Op, Simd, V128, type FunctionDef } from './encoder.js';

/** Which value is integrated over a rectangle with values (f, g). */
export type Integrand = 'absDiff' | 'sqDiff' | 'product';

// Parameters: see RowFunction in rowModule.ts.
const A_FIRST = 0, OFFS = 1, COUNT = 2, OUT = 3, UPPER = 4;
const PARAMS = [I32, I32, I32, I32, F64];

/** Byte lanes of i8x16.shuffle that pick the low f64 of both operands, and the high f64 of both. */
const LOW_HALVES = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23];
const HIGH_HALVES = [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31];
/** Two i64 lanes of 16 (a record's size), and of all bits but the sign (f64 absolute value). */
const SIXTEENS = [16, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0];
const ABS_MASK = [255, 255, 255, 255, 255, 255, 255, 127, 255, 255, 255, 255, 255, 255, 255, 127];

/** Groups of two lanes merged at once (measured: two beat one and three). */
const GROUPS = 2;

/** Locals of the scalar step: pointers, time and sum of one pair, and its output address. */
interface Scalar { readonly pa: number; readonly pb: number; readonly out: number; readonly t: number; readonly sum: number; readonly tn: number; readonly ia: number; readonly ib: number; readonly ai: number; readonly d: number }
/** v128 locals of a group: pointers in the low 32 bits of each i64 lane; two output addresses. */
interface Group { readonly pa: number; readonly pb: number; readonly t: number; readonly sum: number; readonly out: readonly [number, number] }

/** Hands out local indices after the parameters and records their types. */
class Locals {
  readonly types: number[] = [];
  add(type: number): number { this.types.push(type); return PARAMS.length + this.types.length - 1; }
}

/** Pushes integrand(f, g) for f64 scalars f and g on the stack. */
function scalarIntegrand(c: Code, kind: Integrand, d: number): void {
  if (kind === 'absDiff') c.op(Op.f64Sub, Op.f64Abs);
  else if (kind === 'sqDiff') c.op(Op.f64Sub).tee(d).get(d).op(Op.f64Mul);
  else c.op(Op.f64Mul);
}

/** One merge step of a single pair (times compared as bit patterns: finite and >= 0). */
function scalarStep(c: Code, kind: Integrand, s: Scalar): void {
  c.get(s.pa).mem(Op.i64Load, 3, 0).set(s.ia);
  c.get(s.pb).mem(Op.i64Load, 3, 0).set(s.ib);
  c.get(s.ia).get(s.ib).get(s.ia).get(s.ib).op(Op.i64LeS).tee(s.ai).op(Op.select, Op.f64ReinterpretI64).set(s.tn);
  c.get(s.sum).get(s.tn).get(s.t).op(Op.f64Sub);
  c.get(s.pa).mem(Op.f64Load, 3, 8).get(s.pb).mem(Op.f64Load, 3, 8);
  scalarIntegrand(c, kind, s.d);
  c.op(Op.f64Mul, Op.f64Add).set(s.sum).get(s.tn).set(s.t);
  c.get(s.pa).get(s.ai).i32(4).op(Op.i32Shl).op(Op.i32Add).set(s.pa);
  c.get(s.pb).get(s.ib).get(s.ia).op(Op.i64LeS).i32(4).op(Op.i32Shl).op(Op.i32Add).set(s.pb);
}

/** The body of one row function (see the module comment). */
export function rowFunction(name: string, kind: Integrand): FunctionDef {
  const v = new Locals();
  const s: Scalar = { pa: v.add(I32), pb: v.add(I32), out: v.add(I32), t: v.add(F64), sum: v.add(F64), tn: v.add(F64), ia: v.add(I64), ib: v.add(I64), ai: v.add(I32), d: v.add(F64) };
  const x0 = v.add(V128), x1 = v.add(V128), ta = v.add(V128), va = v.add(V128), tb = v.add(V128), vb = v.add(V128);
  const le = v.add(V128), tn = v.add(V128), dv = v.add(V128), sixteens = v.add(V128), abs = v.add(V128), uppers = v.add(V128);
  const groups: Group[] = [];
  for (let g = 0; g < GROUPS; g++) groups.push({ pa: v.add(V128), pb: v.add(V128), t: v.add(V128), sum: v.add(V128), out: [v.add(I32), v.add(I32)] });
  const lanes = groups.flatMap((g) => [[g, 0], [g, 1]] as const);
  const c = new Code();

  /** Lane k of g takes the next column (the caller checked COUNT > 0) and its output slot. */
  const take = (g: Group, k: number): void => {
    c.get(g.pb).get(OFFS).mem(Op.i32Load, 2, 0).i32(16).op(Op.i32Add).simd(Simd.i32x4ReplaceLane, 2 * k).set(g.pb);
    c.get(g.pa).get(A_FIRST).simd(Simd.i32x4ReplaceLane, 2 * k).set(g.pa);
    c.get(OUT).set(g.out[k]!);
    for (const x of [g.t, g.sum]) c.get(x).f64(0).simd(Simd.f64x2ReplaceLane, k).set(x);
    c.get(OFFS).i32(4).op(Op.i32Add).set(OFFS);
    c.get(OUT).i32(8).op(Op.i32Add).set(OUT);
    c.get(COUNT).i32(1).op(Op.i32Sub).set(COUNT);
  };
  /** Pushes 1 while no lane's time has reached upper (no pair done, no lane idle). */
  const allWalking = (): void => {
    groups.forEach((g, k) => {
      c.get(g.t).get(uppers).simd(Simd.f64x2Eq);
      if (k > 0) c.simd(Simd.v128Or);
    });
    c.simd(Simd.v128AnyTrue).op(Op.i32Eqz);
  };
  /** Loads the records at both lanes' pointers and splits them into times and values. */
  const load = (ptrs: number, times: number, values: number): void => {
    c.get(ptrs).simd(Simd.i32x4ExtractLane, 0).simdMem(Simd.v128Load, 3, 0).set(x0);
    c.get(ptrs).simd(Simd.i32x4ExtractLane, 2).simdMem(Simd.v128Load, 3, 0).set(x1);
    c.get(x0).get(x1).simd(Simd.i8x16Shuffle, ...LOW_HALVES).set(times);
    c.get(x0).get(x1).simd(Simd.i8x16Shuffle, ...HIGH_HALVES).set(values);
  };
  const step = (g: Group): void => {
    load(g.pa, ta, va);
    load(g.pb, tb, vb);
    c.get(ta).get(tb).simd(Simd.f64x2Le).set(le);
    c.get(ta).get(tb).simd(Simd.f64x2Pmin).set(tn);
    // sum += (tn - t) * integrand(f, g); t = tn
    c.get(g.sum).get(tn).get(g.t).simd(Simd.f64x2Sub).get(va).get(vb);
    if (kind === 'absDiff') c.simd(Simd.f64x2Sub).get(abs).simd(Simd.v128And);
    else if (kind === 'sqDiff') c.simd(Simd.f64x2Sub).tee(dv).get(dv).simd(Simd.f64x2Mul);
    else c.simd(Simd.f64x2Mul);
    c.simd(Simd.f64x2Mul).simd(Simd.f64x2Add).set(g.sum).get(tn).set(g.t);
    c.get(g.pa).get(le).get(sixteens).simd(Simd.v128And).simd(Simd.i64x2Add).set(g.pa);
    c.get(g.pb).get(tb).get(ta).simd(Simd.f64x2Le).get(sixteens).simd(Simd.v128And).simd(Simd.i64x2Add).set(g.pb);
  };
  const laneTime = (g: Group, k: number): Code => c.get(g.t).simd(Simd.f64x2ExtractLane, k);
  const store = (out: number, sum: () => void): void => {
    c.get(out);
    sum();
    if (kind === 'sqDiff') c.op(Op.f64Sqrt);
    c.mem(Op.f64Store, 3, 0);
  };

  c.simd(Simd.v128Const, ...SIXTEENS).set(sixteens);
  c.simd(Simd.v128Const, ...ABS_MASK).set(abs);
  c.get(UPPER).simd(Simd.f64x2Splat).set(uppers);
  // A lane whose time is upper is idle; lanes left idle here (fewer columns than lanes) go straight to the end.
  for (const g of groups) c.get(uppers).set(g.t);
  for (const [g, k] of lanes) { c.get(COUNT).ifThen(); take(g, k); c.end(); }
  c.block().loop(); // $finish, $refill
  allWalking();
  c.op(Op.i32Eqz).brIf(1);
  c.loop(); // every lane steps until one pair is done
  for (const g of groups) step(g);
  allWalking();
  c.brIf(0).end();
  for (const [g, k] of lanes) {
    laneTime(g, k).get(UPPER).op(Op.f64Ge).ifThen();
    store(g.out[k]!, () => c.get(g.sum).simd(Simd.f64x2ExtractLane, k));
    c.get(COUNT).ifThen();
    take(g, k);
    c.end().end();
  }
  c.br(0).end().end();
  // No columns left: lanes still walking finish alone.
  for (const [g, k] of lanes) {
    laneTime(g, k).get(UPPER).op(Op.f64Lt).ifThen();
    c.get(g.pa).simd(Simd.i32x4ExtractLane, 2 * k).set(s.pa);
    c.get(g.pb).simd(Simd.i32x4ExtractLane, 2 * k).set(s.pb);
    laneTime(g, k).set(s.t);
    c.get(g.sum).simd(Simd.f64x2ExtractLane, k).set(s.sum);
    c.loop();
    scalarStep(c, kind, s);
    c.get(s.tn).get(UPPER).op(Op.f64Lt).brIf(0);
    c.end();
    store(g.out[k]!, () => c.get(s.sum));
    c.end();
  }
  return { name, params: PARAMS, locals: v.types, body: c };
}

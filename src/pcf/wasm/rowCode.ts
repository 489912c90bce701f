/**
 * The bodies of the WebAssembly row kernels (see rowModule.ts for the memory layout and the
 * arguments): one PCF against a run of columns, the same rectangle walk as l1Pair / l2Pair /
 * l2InnerPair (pairKernels.ts) with the same expressions in the same order, so every result is
 * identical bit for bit.
 *
 * Why the code looks as it does. A merge step of one pair is a dependency chain: load the two
 * times, compare, advance a pointer, load again; one pair at a time, the core waits on that chain
 * (about nine cycles a step). So:
 * - Sentinels instead of bounds: every PCF ends in a record whose time is the integration limit
 *   `upper`. Once one PCF is out of breakpoints, its sentinel makes every later step advance the
 *   other, which is exactly the tail loop of pairKernels.ts, and the step whose right edge is
 *   `upper` is the last rectangle, `(upper - t) * op(f, g)`. One loop does the whole walk with no
 *   end pointers; a pair is done when its time reaches `upper`.
 * - Twelve pairs at once, in six groups of two f64x2 lanes: lane k of a group is one column
 *   against the row, with its own pointers, time and sum, so twelve chains overlap and each
 *   instruction does two pairs' arithmetic. With four chains the loop waited on them; with eight
 *   or more it is bound by how many instructions it issues, so a step spends as few as it can:
 *   - Pointers are record indices, two to a vector (one per i64 lane), and advance by subtracting
 *     the comparison mask (all ones is -1). They live in a scratch slot in memory, not in locals,
 *     and reach the loads as i32 loads from there (extracting lanes costs two uops each).
 *   - Sums live in the scratch slot too. That is not for want of registers alone: with pointers
 *     and sums in locals, V8 put every group's loads ahead of all the arithmetic and spilled most
 *     of the sixteen xmm registers; a store at the end of each group's step keeps the compiled
 *     code in step order, and the loop runs in about half the cycles.
 *   - A lane's (time, value) records are loaded whole. The times are transposed into a times
 *     vector per side (one shuffle each); the values are first combined record by record
 *     (`fa - fb` or `fa * fb` in the high lane, the low lane's result unused) and then transposed
 *     once, so one shuffle serves both sides.
 *   - `f64x2.le` gives each lane's advance mask (equal times advance both) and `f64x2.pmin` the
 *     right edge (b < a ? b : a, the scalar kernels' choice).
 *   - The lanes' times are checked every UNROLL steps, not every step (see UNROLL).
 * - When a lane's pair is done, its sum is stored and the lane takes the next column. Once no
 *   columns are left, a done lane parks (its pointers on a record whose time is NaN, which
 *   compares false and never moves them), and the vector loop goes on while more than
 *   SCALAR_LANES lanes walk; those last finish one by one with the scalar step. Lanes never mix:
 *   each pair's sum adds its own rectangles in walk order, as the JS kernels do.
 */
import { Code, F64, I32, I64, Op, Simd, V128, type FunctionDef } from './encoder.js';

/** Which value is integrated over a rectangle with values (f, g). */
export type Integrand = 'absDiff' | 'sqDiff' | 'product';

/**
 * Groups of two lanes merged at once. Measured (row kernel alone, cycles per merge step, each
 * alternating with six groups in one process): 2 groups 4.6, 3 groups 3.4, 4 groups 2.85, 6 and 8
 * groups 2.3; six keeps the lanes left over at a row's end fewer than eight would.
 */
const GROUPS = 6;
/**
 * Once no columns are left, the vector loop goes on while more than this many lanes walk (parked
 * lanes ride along); the last ones finish with the scalar step, which costs about what a vector
 * iteration costs for two lanes.
 */
const SCALAR_LANES = 2;
/**
 * Merge steps per check of the lanes' times (3 to 5% fewer cycles than a check per step). Every
 * PCF ends in as many sentinel records, the ones after the first being (upper, 0), so a pair done
 * in an earlier step of the iteration steps on over them and adds (upper - upper) * op(0, 0) = +0
 * (a sum is never -0), leaving its sum as it was. One exception: where a PCF has a breakpoint at
 * `upper` itself, the other PCF's extra record meets this one's sentinel, and op(f, 0) for L2
 * overflows once |f| > 1e154, making the sum NaN; the block kernel then recomputes that row with
 * the JS kernels (l2RowInRange), so pdist's results are still theirs.
 */
const UNROLL = 2;

/** Bytes of a group's scratch slot: pointers into a, pointers into b, sums (16 bytes each). */
const SLOT = 48;
/** Byte address of the parking record (time NaN): a lane pointing there on both sides never moves. */
const PARK = SLOT * GROUPS + 15 & ~15;
/** Bytes at address 0 that the row functions use as scratch (the group slots, then the parking record). */
export const SCRATCH_BYTES = PARK + 16;
/** Sentinel records at the end of every PCF (see rowModule.ts). */
export const SENTINELS = UNROLL;

// Parameters: see RowFunction in rowModule.ts.
const A_FIRST = 0, OFFS = 1, COUNT = 2, OUT = 3, UPPER = 4;
const PARAMS = [I32, I32, I32, I32, F64];

/** Byte lanes of i8x16.shuffle that pick the low f64 of both operands, and the high f64 of both. */
const LOW_HALVES = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23];
const HIGH_HALVES = [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31];
/** All bits but the sign of both f64 lanes (f64 absolute value). */
const ABS_MASK = [255, 255, 255, 255, 255, 255, 255, 127, 255, 255, 255, 255, 255, 255, 255, 127];

/** Locals of the scalar step: pointers (bytes), time and sum of one pair. */
interface Scalar { readonly pa: number; readonly pb: number; readonly t: number; readonly sum: number; readonly tn: number; readonly ia: number; readonly ib: number; readonly ai: number; readonly d: number }
/**
 * A group's time (a v128 local) and output addresses; its scratch slot holds two i64 lanes of
 * record indices (low 32 bits) for a at `slot`, for b at `slot + 16`, and the two lanes' sums at
 * `slot + 32`.
 */
interface Group { readonly t: number; readonly out: readonly [number, number]; readonly slot: number }

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
  const s: Scalar = { pa: v.add(I32), pb: v.add(I32), t: v.add(F64), sum: v.add(F64), tn: v.add(F64), ia: v.add(I64), ib: v.add(I64), ai: v.add(I32), d: v.add(F64) };
  const mask = v.add(I32);
  const xa0 = v.add(V128), xa1 = v.add(V128), xb0 = v.add(V128), xb1 = v.add(V128), ta = v.add(V128), tb = v.add(V128);
  const tn = v.add(V128), dv = v.add(V128), abs = v.add(V128), uppers = v.add(V128);
  const groups: Group[] = [];
  for (let g = 0; g < GROUPS; g++) groups.push({ t: v.add(V128), out: [v.add(I32), v.add(I32)], slot: SLOT * g });
  const lanes = groups.flatMap((g) => [[g, 0], [g, 1]] as const);
  const c = new Code();
  const sumAt = (g: Group, k: number): number => g.slot + 32 + 8 * k;

  /** Lane k of g takes the next column (the caller checked COUNT > 0) and its output slot. */
  const take = (g: Group, k: number): void => {
    c.i32(0).get(OFFS).mem(Op.i32Load, 2, 0).i32(1).op(Op.i32Add).mem(Op.i32Store, 2, g.slot + 16 + 8 * k);
    c.i32(0).get(A_FIRST).mem(Op.i32Store, 2, g.slot + 8 * k);
    c.i32(0).f64(0).mem(Op.f64Store, 3, sumAt(g, k));
    c.get(g.t).f64(0).simd(Simd.f64x2ReplaceLane, k).set(g.t);
    c.get(OUT).set(g.out[k]!);
    c.get(OFFS).i32(4).op(Op.i32Add).set(OFFS);
    c.get(OUT).i32(8).op(Op.i32Add).set(OUT);
    c.get(COUNT).i32(1).op(Op.i32Sub).set(COUNT);
  };
  /** Lane k of g parks: both pointers on the parking record, time NaN (never equal to upper). */
  const park = (g: Group, k: number): void => {
    for (const side of [0, 16]) c.i32(0).i32(PARK >> 4).mem(Op.i32Store, 2, g.slot + side + 8 * k);
    c.get(g.t).f64(NaN).simd(Simd.f64x2ReplaceLane, k).set(g.t);
  };
  /** Lane k of g takes the next column if there is one, else parks. */
  const takeOrPark = (g: Group, k: number): void => {
    c.get(COUNT).ifThen();
    take(g, k);
    c.orElse();
    park(g, k);
    c.end();
  };
  /** Pushes 1 when some lane's time is upper (its pair is done). */
  const anyDone = (): void => {
    groups.forEach((g, k) => {
      c.get(g.t).get(uppers).simd(Simd.f64x2Eq);
      if (k > 0) c.simd(Simd.v128Or);
    });
    c.simd(Simd.v128AnyTrue);
  };
  /** Loads the record whose index is the i32 at scratch byte `at`. */
  const record = (at: number, into: number): void => {
    c.i32(0).mem(Op.i32Load, 2, at).i32(4).op(Op.i32Shl).simdMem(Simd.v128Load, 3, 0).set(into);
  };
  // Pointers and sums live in the scratch slots, not in locals: each step's stores keep the
  // compiled code in step order, group by group (with them in locals, every load was hoisted
  // ahead of all arithmetic and the registers spilled).
  const step = (g: Group): void => {
    record(g.slot, xa0);
    record(g.slot + 8, xa1);
    record(g.slot + 16, xb0);
    record(g.slot + 24, xb1);
    c.get(xa0).get(xa1).simd(Simd.i8x16Shuffle, ...LOW_HALVES).set(ta);
    c.get(xb0).get(xb1).simd(Simd.i8x16Shuffle, ...LOW_HALVES).set(tb);
    c.get(ta).get(tb).simd(Simd.f64x2Pmin).set(tn);
    // sum += (tn - t) * integrand(f, g); t = tn
    c.i32(0).i32(0).simdMem(Simd.v128Load, 4, g.slot + 32);
    c.get(tn).get(g.t).simd(Simd.f64x2Sub);
    const combine = kind === 'product' ? Simd.f64x2Mul : Simd.f64x2Sub;
    c.get(xa0).get(xb0).simd(combine).get(xa1).get(xb1).simd(combine).simd(Simd.i8x16Shuffle, ...HIGH_HALVES);
    if (kind === 'absDiff') c.get(abs).simd(Simd.v128And);
    else if (kind === 'sqDiff') c.tee(dv).get(dv).simd(Simd.f64x2Mul);
    c.simd(Simd.f64x2Mul).simd(Simd.f64x2Add).simdMem(Simd.v128Store, 4, g.slot + 32);
    c.get(tn).set(g.t);
    // A true mask is -1 in each i64 lane: subtracting it advances the pointer by one record.
    c.i32(0).i32(0).simdMem(Simd.v128Load, 4, g.slot).get(ta).get(tb).simd(Simd.f64x2Le).simd(Simd.i64x2Sub).simdMem(Simd.v128Store, 4, g.slot);
    c.i32(0).i32(0).simdMem(Simd.v128Load, 4, g.slot + 16).get(tb).get(ta).simd(Simd.f64x2Le).simd(Simd.i64x2Sub).simdMem(Simd.v128Store, 4, g.slot + 16);
  };
  const laneTime = (g: Group, k: number): Code => c.get(g.t).simd(Simd.f64x2ExtractLane, k);
  const store = (out: number, sum: () => void): void => {
    c.get(out);
    sum();
    if (kind === 'sqDiff') c.op(Op.f64Sqrt);
    c.mem(Op.f64Store, 3, 0);
  };

  c.simd(Simd.v128Const, ...ABS_MASK).set(abs);
  c.get(UPPER).simd(Simd.f64x2Splat).set(uppers);
  c.i32(0).f64(NaN).mem(Op.f64Store, 3, PARK);
  for (const [g, k] of lanes) takeOrPark(g, k);
  c.block().loop(); // $finish, $refill
  // While columns are left every lane walks; after that, parked lanes do not count.
  c.get(COUNT).op(Op.i32Eqz).ifThen();
  c.i32(0);
  for (const g of groups) c.get(g.t).get(uppers).simd(Simd.f64x2Lt).simd(Simd.i64x2Bitmask).op(Op.i32Popcnt, Op.i32Add);
  c.i32(SCALAR_LANES).op(Op.i32LeU).brIf(2);
  c.end();
  c.loop(); // every lane steps until a pair is done (a pair done early steps on its extra sentinels)
  for (let u = 0; u < UNROLL; u++) for (const g of groups) step(g);
  anyDone();
  c.op(Op.i32Eqz).brIf(0).end();
  for (const g of groups) {
    c.get(g.t).get(uppers).simd(Simd.f64x2Eq).simd(Simd.i64x2Bitmask).tee(mask).ifThen();
    for (const k of [0, 1]) {
      c.get(mask).i32(1 << k).op(Op.i32And).ifThen();
      store(g.out[k]!, () => c.i32(0).mem(Op.f64Load, 3, sumAt(g, k)));
      takeOrPark(g, k);
      c.end();
    }
    c.end();
  }
  c.br(0).end().end();
  // No columns left and few lanes walking: they finish alone (parked lanes' time is NaN, not < upper).
  for (const [g, k] of lanes) {
    laneTime(g, k).get(UPPER).op(Op.f64Lt).ifThen();
    c.i32(0).mem(Op.i32Load, 2, g.slot + 8 * k).i32(4).op(Op.i32Shl).set(s.pa);
    c.i32(0).mem(Op.i32Load, 2, g.slot + 16 + 8 * k).i32(4).op(Op.i32Shl).set(s.pb);
    laneTime(g, k).set(s.t);
    c.i32(0).mem(Op.f64Load, 3, sumAt(g, k)).set(s.sum);
    c.loop();
    scalarStep(c, kind, s);
    c.get(s.tn).get(UPPER).op(Op.f64Lt).brIf(0);
    c.end();
    store(g.out[k]!, () => c.get(s.sum));
    c.end();
  }
  return { name, params: PARAMS, locals: v.types, body: c };
}

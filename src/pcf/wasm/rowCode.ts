/**
 * The bodies of the WebAssembly row kernels (see rowModule.ts for the memory layout and the
 * arguments): one PCF against a run of columns, the same rectangle walk as l1Pair / l2Pair /
 * l2InnerPair (pairKernels.ts) with the same expressions in the same order, so every result is
 * identical bit for bit. The float32 functions run the same code over float32 records, lanes and
 * sums (see FLOAT): four pairs to a vector instead of two, so a step of a group merges four pairs
 * with the instructions that merge two in float64; their reference is pairKernels32.ts.
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
import { Code, F32, F64, I32, I64, Op, Simd, V128, type FunctionDef } from './encoder.js';

/** Which value is integrated over a rectangle with values (f, g). */
export type Integrand = 'absDiff' | 'sqDiff' | 'product';

/** The float type a row function computes in: its records, lanes, sums and results. */
export type RowPrecision = 'f64' | 'f32';

/**
 * Groups of lanes merged at once. Measured (row kernel alone, cycles per merge step, each
 * alternating with six groups in one process), float64: 2 groups 4.6, 3 groups 3.4, 4 groups 2.85,
 * 6 and 8 groups 2.3; six keeps the lanes left over at a row's end fewer than eight would.
 * float32 (twenty-four pairs in flight at six groups): 3 groups 2.0, 4 groups 1.8, 6 and 8 groups 1.55.
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
 * overflows once |f| > 1e154 (1.8e19 in float32), making the sum NaN; the block kernel then
 * recomputes that row with the JS kernels (l2RowInRange, rowInRange32), so pdist's results are
 * still theirs.
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

/**
 * Byte lanes of i8x16.shuffle over two operands (32 bytes) that pick every even (`odd` 0) or odd
 * (`odd` 1) lane of `width` bytes: the low f64 of both operands and the high ones (width 8), or
 * the even f32 lanes and the odd ones (width 4).
 */
function pick(width: number, odd: number): number[] {
  return Array.from({ length: 32 }, (_, k) => k).filter((k) => (k / width | 0) % 2 === odd);
}

/**
 * What differs between the float64 and the float32 kernels, as [float64, float32] pairs. float64:
 * a record is 16 bytes, a group two f64x2 lanes whose pointers are record indices in i64 lanes.
 * float32: a record is 8 bytes (time, value), a group four f32x4 lanes, each lane's record comes in
 * as one 64-bit half of a vector, and pointers are byte addresses in i32 lanes advanced by
 * `mask & 8`: the shift from index to address would cost eight instructions a group-step, the mask
 * two (measured: indices were no faster, and up to 18% slower).
 */
const FLOAT = {
  type: [F64, F32], lanes: [2, 4],
  /** log2 of the bytes of a record, and of a float. */
  recordShift: [4, 3], size: [3, 2],
  load: [Op.f64Load, Op.f32Load], store: [Op.f64Store, Op.f32Store], abs: [Op.f64Abs, Op.f32Abs], sqrt: [Op.f64Sqrt, Op.f32Sqrt],
  lt: [Op.f64Lt, Op.f32Lt], add: [Op.f64Add, Op.f32Add], sub: [Op.f64Sub, Op.f32Sub], mul: [Op.f64Mul, Op.f32Mul],
  /** The integer type of a time's bits, and its load, signed <= and reinterpretation as the float. */
  intType: [I64, I32], intLoad: [Op.i64Load, Op.i32Load], intLeS: [Op.i64LeS, Op.i32LeS], fromInt: [Op.f64ReinterpretI64, Op.f32ReinterpretI32],
  splat: [Simd.f64x2Splat, Simd.f32x4Splat], extract: [Simd.f64x2ExtractLane, Simd.f32x4ExtractLane], replace: [Simd.f64x2ReplaceLane, Simd.f32x4ReplaceLane],
  eq: [Simd.f64x2Eq, Simd.f32x4Eq], vlt: [Simd.f64x2Lt, Simd.f32x4Lt], le: [Simd.f64x2Le, Simd.f32x4Le], pmin: [Simd.f64x2Pmin, Simd.f32x4Pmin],
  vadd: [Simd.f64x2Add, Simd.f32x4Add], vsub: [Simd.f64x2Sub, Simd.f32x4Sub], vmul: [Simd.f64x2Mul, Simd.f32x4Mul], bitmask: [Simd.i64x2Bitmask, Simd.i32x4Bitmask],
};

/** The opcodes and sizes of one precision (one column of {@link FLOAT}). */
type Float = { readonly [K in keyof typeof FLOAT]: number };

// Parameters: see RowFunction in rowModule.ts.
const A_FIRST = 0, OFFS = 1, COUNT = 2, OUT = 3, UPPER = 4;
const PARAM_COUNT = 5;

/** Locals of the scalar step: pointers (bytes), time and sum of one pair. */
interface Scalar { readonly pa: number; readonly pb: number; readonly t: number; readonly sum: number; readonly tn: number; readonly ia: number; readonly ib: number; readonly ai: number; readonly d: number }
/**
 * A group's time (a v128 local) and output addresses; its scratch slot holds the lanes' pointers
 * into a at `slot`, into b at `slot + 16` (float64: record indices in the low 32 bits of i64
 * lanes; float32: byte addresses in i32 lanes), and the lanes' sums at `slot + 32`.
 */
interface Group { readonly t: number; readonly out: readonly number[]; readonly slot: number }

/** Hands out local indices after the parameters and records their types. */
class Locals {
  readonly types: number[] = [];
  add(type: number): number { this.types.push(type); return PARAM_COUNT + this.types.length - 1; }
}

/** Pushes integrand(f, g) for scalars f and g on the stack. */
function scalarIntegrand(c: Code, kind: Integrand, d: number, x: Float): void {
  if (kind === 'absDiff') c.op(x.sub, x.abs);
  else if (kind === 'sqDiff') c.op(x.sub).tee(d).get(d).op(x.mul);
  else c.op(x.mul);
}

/** One merge step of a single pair (times compared as bit patterns: finite and >= 0). */
function scalarStep(c: Code, kind: Integrand, s: Scalar, x: Float): void {
  const width = 1 << x.size;
  c.get(s.pa).mem(x.intLoad, x.size, 0).set(s.ia);
  c.get(s.pb).mem(x.intLoad, x.size, 0).set(s.ib);
  c.get(s.ia).get(s.ib).get(s.ia).get(s.ib).op(x.intLeS).tee(s.ai).op(Op.select, x.fromInt).set(s.tn);
  c.get(s.sum).get(s.tn).get(s.t).op(x.sub);
  c.get(s.pa).mem(x.load, x.size, width).get(s.pb).mem(x.load, x.size, width);
  scalarIntegrand(c, kind, s.d, x);
  c.op(x.mul, x.add).set(s.sum).get(s.tn).set(s.t);
  c.get(s.pa).get(s.ai).i32(x.recordShift).op(Op.i32Shl).op(Op.i32Add).set(s.pa);
  c.get(s.pb).get(s.ib).get(s.ia).op(x.intLeS).i32(x.recordShift).op(Op.i32Shl).op(Op.i32Add).set(s.pb);
}

/** The body of one row function (see the module comment). */
export function rowFunction(name: string, kind: Integrand, precision: RowPrecision = 'f64'): FunctionDef {
  const f32 = precision === 'f32';
  const x = Object.fromEntries(Object.entries(FLOAT).map(([k, pair]) => [k, pair[+f32]])) as Float;
  const constant = (code: Code, value: number): Code => (f32 ? code.f32(value) : code.f64(value));
  const width = 1 << x.size;
  const v = new Locals();
  const s: Scalar = { pa: v.add(I32), pb: v.add(I32), t: v.add(x.type), sum: v.add(x.type), tn: v.add(x.type), ia: v.add(x.intType), ib: v.add(x.intType), ai: v.add(I32), d: v.add(x.type) };
  const mask = v.add(I32);
  const xa0 = v.add(V128), xa1 = v.add(V128), xb0 = v.add(V128), xb1 = v.add(V128), ta = v.add(V128), tb = v.add(V128);
  const tn = v.add(V128), dv = v.add(V128), abs = v.add(V128), uppers = v.add(V128);
  const eight = f32 ? v.add(V128) : -1;
  const laneIndices = Array.from({ length: x.lanes }, (_, k) => k);
  const groups: Group[] = [];
  for (let g = 0; g < GROUPS; g++) groups.push({ t: v.add(V128), out: laneIndices.map(() => v.add(I32)), slot: SLOT * g });
  const lanes = groups.flatMap((g) => laneIndices.map((k) => [g, k] as const));
  const c = new Code();
  const sumAt = (g: Group, k: number): number => g.slot + 32 + width * k;
  /** Scratch byte of lane k's pointer into a (side 0) or b (side 16): an i32 lane (f32) or an i64 lane (f64). */
  const pointerAt = (g: Group, side: number, k: number): number => g.slot + side + (f32 ? 4 : 8) * k;
  /** Pushes the byte address lane k's pointer at scratch byte `at` holds. */
  const address = (at: number): void => {
    c.i32(0).mem(Op.i32Load, 2, at);
    if (!f32) c.i32(4).op(Op.i32Shl);
  };

  /** Lane k of g takes the next column (the caller checked COUNT > 0) and its output slot. */
  const take = (g: Group, k: number): void => {
    c.i32(0).get(OFFS).mem(Op.i32Load, 2, 0).i32(1).op(Op.i32Add);
    if (f32) c.i32(3).op(Op.i32Shl);
    c.mem(Op.i32Store, 2, pointerAt(g, 16, k));
    c.i32(0).get(A_FIRST).mem(Op.i32Store, 2, pointerAt(g, 0, k));
    constant(c.i32(0), 0).mem(x.store, x.size, sumAt(g, k));
    constant(c.get(g.t), 0).simd(x.replace, k).set(g.t);
    c.get(OUT).set(g.out[k]!);
    c.get(OFFS).i32(4).op(Op.i32Add).set(OFFS);
    c.get(OUT).i32(width).op(Op.i32Add).set(OUT);
    c.get(COUNT).i32(1).op(Op.i32Sub).set(COUNT);
  };
  /** Lane k of g parks: both pointers on the parking record, time NaN (never equal to upper). */
  const park = (g: Group, k: number): void => {
    for (const side of [0, 16]) c.i32(0).i32(f32 ? PARK : PARK >> 4).mem(Op.i32Store, 2, pointerAt(g, side, k));
    constant(c.get(g.t), NaN).simd(x.replace, k).set(g.t);
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
      c.get(g.t).get(uppers).simd(x.eq);
      if (k > 0) c.simd(Simd.v128Or);
    });
    c.simd(Simd.v128AnyTrue);
  };
  /** Loads the record (f64) or the records of two lanes (f32) whose pointers are at scratch byte `at`. */
  const records = (at: number, into: number): void => {
    if (f32) {
      address(at + 4);
      address(at);
      c.simdMem(Simd.v128Load64Zero, 3, 0).simdMem(Simd.v128Load64Lane, 3, 0).op(1).set(into);
    } else {
      address(at);
      c.simdMem(Simd.v128Load, 3, 0).set(into);
    }
  };
  /** Advances the pointers at scratch byte `at` in the lanes where `first <= second`. */
  const advance = (at: number, first: number, second: number): void => {
    c.i32(0).i32(0).simdMem(Simd.v128Load, 4, at).get(first).get(second).simd(x.le);
    // A true mask is -1 in each lane: subtracting it advances an index by one record, and
    // `mask & 8` is the bytes of one float32 record.
    if (f32) c.get(eight).simd(Simd.v128And).simd(Simd.i32x4Add);
    else c.simd(Simd.i64x2Sub);
    c.simdMem(Simd.v128Store, 4, at);
  };
  // Pointers and sums live in the scratch slots, not in locals: each step's stores keep the
  // compiled code in step order, group by group (with them in locals, every load was hoisted
  // ahead of all arithmetic and the registers spilled).
  const step = (g: Group): void => {
    records(g.slot, xa0);
    records(g.slot + 8, xa1);
    records(g.slot + 16, xb0);
    records(g.slot + 24, xb1);
    const times = pick(1 << x.size, 0);
    c.get(xa0).get(xa1).simd(Simd.i8x16Shuffle, ...times).set(ta);
    c.get(xb0).get(xb1).simd(Simd.i8x16Shuffle, ...times).set(tb);
    c.get(ta).get(tb).simd(x.pmin).set(tn);
    // sum += (tn - t) * integrand(f, g); t = tn
    c.i32(0).i32(0).simdMem(Simd.v128Load, 4, g.slot + 32);
    c.get(tn).get(g.t).simd(x.vsub);
    const combine = kind === 'product' ? x.vmul : x.vsub;
    c.get(xa0).get(xb0).simd(combine).get(xa1).get(xb1).simd(combine).simd(Simd.i8x16Shuffle, ...pick(1 << x.size, 1));
    if (kind === 'absDiff') c.get(abs).simd(Simd.v128And);
    else if (kind === 'sqDiff') c.tee(dv).get(dv).simd(x.vmul);
    c.simd(x.vmul).simd(x.vadd).simdMem(Simd.v128Store, 4, g.slot + 32);
    c.get(tn).set(g.t);
    advance(g.slot, ta, tb);
    advance(g.slot + 16, tb, ta);
  };
  const laneTime = (g: Group, k: number): Code => c.get(g.t).simd(x.extract, k);
  const store = (out: number, sum: () => void): void => {
    c.get(out);
    sum();
    if (kind === 'sqDiff') c.op(x.sqrt);
    c.mem(x.store, x.size, 0);
  };

  if (f32) {
    c.get(A_FIRST).i32(3).op(Op.i32Shl).set(A_FIRST);
    c.i32(8).simd(Simd.i32x4Splat).set(eight);
  }
  // All bits but each lane's sign bit (the top bit of its last byte): the lanes' absolute value.
  c.simd(Simd.v128Const, ...Array.from({ length: 16 }, (_, k) => ((k + 1) % width === 0 ? 127 : 255))).set(abs);
  c.get(UPPER).simd(x.splat).set(uppers);
  constant(c.i32(0), NaN).mem(x.store, x.size, PARK);
  for (const [g, k] of lanes) takeOrPark(g, k);
  c.block().loop(); // $finish, $refill
  // While columns are left every lane walks; after that, parked lanes do not count.
  c.get(COUNT).op(Op.i32Eqz).ifThen();
  c.i32(0);
  for (const g of groups) c.get(g.t).get(uppers).simd(x.vlt).simd(x.bitmask).op(Op.i32Popcnt, Op.i32Add);
  c.i32(SCALAR_LANES).op(Op.i32LeU).brIf(2);
  c.end();
  c.loop(); // every lane steps until a pair is done (a pair done early steps on its extra sentinels)
  for (let u = 0; u < UNROLL; u++) for (const g of groups) step(g);
  anyDone();
  c.op(Op.i32Eqz).brIf(0).end();
  for (const g of groups) {
    c.get(g.t).get(uppers).simd(x.eq).simd(x.bitmask).tee(mask).ifThen();
    for (const k of laneIndices) {
      c.get(mask).i32(1 << k).op(Op.i32And).ifThen();
      store(g.out[k]!, () => c.i32(0).mem(x.load, x.size, sumAt(g, k)));
      takeOrPark(g, k);
      c.end();
    }
    c.end();
  }
  c.br(0).end().end();
  // No columns left and few lanes walking: they finish alone (parked lanes' time is NaN, not < upper).
  for (const [g, k] of lanes) {
    laneTime(g, k).get(UPPER).op(x.lt).ifThen();
    address(pointerAt(g, 0, k));
    c.set(s.pa);
    address(pointerAt(g, 16, k));
    c.set(s.pb);
    laneTime(g, k).set(s.t);
    c.i32(0).mem(x.load, x.size, sumAt(g, k)).set(s.sum);
    c.loop();
    scalarStep(c, kind, s, x);
    c.get(s.tn).get(UPPER).op(x.lt).brIf(0);
    c.end();
    store(g.out[k]!, () => c.get(s.sum));
    c.end();
  }
  return { name, params: [I32, I32, I32, I32, x.type], locals: v.types, body: c };
}

/**
 * The kernel module the GPU PCF block operation loads: the rectangle walk of pairKernels.ts in
 * WGSL, in float32, one kernel per integrand (L1, L2, integer p, real p, L2 inner product). One task is one pair of a block, so a block of r x c pairs is one launch of
 * r * c invocations (a GPU wants many more threads than a CPU has cores); task t is pair
 * (rowFirst + t / colCount, colFirst + t % colCount) and writes out[t], which is the block's
 * row-major layout, or with `columns` 1 pair (rowFirst + t % rowCount, colFirst + t / rowCount),
 * the column-major layout. A pair the skip rule leaves out is written as 0, so a reused output buffer
 * never leaks an earlier block's value. An Lp pair whose float32 sum lost range (an overflow, or
 * terms that underflowed) is recomputed in the same invocation in the scaled form of
 * wgslLpRange.ts, an L1 or inner-product pair whose sum is not finite with its terms' exponents
 * apart (wgslSumRange.ts); the others keep the plain sum, so ordinary results are what they were.
 */
import { defineKernel } from '../mu/index.js';
import { lpRangeDeclarations } from './wgslLpRange.js';
import { sumRangeDeclarations } from './wgslSumRange.js';

/** The integrands, each with its own kernel `pcf_block_<kind>`. */
export type GpuIntegrand = 'l1' | 'l2' | 'lp_int' | 'lp_real' | 'l2inner';

/** Constants of one GPU block launch. `skip` uses the codes of blockKernels' SKIP_RULES. */
export interface GpuBlockParams {
  readonly rowFirst: number;
  readonly colFirst: number;
  readonly rowCount: number;
  readonly colCount: number;
  /** 1: the block's results column-major; 0: row-major. */
  readonly columns: number;
  readonly p: number;
  readonly skip: number;
  readonly upper: number;
}

/** The integrand of each kind, as a WGSL expression of f, g, d = |f - g| and p. */
const INTEGRAND: Record<GpuIntegrand, string> = {
  l1: 'd',
  l2: 'd * d',
  lp_int: 'pcf_pow_int(d, u32(p))',
  lp_real: 'select(pow(d, p), 0.0, d == 0.0)',
  l2inner: 'f * g',
};

/** How the integral becomes the result. */
const FINISH: Record<GpuIntegrand, string> = {
  l1: 'sum',
  l2: 'sqrt(sum)',
  lp_int: 'select(pow(sum, 1.0 / p), 0.0, sum == 0.0)',
  lp_real: 'select(pow(sum, 1.0 / p), 0.0, sum == 0.0)',
  l2inner: 'sum',
};

/**
 * x^(1/p) in the Lp kernels' recomputation of pairs whose sum lost range (wgslLpRange.ts); L1 and
 * the inner product have none: their integral is the result, summed again with each term's
 * exponent apart where the plain sum is not finite (wgslSumRange.ts).
 */
const ROOT: Partial<Record<GpuIntegrand, (x: string) => string>> = {
  l2: (x) => `sqrt(${x})`,
  lp_int: (x) => `pow(${x}, 1.0 / p)`,
  lp_real: (x) => `pow(${x}, 1.0 / p)`,
};

/**
 * The last rectangle's term, w times the integrand at the last values. For the inner product, a
 * product f * g below the float32 range (1e-23 * 1e-23 is 0) would lose a term that the width, up
 * to 2^128, makes count: the width is multiplied by the smaller factor first, which keeps both
 * products in range (as the CPU cores compute such a pair in float64, pairKernels32.ts).
 */
const LAST_TERM: Partial<Record<GpuIntegrand, string>> = {
  l2inner: `let fg = f * g;
  if (f != 0.0 && g != 0.0 && abs(fg) < 0x1p-102f) {
    let f_smaller = abs(f) < abs(g);
    return (w * select(g, f, f_smaller)) * select(f, g, f_smaller);
  }
  return w * fg;`,
};

function declarations(kind: GpuIntegrand): string {
  const root = ROOT[kind];
  const sumKind = kind === 'l1' || kind === 'l2inner' ? kind : undefined;
  const rescue = root !== undefined
    ? '  if (pcf_lost_range(sum, last, last_differs, at)) { return pcf_scaled(i, j, p, upper); }\n'
    : '  if (pcf_sum_lost(sum)) { return pcf_sum_apart(i, j, upper); }\n';
  return /* wgsl */ `
fn pcf_pow_int(d: f32, n: u32) -> f32 {
  var w = d;
  for (var k = 1u; k < n; k++) { w *= d; }
  return w;
}

fn pcf_integrand(p: f32, f: f32, g: f32) -> f32 {
  let d = abs(f - g);
  return ${INTEGRAND[kind]};
}

// w times the integrand over the last rectangle, w wide.
fn pcf_last_term(p: f32, w: f32, f: f32, g: f32) -> f32 {
  ${LAST_TERM[kind] ?? 'return w * pcf_integrand(p, f, g);'}
}

// sum: the whole integral; last: the last rectangle's integrand; at: where that rectangle starts.
fn pcf_finish(p: f32, sum: f32, last: f32, last_differs: bool, at: f32, i: u32, j: u32, upper: f32) -> f32 {
${rescue}  return ${FINISH[kind]};
}
${root === undefined ? '' : lpRangeDeclarations(root)}${sumKind === undefined ? '' : sumRangeDeclarations(sumKind)}`;
}

const body = /* wgsl */ `
  let t = task_idx();
  var r: u32;
  var c: u32;
  if (params.columns == 1u) {
    c = t / params.rowCount;
    r = t - c * params.rowCount;
  } else {
    r = t / params.colCount;
    c = t - r * params.colCount;
  }
  let i = params.rowFirst + r;
  let j = params.colFirst + c;
  if ((params.skip == 1u && j >= i) || (params.skip == 2u && j > i)) {
    out[out_offset + t] = 0.0;
    return;
  }
  let p = params.p;
  var a = rowOffsets[rowOffsets_offset + i] + 1u;
  let aEnd = rowOffsets[rowOffsets_offset + i + 1u];
  var b = colOffsets[colOffsets_offset + j] + 1u;
  let bEnd = colOffsets[colOffsets_offset + j + 1u];
  var at = 0.0;
  var sum = 0.0;
  while (a < aEnd && b < bEnd) {
    let ta = rowTimes[rowTimes_offset + a];
    let tb = colTimes[colTimes_offset + b];
    let tn = min(ta, tb);
    sum += (tn - at) * pcf_integrand(p, rowValues[rowValues_offset + a - 1u], colValues[colValues_offset + b - 1u]);
    at = tn;
    a += select(0u, 1u, ta <= tb);
    b += select(0u, 1u, tb <= ta);
  }
  var fv = rowValues[rowValues_offset + a - 1u];
  var gv = colValues[colValues_offset + b - 1u];
  for (; a < aEnd; a++) {
    let rt = rowTimes[rowTimes_offset + a];
    sum += (rt - at) * pcf_integrand(p, fv, gv);
    at = rt;
    fv = rowValues[rowValues_offset + a];
  }
  for (; b < bEnd; b++) {
    let rt = colTimes[colTimes_offset + b];
    sum += (rt - at) * pcf_integrand(p, fv, gv);
    at = rt;
    gv = colValues[colValues_offset + b];
  }
  let last = pcf_integrand(p, fv, gv);
  sum += pcf_last_term(p, params.upper - at, fv, gv);
  out[out_offset + t] = pcf_finish(p, sum, last, fv != gv, at, i, j, params.upper);
`;

function blockKernel(kind: GpuIntegrand) {
  return defineKernel({
    form: 'batch',
    wgsl: {
      params: {
        rowTimes: 'array<f32>',
        rowValues: 'array<f32>',
        rowOffsets: 'array<u32>',
        colTimes: 'array<f32>',
        colValues: 'array<f32>',
        colOffsets: 'array<u32>',
        out: 'array<f32, read_write>',
        params: { rowFirst: 'u32', colFirst: 'u32', rowCount: 'u32', colCount: 'u32', columns: 'u32', p: 'f32', skip: 'u32', upper: 'f32' },
      },
      declarations: declarations(kind),
      body,
    },
  });
}

// One kernel per integrand, so the hot loop has no branch on the operation.
export const pcf_block_l1 = blockKernel('l1');
export const pcf_block_l2 = blockKernel('l2');
export const pcf_block_lp_int = blockKernel('lp_int');
export const pcf_block_lp_real = blockKernel('lp_real');
export const pcf_block_l2inner = blockKernel('l2inner');

/**
 * The rectangle walk of one pair in WGSL, for the GPU kernels' second passes over a pair whose
 * plain float32 sum lost range (wgslLpRange.ts, wgslSumRange.ts): the same rectangles in the same
 * order as the block kernel's body (wgslBlockKernels.ts), each folded into an accumulator.
 */

/**
 * WGSL of `fn <name>(i: u32, j: u32, upper: f32, <params>) -> f32`, which walks pair (i, j) and
 * returns the accumulator, `init` at first, after `acc = <step(w, f, g)>` for each rectangle of
 * width w and values f (row PCF) and g (column PCF). It reads the block kernels' storage bindings
 * (rowTimes, ..., colOffsets), so it belongs to their module.
 *
 * @example pairWalk('pcf_sum_walk', 'phase: u32, e_max: f32', '0.0', (w, f, g) => `pcf_sum_step(phase, acc, ${w}, ${f}, ${g}, e_max)`)
 */
export function pairWalk(name: string, params: string, init: string, step: (w: string, f: string, g: string) => string): string {
  return /* wgsl */ `
fn ${name}(i: u32, j: u32, upper: f32, ${params}) -> f32 {
  var a = rowOffsets[rowOffsets_offset + i] + 1u;
  let aEnd = rowOffsets[rowOffsets_offset + i + 1u];
  var b = colOffsets[colOffsets_offset + j] + 1u;
  let bEnd = colOffsets[colOffsets_offset + j + 1u];
  var at = 0.0;
  var acc = ${init};
  while (a < aEnd && b < bEnd) {
    let ta = rowTimes[rowTimes_offset + a];
    let tb = colTimes[colTimes_offset + b];
    let tn = min(ta, tb);
    acc = ${step('tn - at', 'rowValues[rowValues_offset + a - 1u]', 'colValues[colValues_offset + b - 1u]')};
    at = tn;
    a += select(0u, 1u, ta <= tb);
    b += select(0u, 1u, tb <= ta);
  }
  var fv = rowValues[rowValues_offset + a - 1u];
  var gv = colValues[colValues_offset + b - 1u];
  for (; a < aEnd; a++) {
    let rt = rowTimes[rowTimes_offset + a];
    acc = ${step('rt - at', 'fv', 'gv')};
    at = rt;
    fv = rowValues[rowValues_offset + a];
  }
  for (; b < bEnd; b++) {
    let rt = colTimes[colTimes_offset + b];
    acc = ${step('rt - at', 'fv', 'gv')};
    at = rt;
    gv = colValues[colValues_offset + b];
  }
  return ${step('upper - at', 'fv', 'gv')};
}
`;
}

/**
 * The kernel module the PCF block operation loads into every MU core. One task computes one row of
 * a block: PCF (rowFirst + task) against columns [colFirst, colFirst + colCount).
 */
import { defineKernel, type NDView } from '../mu/index.js';
import { integrateRow, L2_INNER, pcfOp, type PcfOp, type SkipRule } from './integrate.js';
import type { PcfData } from './pcfSet.js';

/** Constants of one block launch. `op` 0 = Lp distance with `p`, 1 = L2 inner product. */
export interface BlockParams {
  readonly rowFirst: number;
  readonly colFirst: number;
  readonly colCount: number;
  readonly op: number;
  readonly p: number;
  readonly skip: number;
  readonly upper: number;
}

/** Skip rules by their code in {@link BlockParams.skip}. */
export const SKIP_RULES: readonly SkipRule[] = ['none', 'skipDiagAndAbove', 'skipAbove'];

export const pcf_block = defineKernel({
  bind: (
    rowTimes: NDView<Float64Array>, rowValues: NDView<Float64Array>, rowOffsets: NDView<Uint32Array>,
    colTimes: NDView<Float64Array>, colValues: NDView<Float64Array>, colOffsets: NDView<Uint32Array>,
    out: NDView<Float64Array | Float32Array>, params: BlockParams,
  ) => {
    const rows: PcfData = { times: rowTimes.data, values: rowValues.data, offsets: rowOffsets.data };
    const cols: PcfData = { times: colTimes.data, values: colValues.data, offsets: colOffsets.data };
    const op: PcfOp = params.op === 1 ? L2_INNER : pcfOp(params.p);
    const skip = SKIP_RULES[params.skip]!;
    const { rowFirst, colFirst, colCount, upper } = params;
    const output = out.data;
    return (first: number, end: number) => {
      for (let r = first; r < end; r++) {
        integrateRow(op, rows, rowFirst + r, cols, colFirst, colFirst + colCount, output, r * colCount, skip, 0, 0, upper);
      }
    };
  },
});

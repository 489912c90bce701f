/**
 * The computation the page runs: the chosen operation (L1 or Lp distances with pdist, or the L2
 * kernel with l2Kernel) on the loaded PCFs, with the chosen dtype and device, cancellable and
 * reporting progress; and its result as a {@link MatrixView} and as `.npy` bytes.
 */
import { encodeNpy, l2Kernel, pdist, type BlockProgress, type DistanceMatrix, type PcfSet, type SymmetricMatrix } from 'pxl';
import { distanceView, kernelView, type MatrixView } from './matrixView.js';

/** What the operation menu offers. */
export type Operation = 'l1' | 'lp' | 'l2kernel';

/** A run as the form describes it. */
export interface RunRequest {
  readonly operation: Operation;
  /** Exponent for 'lp'; ignored otherwise. */
  readonly p: number;
  readonly dtype: 'float32' | 'float64';
  readonly device: 'cpu' | 'gpu';
  readonly signal: AbortSignal;
  readonly onProgress: (progress: BlockProgress) => void;
}

/** A finished run. */
export interface RunResult {
  readonly matrix: DistanceMatrix | SymmetricMatrix;
  readonly view: MatrixView;
  /** What was computed, in words: "L1 distances", "L2.5 distances", "L2 kernel". */
  readonly label: string;
  /** A file name for the download, e.g. "pdist-l1-n200-float64.npy". */
  readonly fileName: string;
}

/** Runs `request` on `set`; rejects with the library's errors (CancelledError when aborted). */
export async function runOperation(set: PcfSet, request: RunRequest): Promise<RunResult> {
  const common = { dtype: request.dtype, device: request.device, signal: request.signal, onProgress: request.onProgress };
  const n = set.count;
  if (request.operation === 'l2kernel') {
    const matrix = await l2Kernel(set, common);
    return { matrix, view: kernelView(n, matrix.packed), label: 'L2 kernel', fileName: `l2kernel-n${n}-${request.dtype}.npy` };
  }
  const p = request.operation === 'l1' ? 1 : request.p;
  const matrix = await pdist(set, { ...common, p });
  return { matrix, view: distanceView(n, matrix.condensed), label: `L${p} distances`, fileName: `pdist-l${p}-n${n}-${request.dtype}.npy` };
}

/** The full n x n matrix of `result` as a `.npy` file (NumPy's format, little-endian). */
export function resultNpy(result: RunResult): Uint8Array {
  const square = result.matrix.toSquare();
  return encodeNpy(square.data, square.shape);
}

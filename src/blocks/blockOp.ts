/**
 * The BlockOp policy: everything a pairwise operation must supply so the generic block pipeline
 * can run it. The pipeline owns scheduling, output buffers, result scatter and overlap between
 * blocks; the policy owns what is computed and how its input data reaches the device.
 */
import type { BlockInfo, BlockScheduler } from './blockScheduler.js';
import type { FloatArray } from './floatArray.js';

/**
 * A pairwise operation as the block pipeline sees it, generic over `Storage`: whatever the
 * operation keeps per device (input buffers sized for the largest block, bound kernels).
 *
 * Contract, per device: `initStorage` runs once before any block; `execBlock` calls are
 * sequential, never overlapping on one storage (the pipeline waits for one to settle before the
 * next), so one storage serves every block; `disposeStorage` runs once after the last block, also
 * when a block failed. Different devices have different storages and may run concurrently.
 *
 * @example
 * const op: BlockOp<{ rows: Float64Array }> = {
 *   initStorage: (_device, scheduler) => ({ rows: new Float64Array(scheduler.maxBlockRows) }),
 *   async execBlock(storage, block, out) { ... fill out[r * block.colCount + c] ... },
 * };
 */
export interface BlockOp<Storage> {
  /**
   * Prepares device `deviceIndex` for the whole schedule, sizing buffers from the scheduler's
   * maxima (`maxBlockRows`, `maxBlockCols`, `maxBlockElements`) so no block reallocates.
   */
  initStorage(deviceIndex: number, scheduler: BlockScheduler): Storage | Promise<Storage>;

  /**
   * Computes one block into `out`, row-major: pair (rowFirst + r, colFirst + c) at
   * `r * block.colCount + c`. `out` is zero-filled beforehand and has at least
   * `block.rowCount * block.colCount` elements; pairs the operation's triangle skip mode leaves out
   * must stay 0, which the result writers check. Resolves once `out` holds the results; rejects
   * (never throws synchronously) on failure.
   */
  execBlock(storage: Storage, block: BlockInfo, out: FloatArray): Promise<void>;

  /** Releases what `initStorage` allocated. Optional: storages made of plain host memory need nothing. */
  disposeStorage?(storage: Storage): void | Promise<void>;
}

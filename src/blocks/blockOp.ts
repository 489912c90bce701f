/**
 * The BlockOp policy: everything a pairwise operation must supply so the generic block pipeline
 * can run it. The pipeline owns scheduling, output buffers, result scatter and overlap between
 * blocks; the policy owns what is computed and how its input data reaches the device.
 */
import type { BlockInfo, BlockScheduler } from './blockScheduler.js';
import type { FloatArray } from './floatArray.js';

/** Which of a device's two result buffers a block uses; the pipeline alternates them. */
export type BufferSlot = 0 | 1;

/**
 * How a block's results lie in its output buffer: `'rows'`, row-major (pair (rowFirst + r,
 * colFirst + c) at `r * colCount + c`), or `'columns'`, column-major (at `c * rowCount + r`).
 */
export type BlockLayout = 'rows' | 'columns';

/**
 * A pairwise operation as the block pipeline sees it, generic over `Storage`: whatever the
 * operation keeps per device (input data, two result buffers, bound kernels).
 *
 * Contract, per device: `initStorage` runs once before any block; at most two `execBlock` calls
 * are outstanding on one storage, on different slots, and a slot is reused only after the
 * pipeline has scattered its previous block; `disposeStorage` runs once after the last block,
 * also when a block failed. Different devices have different storages and run concurrently.
 *
 * @example
 * const op: BlockOp<{ out: [Float64Array, Float64Array] }> = {
 *   initStorage: (_device, s) => ({ out: [new Float64Array(s.maxBlockElements), new Float64Array(s.maxBlockElements)] }),
 *   outputBuffer: (storage, slot) => storage.out[slot],
 *   async execBlock(storage, block, slot) { ... fill storage.out[slot][r * block.colCount + c] ... },
 * };
 */
export interface BlockOp<Storage> {
  /**
   * Prepares device `deviceIndex` for the whole schedule, sizing buffers from the scheduler's
   * maxima (`maxBlockRows`, `maxBlockCols`, `maxBlockElements`) so no block reallocates.
   */
  initStorage(deviceIndex: number, scheduler: BlockScheduler): Storage | Promise<Storage>;

  /**
   * The host-visible buffer that holds a block's results once `execBlock` on `slot` resolves, with
   * at least `maxBlockElements` elements. The pipeline zero-fills the block's part before
   * `execBlock` and hands it to the result writer afterwards.
   */
  outputBuffer(storage: Storage, slot: BufferSlot): FloatArray;

  /**
   * Computes one block into `outputBuffer(storage, slot)`, row-major: pair (rowFirst + r,
   * colFirst + c) at `r * block.colCount + c`. Pairs the operation's triangle skip mode leaves out
   * must stay 0, which the result writers check. Resolves once the buffer holds the results;
   * rejects (never throws synchronously) on failure. With `outputLayout` `'columns'` the buffer
   * holds the block column-major instead.
   */
  execBlock(storage: Storage, block: BlockInfo, slot: BufferSlot): Promise<void>;

  /**
   * The layout of this storage's results; default `'rows'`. An op returns `'columns'` only when
   * the result writer it was made for has `writeColumns`.
   */
  outputLayout?(storage: Storage): BlockLayout;

  /**
   * Elements a device's output buffer holds for one launch, when the device runs several
   * neighbouring blocks as one (a GPU, whose launches want many more pairs than a CPU core's
   * blocks hold). The pipeline then may hand `execBlock` the rectangle of blocks that lie side by
   * side in the direction `outputLayout` makes their results contiguous: one row band's blocks,
   * left to right, for `'columns'`; one column band's, top to bottom, for `'rows'`. Left out or
   * at most `maxBlockElements`: one block per launch.
   */
  batchElements?(storage: Storage): number;

  /** Releases what `initStorage` allocated. */
  disposeStorage?(storage: Storage): void | Promise<void>;
}

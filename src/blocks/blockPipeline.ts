import { CancelledError, LogicError } from '../core/errors.js';
import type { BlockOp, BufferSlot } from './blockOp.js';
import type { BlockInfo, BlockScheduler } from './blockScheduler.js';
import { clearInSteps } from './eventLoopSteps.js';
import type { ResultWriter } from './resultWriter.js';
import { pairsInBlock, type TriangleSkipMode } from './triangleSkip.js';

/** Progress of a pipeline run, reported after each block is scattered. */
export interface BlockProgress {
  readonly blocksDone: number;
  readonly blocksTotal: number;
  readonly pairsDone: number;
  readonly pairsTotal: number;
  /** Which device (0 .. devices - 1, in the order the caller listed them) computed the block just scattered. */
  readonly device: number;
}

export interface BlockPipelineOptions {
  /** Which pairs the operation computes; used to count pairs for progress. */
  readonly skip: TriangleSkipMode;
  /** Devices to spread blocks over (each gets its own storage). Default 1. */
  readonly devices?: number;
  /** Stops the run between blocks; the run then rejects with CancelledError. */
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: BlockProgress) => void;
  /**
   * The blocks to run, a subset of `scheduler.blocks` in its order (a resumed run leaves out those
   * already written). Default: all of them. Progress counts only these.
   */
  readonly blocks?: readonly BlockInfo[];
}

/**
 * Runs every block of a schedule through a BlockOp and scatters the results with `writer`.
 *
 * Each device pulls the next block from one shared queue (largest first, as the scheduler sorted
 * them), so faster devices take more blocks. Per device the run is double-buffered: block N+1 is
 * launched into the other buffer slot before block N's results are scattered, so the host's
 * scatter overlaps the device's compute.
 *
 * On error or cancellation no new blocks start, blocks in flight settle, every storage is disposed,
 * and the run rejects: the caller must treat the output as garbage (never hand it out).
 *
 * @throws (rejects) CancelledError when `signal` aborts; the first BlockOp or writer error otherwise.
 */
export async function runBlockPipeline<S>(op: BlockOp<S>, scheduler: BlockScheduler, writer: ResultWriter, options: BlockPipelineOptions): Promise<void> {
  const blocks = options.blocks ?? scheduler.blocks;
  const pairsTotal = blocks.reduce((n, b) => n + pairsInBlock(options.skip, b), 0);
  let next = 0;
  let blocksDone = 0;
  let pairsDone = 0;
  let failure: { error: unknown } | undefined;
  const stopped = (): boolean => failure !== undefined || options.signal?.aborted === true;

  const take = (): BlockInfo | undefined => (stopped() ? undefined : blocks[next++]);
  // A writer's promise holds this device until the buffer slot may be reused: the backpressure hook.
  const scatter = async (storage: S, block: BlockInfo, slot: BufferSlot, device: number): Promise<void> => {
    const buf = op.outputBuffer(storage, slot);
    if (op.outputLayout?.(storage) !== 'columns') await writer.write(block, buf);
    else if (writer.writeColumns !== undefined) await writer.writeColumns(block, buf);
    else throw new LogicError(`device ${device} computed block ${block.index} column-major, but the result writer takes rows only; make the op for a writer with writeColumns`);
    blocksDone++;
    pairsDone += pairsInBlock(options.skip, block);
    options.onProgress?.({ blocksDone, blocksTotal: blocks.length, pairsDone, pairsTotal, device });
  };

  const device = async (index: number): Promise<void> => {
    const storage = await op.initStorage(index, scheduler);
    try {
      let previous: { block: BlockInfo; slot: BufferSlot } | undefined;
      let slot: BufferSlot = 0;
      for (let block = take(); block !== undefined; block = take()) {
        await clearInSteps(op.outputBuffer(storage, slot), block.rowCount * block.colCount);
        const running = op.execBlock(storage, block, slot);
        try {
          if (previous !== undefined) await scatter(storage, previous.block, previous.slot, index);
        } finally {
          await running;
        }
        previous = { block, slot };
        slot = slot === 0 ? 1 : 0;
      }
      if (previous !== undefined && !stopped()) await scatter(storage, previous.block, previous.slot, index);
    } catch (error) {
      failure ??= { error };
    } finally {
      await op.disposeStorage?.(storage);
    }
  };

  const devices = Math.max(1, Math.min(options.devices ?? 1, blocks.length));
  const results = await Promise.allSettled(Array.from({ length: devices }, (_, d) => device(d)));
  for (const r of results) if (r.status === 'rejected') failure ??= { error: r.reason };
  if (failure !== undefined) throw failure.error;
  if (options.signal?.aborted === true) throw new CancelledError('the pairwise computation was cancelled; no result was produced', { cause: options.signal.reason });
}

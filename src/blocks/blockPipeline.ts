import { CancelledError, LogicError } from '../core/errors.js';
import type { BlockLayout, BlockOp, BufferSlot } from './blockOp.js';
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

/** Work of a block, in output elements. */
const elementsOf = (b: BlockInfo): number => b.rowCount * b.colCount;

/**
 * The rectangle of `batch`'s blocks, which lie side by side along `layout`'s direction (see
 * `BlockOp.batchElements`): what one launch computes. A single block is itself.
 */
function rectangleOf(batch: readonly BlockInfo[], layout: BlockLayout): BlockInfo {
  const first = batch[0]!;
  if (batch.length === 1) return first;
  const sum = batch.reduce((n, b) => n + (layout === 'columns' ? b.colCount : b.rowCount), 0);
  return {
    ...first,
    ...(layout === 'columns' ? { colCount: sum } : { rowCount: sum }),
    diagonal: batch.some((b) => b.diagonal),
  };
}

/** Whether `next` continues `last` along `layout`'s direction, so their results are contiguous. */
function continues(last: BlockInfo, next: BlockInfo, layout: BlockLayout): boolean {
  return layout === 'columns'
    ? next.rowFirst === last.rowFirst && next.rowCount === last.rowCount && next.colFirst === last.colFirst + last.colCount
    : next.colFirst === last.colFirst && next.colCount === last.colCount && next.rowFirst === last.rowFirst + last.rowCount;
}

/**
 * Runs every block of a schedule through a BlockOp and scatters the results with `writer`.
 *
 * Each device pulls the next block from one shared queue (largest first, as the scheduler sorted
 * them), so faster devices take more blocks. Per device the run is double-buffered: block N+1 is
 * launched into the other buffer slot before block N's results are scattered, so the host's
 * scatter overlaps the device's compute.
 *
 * A device whose op has `batchElements` takes, with the next block, the blocks after it in the
 * queue that continue it side by side (the scheduler queues a row band's blocks left to right),
 * as many as its buffer holds, and runs them as one launch; it takes no more than its share of
 * the blocks left, by the pairs per second each device has shown so far, so that a slow device
 * does not hold the last blocks while faster ones wait.
 *
 * On error or cancellation no new blocks start, blocks in flight settle, every storage is disposed,
 * and the run rejects: the caller must treat the output as garbage (never hand it out).
 *
 * @throws (rejects) CancelledError when `signal` aborts; the first BlockOp or writer error otherwise.
 */
export async function runBlockPipeline<S>(op: BlockOp<S>, scheduler: BlockScheduler, writer: ResultWriter, options: BlockPipelineOptions): Promise<void> {
  const blocks = options.blocks ?? scheduler.blocks;
  const pairsTotal = blocks.reduce((n, b) => n + pairsInBlock(options.skip, b), 0);
  const devices = Math.max(1, Math.min(options.devices ?? 1, blocks.length));
  let next = 0;
  let blocksDone = 0;
  let pairsDone = 0;
  let failure: { error: unknown } | undefined;
  const stopped = (): boolean => failure !== undefined || options.signal?.aborted === true;
  // Per device: when its first launch started, and the output elements it has finished since.
  const started: number[] = Array.from({ length: devices }, () => NaN);
  const finished: number[] = Array.from({ length: devices }, () => 0);

  /** The device's share of the blocks left: its elements per second over all devices', or an equal share before every device has finished one. */
  const share = (device: number): number => {
    const now = performance.now();
    const rates = finished.map((e, d) => e / Math.max(1e-3, now - started[d]!));
    const total = rates.reduce((a, b) => a + b, 0);
    return rates.every((r) => r > 0) ? rates[device]! / total : 1 / devices;
  };

  const take = (device: number, capacity: number, layout: BlockLayout): BlockInfo[] => {
    const first = stopped() ? undefined : blocks[next];
    if (first === undefined) return [];
    next++;
    const batch = [first];
    let elements = elementsOf(first);
    if (elements >= capacity) return batch;
    const limit = Math.max(1, Math.ceil((blocks.length - next + 1) * share(device)));
    for (let b = blocks[next]; b !== undefined && batch.length < limit && elements + elementsOf(b) <= capacity && continues(batch[batch.length - 1]!, b, layout); b = blocks[next]) {
      batch.push(b);
      elements += elementsOf(b);
      next++;
    }
    return batch;
  };
  // A writer's promise holds this device until the buffer slot may be reused: the backpressure hook.
  const scatter = async (storage: S, batch: readonly BlockInfo[], slot: BufferSlot, device: number): Promise<void> => {
    const buf = op.outputBuffer(storage, slot);
    const columns = op.outputLayout?.(storage) === 'columns';
    let offset = 0;
    for (const block of batch) {
      const part = batch.length === 1 ? buf : buf.subarray(offset, offset + elementsOf(block));
      offset += elementsOf(block);
      if (!columns) await writer.write(block, part);
      else if (writer.writeColumns !== undefined) await writer.writeColumns(block, part);
      else throw new LogicError(`device ${device} computed block ${block.index} column-major, but the result writer takes rows only; make the op for a writer with writeColumns`);
      blocksDone++;
      pairsDone += pairsInBlock(options.skip, block);
      finished[device]! += elementsOf(block);
      options.onProgress?.({ blocksDone, blocksTotal: blocks.length, pairsDone, pairsTotal, device });
    }
  };

  const device = async (index: number): Promise<void> => {
    const storage = await op.initStorage(index, scheduler);
    try {
      const layout = op.outputLayout?.(storage) ?? 'rows';
      const capacity = op.batchElements?.(storage) ?? 0;
      let previous: { batch: BlockInfo[]; slot: BufferSlot } | undefined;
      let slot: BufferSlot = 0;
      for (let batch = take(index, capacity, layout); batch.length > 0; batch = take(index, capacity, layout)) {
        const rectangle = rectangleOf(batch, layout);
        await clearInSteps(op.outputBuffer(storage, slot), elementsOf(rectangle));
        if (Number.isNaN(started[index])) started[index] = performance.now();
        const running = op.execBlock(storage, rectangle, slot);
        // Awaited below, once the block before it is scattered; a launch that fails meanwhile (a
        // Context destroyed, a core that died) is handled from now on, not reported as unhandled.
        running.catch(() => undefined);
        try {
          if (previous !== undefined) await scatter(storage, previous.batch, previous.slot, index);
        } finally {
          await running;
        }
        previous = { batch, slot };
        slot = slot === 0 ? 1 : 0;
      }
      if (previous !== undefined && !stopped()) await scatter(storage, previous.batch, previous.slot, index);
    } catch (error) {
      failure ??= { error };
    } finally {
      await op.disposeStorage?.(storage);
    }
  };

  const results = await Promise.allSettled(Array.from({ length: devices }, (_, d) => device(d)));
  for (const r of results) if (r.status === 'rejected') failure ??= { error: r.reason };
  if (failure !== undefined) throw failure.error;
  if (options.signal?.aborted === true) throw new CancelledError('the pairwise computation was cancelled; no result was produced', { cause: options.signal.reason });
}

/**
 * Staged blocks held back until the stretch of the file they fill is complete, then written in
 * file order: the runs of every held part that lie in the complete start of the file, sorted, so
 * that the file goes out front to back in long writes (a square file a row band at a time, one
 * contiguous range) instead of one short run per block row and per mirror row.
 *
 * Why: a block written as it comes writes runs as long as a block row (5,000 bytes for the
 * 625-wide blocks of N = 5,000) all over a stretch of the file, each touching two or three pages in
 * part, and pages a journal flush writes back are dirtied again by the next block beside them.
 * Writing a 200 MB square file that way cost 0.13-0.16 s of system time on the development machine
 * and left 0.14-0.16 s for the last fdatasync; the same bytes a row band at a time, through a
 * 1 MiB buffer, 0.03-0.05 s, and with the writeback of each complete stretch started as it is
 * written (startRelease.ts) the last fdatasync found almost nothing left (under 10 ms).
 *
 * The price is memory: in column-band order a square file holds the direct halves of the blocks
 * below the current column band (up to a quarter of the file) and the mirror halves of that band,
 * so the sink writes in file order only where that fits its staging budget (npyFileSink.ts), and
 * a writer short of staging memory writes the oldest held part as it is. A block is also journaled
 * only once it is in the file, so a part is never held for long (see `takeHeldBefore`): where
 * blocks come slowly (costly kernels, a cluster), the file goes out as they come and a run killed
 * midway loses no more than a second of blocks to the holding.
 */
import type { StagedPart, StagedRun } from './blockStaging.js';
import type { FloatArray } from './floatArray.js';
import type { NpyFileLayout } from './npyLayout.js';
import { gatheredWrites, type TileWrite } from './stagedTile.js';

interface HeldPart {
  readonly block: number;
  /** When it was held (performance.now()). */
  readonly since: number;
  readonly data: FloatArray;
  readonly bytes: Uint8Array;
  /** The part's runs, sorted by file position; those before `next` are written. */
  readonly runs: readonly StagedRun[];
  next: number;
}

interface HeldRun extends StagedRun {
  readonly bytes: Uint8Array;
}

/** What to write now, the buffers free once it is written, and the blocks then wholly in the file. */
export interface HeldWrites {
  readonly writes: Iterable<TileWrite>;
  readonly freed: readonly FloatArray[];
  readonly settled: readonly number[];
}

/**
 * The held parts of one file; see the file comment.
 *
 * @example
 * held.hold(block.index, stageBlockParts(layout, block, buf, takeBuffer));
 * const { writes, freed, settled } = held.takeBefore(completeElements);
 * writeBouncedSync(fd, writes, bounce); // then reuse `freed`, report `settled`
 */
export class FileOrderWrites {
  readonly #layout: NpyFileLayout;
  /** Held parts, oldest first. */
  readonly #held = new Set<HeldPart>();
  /** Parts of each block not yet taken. */
  readonly #partsLeft = new Map<number, number>();

  constructor(layout: NpyFileLayout) {
    this.#layout = layout;
  }

  /** Parts held. */
  get size(): number {
    return this.#held.size;
  }

  /** When the part held longest was held (performance.now()), or undefined when none is. */
  get oldestSince(): number | undefined {
    return this.#held.values().next().value?.since;
  }

  /** Holds the staged parts of `block` until their stretches of the file are complete. */
  hold(block: number, parts: readonly StagedPart[], now = performance.now()): void {
    this.#partsLeft.set(block, (this.#partsLeft.get(block) ?? 0) + parts.length);
    for (const { data, runs } of parts) {
      runs.sort((a, b) => a.at - b.at);
      this.#held.add({ block, since: now, data, bytes: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), runs, next: 0 });
    }
  }

  /**
   * Takes every held run that ends within the file's first `elements` data elements (the complete
   * start of the file), in file order. Since the complete start only grows and runs do not
   * overlap, a part's runs taken are always the next ones of its sorted runs.
   */
  takeBefore(elements: number): HeldWrites {
    const runs: HeldRun[] = [];
    const taken: HeldPart[] = [];
    for (const part of this.#held) {
      for (; part.next < part.runs.length; part.next++) {
        const run = part.runs[part.next]!;
        if (run.at + run.length > elements) break;
        runs.push({ at: run.at, from: run.from, length: run.length, bytes: part.bytes });
      }
      if (part.next === part.runs.length) taken.push(part);
    }
    return this.#taken(runs, taken);
  }

  /** Takes the rest of the oldest held part, wherever it goes in the file: a writer short of staging memory frees it this way. */
  takeOldest(): HeldWrites {
    const oldest = this.#held.values().next().value;
    if (oldest === undefined) return { writes: [], freed: [], settled: [] };
    const runs = oldest.runs.slice(oldest.next).map((run) => ({ ...run, bytes: oldest.bytes }));
    return this.#taken(runs, [oldest]);
  }

  /** Takes the rest of every part held since before `time` (performance.now()), in file order, wherever it goes in the file. */
  takeHeldBefore(time: number): HeldWrites {
    const runs: HeldRun[] = [];
    const taken: HeldPart[] = [];
    for (const part of this.#held) {
      if (part.since >= time) break;
      for (let k = part.next; k < part.runs.length; k++) runs.push({ ...part.runs[k]!, bytes: part.bytes });
      taken.push(part);
    }
    return this.#taken(runs, taken);
  }

  /** Takes every run still held (the end of a run, or its flush), in file order. */
  takeAll(): HeldWrites {
    return this.takeBefore(Infinity);
  }

  #taken(runs: HeldRun[], parts: readonly HeldPart[]): HeldWrites {
    const settled: number[] = [];
    for (const part of parts) {
      this.#held.delete(part);
      const left = this.#partsLeft.get(part.block)! - 1;
      if (left > 0) {
        this.#partsLeft.set(part.block, left);
      } else {
        this.#partsLeft.delete(part.block);
        settled.push(part.block);
      }
    }
    return { writes: gatheredWrites(this.#layout, runs, (run) => run.bytes), freed: parts.map((part) => part.data), settled };
  }
}

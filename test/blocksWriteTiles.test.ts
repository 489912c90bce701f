import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, open, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockScheduler, type BlockInfo } from '../src/blocks/blockScheduler.js';
import { stageBlock, stagedElements, type StagedRun } from '../src/blocks/blockStaging.js';
import { NpyFileSink } from '../src/blocks/npyFileSink.js';
import { npyFileLayout, type FileLayout, type NpyFileLayout } from '../src/blocks/npyLayout.js';
import { BlockJournal } from '../src/blocks/blockJournal.js';
import { CompleteStart, planWriteTiles } from '../src/blocks/writeTiles.js';
import { LogicError } from '../src/core/errors.js';
import { FILE_WRITERS, startWriter, withFileWriter, type FileWriterKind } from './helpers/fileWriters.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pxl-tiles-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The value of pair (i, j): distinct for every pair, exact in float32, symmetric in a symmetric layout. */
function pairValue(kind: FileLayout, i: number, j: number): number {
  if (kind === 'dense') return i * 64 + j + 0.5;
  return Math.max(i, j) * 64 + Math.min(i, j) + 0.5;
}

/** A block's buffer as a kernel leaves it: the pairs a layout keeps, 0 where it keeps nothing. */
function blockData(layout: NpyFileLayout, b: BlockInfo): Float64Array | Float32Array {
  const buf = layout.dtype === 'float32' ? new Float32Array(b.rowCount * b.colCount) : new Float64Array(b.rowCount * b.colCount);
  for (let r = 0; r < b.rowCount; r++) {
    for (let c = 0; c < b.colCount; c++) {
      const i = b.rowFirst + r;
      const j = b.colFirst + c;
      const kept = layout.kind === 'dense' || i > j || (layout.kind === 'square' && i === j);
      if (kept) buf[r * b.colCount + c] = layout.kind === 'square' && i === j ? 0.25 + i : pairValue(layout.kind, i, j);
    }
  }
  return buf;
}

/** The file's data as it must be: square, scipy's condensed order, or row-major dense. */
function expected(layout: NpyFileLayout): number[] {
  const n = layout.nRows;
  const out: number[] = [];
  if (layout.kind === 'condensed') {
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) out.push(pairValue('condensed', i, j));
  } else {
    for (let i = 0; i < layout.nRows; i++) for (let j = 0; j < layout.nCols; j++) out.push(layout.kind === 'square' && i === j ? 0.25 + i : pairValue(layout.kind, i, j));
  }
  return out;
}

function readData(path: string, layout: NpyFileLayout): number[] {
  const bytes = Uint8Array.from(readFileSync(path).subarray(layout.header.length));
  return [...(layout.dtype === 'float32' ? new Float32Array(bytes.buffer) : new Float64Array(bytes.buffer))];
}

/** A deterministic shuffle, so blocks come out of tile order (as from several machines). */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let s = seed;
  for (let k = out.length - 1; k > 0; k--) {
    s = (s * 1103515245 + 12345) % 2147483648;
    const m = s % (k + 1);
    [out[k], out[m]] = [out[m]!, out[k]!];
  }
  return out;
}

/** Marks the file elements `block` fills. */
function cover(layout: NpyFileLayout, block: BlockInfo, covered: Uint8Array): void {
  const staging = new Float64Array(stagedElements(layout, block));
  const runs: StagedRun[] = [];
  stageBlock(npyFileLayout(layout.kind, 'float64', layout.nRows, layout.nCols), block, blockData({ ...layout, dtype: 'float64' }, block), staging, runs);
  for (const run of runs) covered.fill(1, run.at, run.at + run.length);
}

/** Writes `order` through a writer with `tiles` and returns the file's data and the blocks reported written. */
async function writeThrough(kind: FileWriterKind, layout: NpyFileLayout, blocks: readonly BlockInfo[], scheduler: BlockScheduler, stagingBudget: number, order: (tiled: readonly BlockInfo[]) => readonly BlockInfo[], release = false): Promise<{ data: number[]; written: number[]; side: number }> {
  const tiles = planWriteTiles(layout, blocks, scheduler.blockSide, scheduler.blocks.length, stagingBudget);
  const path = join(dir, `t${Math.random().toString(36).slice(2)}.npy`);
  await writeFile(path, new Uint8Array(layout.bytes));
  const fd = openSync(path, 'r+');
  const written: number[] = [];
  const writer = startWriter(kind, {
    fd,
    layout,
    blockElements: scheduler.maxBlockElements,
    stagingElements: tiles.tileElements,
    stagingBytes: Math.max(stagingBudget, tiles.tileElements * layout.elementBytes),
    tiles,
    ...(release ? { releasePath: path } : {}),
    slots: 2,
    onWritten: (b) => written.push(b.index),
  });
  for (const b of order(tiles.blocks)) await writer.put(b, blockData(layout, b));
  await writer.stop();
  closeSync(fd);
  const data = readData(path, layout);
  await rm(path);
  return { data, written: written.sort((a, b) => a - b), side: tiles.side };
}

describe('write tiles', () => {
  it('orders the blocks tile by tile, the widest tiles two of which fit the budget', () => {
    const layout = npyFileLayout('square', 'float64', 100, 100);
    const scheduler = new BlockScheduler({ nRows: 100, nCols: 100, mode: 'lowerTriangle', maxOutputElements: 100 });
    const todo = scheduler.blocks;
    // A full 2 x 2 tile off the diagonal holds 4 blocks of 10 x 10, twice over in a square file: 800 elements.
    const two = planWriteTiles(layout, todo, scheduler.blockSide, todo.length, 2 * 800 * 8);
    expect(two.side).toBe(2);
    expect(two.tileElements).toBe(800);
    expect(planWriteTiles(layout, todo, scheduler.blockSide, todo.length, 2 * 800 * 8 - 1).side).toBe(1);
    expect(planWriteTiles(layout, todo, scheduler.blockSide, todo.length, 1 << 30).side).toBe(4);
    expect([...two.blocks].map((b) => b.index).sort((a, b) => a - b)).toEqual(todo.map((b) => b.index));
    // Each tile's blocks come one after another, and each tile is counted whole.
    const seen = new Set<number>();
    let last = -1;
    for (const b of two.blocks) {
      const t = two.tileOf[b.index]!;
      if (t !== last) {
        expect(seen.has(t)).toBe(false);
        seen.add(t);
        last = t;
      }
      expect(Math.floor(b.rowFirst / 20)).toBe(Math.floor(two.blocks.find((o) => two.tileOf[o.index] === t)!.rowFirst / 20));
    }
    expect([...two.tileBlocks].reduce((a, b) => a + b, 0)).toBe(todo.length);
    // A tile of one block keeps the schedule's order (largest blocks first).
    expect(planWriteTiles(layout, todo, scheduler.blockSide, todo.length, 0).blocks).toEqual(todo);
  });

  for (const kind of ['square', 'condensed', 'dense'] as const) {
    it(`fills a ${kind} file from its start, and says after each tile how much of the start is final`, () => {
      const n = 37;
      const m = kind === 'dense' ? 41 : n;
      const layout = npyFileLayout(kind, 'float32', n, m);
      const scheduler = new BlockScheduler({ nRows: n, nCols: m, mode: kind === 'dense' ? 'full' : 'lowerTriangle', maxOutputElements: 25 });
      for (const [what, todo] of [['fresh', scheduler.blocks], ['resumed', scheduler.blocks.filter((b) => b.index % 4 !== 1)]] as const) {
        for (const budget of [2 * 800, 1 << 24]) {
          const tiles = planWriteTiles(layout, todo, scheduler.blockSide, scheduler.blocks.length, budget);
          expect(tiles.side, `${what}, budget ${budget}`).toBeGreaterThan(1);
          const covered = new Uint8Array(layout.elements);
          for (const b of scheduler.blocks) if (!todo.includes(b)) cover(layout, b, covered);
          const count = tiles.tileBlocks.length;
          expect(tiles.completeBefore.length).toBe(count + 1);
          let k = 0;
          let early = false;
          for (let t = 0; t <= count; t++) {
            const final = (tiles.completeBefore[t]! - layout.header.length) / layout.elementBytes;
            expect(Number.isInteger(final) && final >= 0).toBe(true);
            if (t > 0) expect(tiles.completeBefore[t]).toBeGreaterThanOrEqual(tiles.completeBefore[t - 1]!);
            // Everything said to be final is written by the tiles before t (or was on disk before).
            expect(covered.subarray(0, final).every((c) => c === 1), `${what}, tile ${t} of ${count}`).toBe(true);
            if (t < count && final > 0) early = true;
            for (; k < tiles.blocks.length && tiles.tileOf[tiles.blocks[k]!.index] === t; k++) cover(layout, tiles.blocks[k]!, covered);
          }
          expect(tiles.completeBefore[count]).toBe(layout.bytes);
          // The order makes the start final long before the end: bands of the file complete one by one.
          expect(early).toBe(true);
        }
      }
    });
  }

  it('counts the complete start of the file only once every tile before it is in, in whatever order tiles finish', () => {
    const start = new CompleteStart(Int32Array.from([2, 1, 3]), Float64Array.from([0, 100, 250, 400]));
    expect(start.bytes).toBe(0);
    expect(start.written(1, 1)).toBe(0);
    expect(start.written(0, 1)).toBe(0);
    expect(start.written(0, 1)).toBe(250);
    expect(start.written(-1, 1)).toBe(250);
    expect(start.written(2, 2)).toBe(250);
    expect(start.written(2, 1)).toBe(400);
    expect(start.written(2, 1)).toBe(400);
    // A plan without the figures says nothing is complete.
    expect(new CompleteStart(Int32Array.from([1]), new Float64Array(0)).written(0, 1)).toBe(0);
  });

  it('counts only the blocks still to write, so a resumed run completes its tiles', () => {
    const layout = npyFileLayout('condensed', 'float32', 50, 50);
    const scheduler = new BlockScheduler({ nRows: 50, nCols: 50, mode: 'lowerTriangle', maxOutputElements: 100 });
    const todo = scheduler.blocks.filter((b) => b.index % 3 !== 0);
    const tiles = planWriteTiles(layout, todo, scheduler.blockSide, scheduler.blocks.length, 1 << 20);
    expect(tiles.side).toBeGreaterThan(1);
    for (const b of scheduler.blocks) expect(tiles.tileOf[b.index]).toBe(b.index % 3 === 0 ? -1 : tiles.tileOf[b.index]);
    for (const b of scheduler.blocks) if (b.index % 3 !== 0) expect(tiles.tileOf[b.index]).toBeGreaterThanOrEqual(0);
    expect([...tiles.tileBlocks].reduce((a, b) => a + b, 0)).toBe(todo.length);
    const largest = Math.max(...Array.from(tiles.tileBlocks.keys(), (t) => todo.filter((b) => tiles.tileOf[b.index] === t).reduce((n, b) => n + stagedElements(layout, b), 0)));
    expect(tiles.tileElements).toBe(largest);
  });

});

describe.each(FILE_WRITERS)('write tiles through the file writer (%s thread)', (writerKind) => {
  withFileWriter(writerKind);

  const shapes = [
    { name: 'odd N, ragged edge blocks', n: 23, m: 23, maxOutputElements: 25 },
    { name: 'blocks of one pair', n: 7, m: 7, maxOutputElements: 1 },
    { name: 'one block holding everything', n: 9, m: 9, maxOutputElements: 1000 },
  ];
  for (const kind of ['square', 'condensed', 'dense'] as const) {
    for (const dtype of ['float64', 'float32'] as const) {
      for (const s of shapes) {
        it(`writes a ${kind} ${dtype} file identical to block by block writes (${s.name}), in tile order and shuffled`, async () => {
          const m = kind === 'dense' ? s.m + 4 : s.n;
          const layout = npyFileLayout(kind, dtype, s.n, m);
          const scheduler = new BlockScheduler({ nRows: s.n, nCols: m, mode: kind === 'dense' ? 'full' : 'lowerTriangle', maxOutputElements: s.maxOutputElements });
          const all = scheduler.blocks.map((b) => b.index);
          const want = expected(layout);
          // Blocks of their own (no room for tiles), then wide tiles in order, then wide tiles from shuffled blocks
          // with staging for about one tile, so open tiles are written early, as far as they got.
          const alone = await writeThrough(writerKind, layout, scheduler.blocks, scheduler, 0, (t) => t);
          expect(alone.side).toBe(1);
          const tiled = await writeThrough(writerKind, layout, scheduler.blocks, scheduler, 1 << 24, (t) => t);
          expect(tiled.side).toBe(4);
          const tight = planWriteTiles(layout, scheduler.blocks, scheduler.blockSide, all.length, 1 << 24).tileElements * layout.elementBytes;
          const mixed = await writeThrough(writerKind, layout, scheduler.blocks, scheduler, tight, (t) => shuffled(t, 7));
          // Dropping the complete start of the file from the page cache after every tile changes no byte.
          const released = await writeThrough(writerKind, layout, scheduler.blocks, scheduler, tight, (t) => t, true);
          for (const run of [alone, tiled, mixed, released]) {
            expect(run.data).toEqual(want);
            expect(run.written).toEqual(all);
          }
        });
      }
    }
  }

  it('writes, and resumes after a dead run, a file whose complete start is dropped from the page cache as it goes, byte for byte', async () => {
    const layout = npyFileLayout('square', 'float64', 40, 40);
    const scheduler = new BlockScheduler({ nRows: 40, nCols: 40, mode: 'lowerTriangle', maxOutputElements: 25, nSplitsHint: 1 });
    const target = join(dir, `dropped-${writerKind}.npy`);
    const identity = { inputs: 'x', options: 'y' };
    const run = async (resume: boolean): Promise<number> => {
      // dropPagesFrom 0: every file is dropped, whatever the machine's memory.
      const sink = await NpyFileSink.open({ target, layout, identity, resume, queueBytes: 1 << 20, dropPagesFrom: 0, what: 'the test result', waysOut: [] });
      const blocks = await sink.begin(scheduler);
      for (const b of blocks) await sink.write(b, blockData(layout, b));
      await sink.commit();
      return blocks.length;
    };
    expect(await run(false)).toBe(scheduler.blocks.length);
    const whole = readFileSync(target);
    expect(readData(target, layout)).toEqual(expected(layout));
    // A dead run that wrote the first 10 blocks of the schedule: its file holds only those, its journal lists them.
    const pid = spawnSync(process.execPath, ['-e', '']).pid!;
    const partial = Uint8Array.from(whole);
    const kept = new Uint8Array(layout.elements);
    for (const b of scheduler.blocks) if (b.index < 10) cover(layout, b, kept);
    const data = new Float64Array(partial.buffer, layout.header.length, layout.elements);
    for (let k = 0; k < kept.length; k++) if (kept[k] === 0) data[k] = 0;
    const temp = join(dir, `.dropped-${writerKind}.npy.${pid}.00ff00.tmp`);
    await writeFile(temp, partial);
    const journal = await BlockJournal.create(join(dir, `.dropped-${writerKind}.npy.${pid}.00ff00.journal`), { ...identity, blockSide: scheduler.blockSide, blocks: scheduler.blocks.length, bytes: layout.bytes });
    for (let k = 0; k < 10; k++) journal.add(k);
    const handle = await open(temp, 'r');
    await journal.flush(handle);
    await handle.close();
    await journal.close();
    await rm(target);
    expect(await run(true)).toBe(scheduler.blocks.length - 10);
    expect(readFileSync(target).equals(whole)).toBe(true);
    expect((await readdir(dir)).filter((n) => n.includes(`dropped-${writerKind}`))).toEqual([`dropped-${writerKind}.npy`]);
    await rm(target);
  });

  it('fails a tiled sink with a LogicError naming the block and removes the partial files', async () => {
    const target = join(dir, `bad-${writerKind}.npy`);
    const layout = npyFileLayout('condensed', 'float32', 12, 12);
    const sink = await NpyFileSink.open({ target, layout, identity: { inputs: 'x', options: 'y' }, queueBytes: 1 << 20, what: 'the test result', waysOut: [] });
    const scheduler = new BlockScheduler({ nRows: 12, nCols: 12, mode: 'lowerTriangle', maxOutputElements: 9, nSplitsHint: 1 });
    const blocks = await sink.begin(scheduler);
    const diagonal = blocks.find((b) => b.rowFirst === b.colFirst && b.rowFirst > 0)!;
    for (const b of blocks) {
      const buf = blockData(layout, b);
      if (b === diagonal) buf.fill(1);
      await sink.write(b, buf).catch(() => undefined);
    }
    const failed = sink.commit();
    await expect(failed).rejects.toThrow(LogicError);
    await expect(failed).rejects.toThrow(new RegExp(`block ${diagonal.index} .*skipped entry .*leave the diagonal and the upper triangle at 0`));
    expect((await readdir(dir)).filter((n) => n.includes(`bad-${writerKind}.npy`))).toEqual([]);
  });
});

// Tiles written as far as they got: the file-order writer holds blocks by the stretch of the file
// they fill, not by tile, and writes one early only when short of staging memory (blocksFileOrder.test.ts).
describe.each(['main', 'thread'] as const)('unfinished tiles in the file writer (%s thread)', (writerKind) => {
  it('writes the blocks of an unfinished tile when drained, and reports only those', async () => {
    const layout = npyFileLayout('square', 'float64', 12, 12);
    const scheduler = new BlockScheduler({ nRows: 12, nCols: 12, mode: 'lowerTriangle', maxOutputElements: 9 });
    const tiles = planWriteTiles(layout, scheduler.blocks, scheduler.blockSide, scheduler.blocks.length, 1 << 20);
    expect(tiles.side).toBeGreaterThan(1);
    const path = join(dir, `partial-${writerKind}.npy`);
    await writeFile(path, new Uint8Array(layout.bytes));
    const fd = openSync(path, 'r+');
    const written: number[] = [];
    const writer = startWriter(writerKind, { fd, layout, blockElements: 9, stagingElements: tiles.tileElements, tiles, slots: 2, onWritten: (b) => written.push(b.index) });
    const first = tiles.blocks.filter((b) => tiles.tileOf[b.index] === 0);
    expect(first.length).toBeGreaterThan(1);
    const some = first.slice(0, -1);
    for (const b of some) await writer.put(b, blockData(layout, b));
    expect(written).toEqual([]);
    await writer.drain();
    expect(written.sort((a, b) => a - b)).toEqual(some.map((b) => b.index).sort((a, b) => a - b));
    await writer.stop();
    closeSync(fd);
    const data = readData(path, layout);
    const want = expected(layout);
    for (const b of some) {
      for (let r = 0; r < b.rowCount; r++) {
        for (let c = 0; c < b.colCount; c++) {
          const i = b.rowFirst + r;
          const j = b.colFirst + c;
          expect(data[i * 12 + j]).toBe(want[i * 12 + j]);
          expect(data[j * 12 + i]).toBe(want[j * 12 + i]);
        }
      }
    }
    const missing = first.at(-1)!;
    expect(data[missing.rowFirst * 12 + missing.colFirst]).toBe(0);
  });

  it('drops an unfinished tile unwritten and unreported when stopped with discard, as a cancelled run does', async () => {
    const layout = npyFileLayout('dense', 'float32', 12, 12);
    const scheduler = new BlockScheduler({ nRows: 12, nCols: 12, mode: 'full', maxOutputElements: 9 });
    // Room for two tiles of 2 x 2 blocks of 3 x 3 float32 (144 bytes each), not for 3 x 3 ones.
    const tiles = planWriteTiles(layout, scheduler.blocks, scheduler.blockSide, scheduler.blocks.length, 300);
    expect(tiles.side).toBe(2);
    const path = join(dir, `discard-${writerKind}.npy`);
    await writeFile(path, new Uint8Array(layout.bytes));
    const fd = openSync(path, 'r+');
    const written: number[] = [];
    const writer = startWriter(writerKind, { fd, layout, blockElements: 9, stagingElements: tiles.tileElements, tiles, slots: 2, onWritten: (b) => written.push(b.index) });
    const first = tiles.blocks.filter((b) => tiles.tileOf[b.index] === 0);
    const second = tiles.blocks.filter((b) => tiles.tileOf[b.index] === 1);
    expect([first.length, second.length]).toEqual([4, 4]);
    // The first tile complete (written), the second one block short (dropped).
    for (const b of [...first, ...second.slice(0, -1)]) await writer.put(b, blockData(layout, b));
    await writer.stop(true);
    closeSync(fd);
    expect(written.sort((a, b) => a - b)).toEqual(first.map((b) => b.index).sort((a, b) => a - b));
    expect(writer.failure).toBeUndefined();
    const data = readData(path, layout);
    const want = expected(layout);
    for (const b of first) expect(data[b.rowFirst * 12 + b.colFirst]).toBe(want[b.rowFirst * 12 + b.colFirst]);
    for (const b of second) expect(data[b.rowFirst * 12 + b.colFirst]).toBe(0);
  });
});

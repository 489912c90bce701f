import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockScheduler, type BlockInfo } from '../src/blocks/blockScheduler.js';
import { stageBlock, stageBlockParts, stagedElements, type StagedRun } from '../src/blocks/blockStaging.js';
import { FileOrderWrites } from '../src/blocks/fileOrderWrites.js';
import { npyFileLayout, type NpyFileLayout } from '../src/blocks/npyLayout.js';
import { writeBouncedSync } from '../src/blocks/positionalWrites.js';
import type { TileWrite } from '../src/blocks/stagedTile.js';
import { ThreadFileWriter } from '../src/blocks/threadFileWriter.js';
import { fileOrderTiles } from '../src/blocks/writeTiles.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pxl-order-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A block's results as a kernel leaves them: (i, j) -> i * 1000 + j + 1 below the diagonal, 0 on and above it for a condensed file. */
function blockData(layout: NpyFileLayout, b: BlockInfo): Float64Array {
  const data = new Float64Array(b.rowCount * b.colCount);
  for (let r = 0; r < b.rowCount; r++) {
    for (let c = 0; c < b.colCount; c++) {
      const i = b.rowFirst + r;
      const j = b.colFirst + c;
      const kept = layout.kind === 'dense' || i > j || (layout.kind === 'square' && i === j);
      data[r * b.colCount + c] = kept ? i * 1000 + j + 1 : 0;
    }
  }
  return data;
}

/** Every element of the file's data, by staging each block the tile writer's way: the reference. */
function reference(layout: NpyFileLayout, blocks: readonly BlockInfo[]): Float64Array {
  const file = new Float64Array((layout.bytes - layout.header.length) / 8);
  for (const b of blocks) {
    const staging = new Float64Array(stagedElements(layout, b));
    const runs: StagedRun[] = [];
    stageBlock(layout, b, blockData(layout, b), staging, runs);
    for (const run of runs) file.set(staging.subarray(run.from, run.from + run.length), run.at);
  }
  return file;
}

/** The file's data as the writes put it there. */
function apply(layout: NpyFileLayout, writes: Iterable<TileWrite>, file: Uint8Array): void {
  for (const { position, pieces } of writes) {
    let at = position - layout.header.length;
    for (const piece of pieces) {
      file.set(piece, at);
      at += piece.length;
    }
  }
}

describe('staging a block in parts', () => {
  it('puts every element where stageBlock puts it, an off-diagonal square block in two halves of one block each', () => {
    for (const kind of ['square', 'condensed', 'dense'] as const) {
      const layout = npyFileLayout(kind, 'float64', 11, kind === 'dense' ? 13 : 11);
      const scheduler = new BlockScheduler({ nRows: 11, nCols: layout.nCols, mode: kind === 'dense' ? 'full' : 'lowerTriangle', maxOutputElements: 16 });
      const file = new Uint8Array(layout.bytes - layout.header.length);
      for (const b of scheduler.blocks) {
        const parts = stageBlockParts(layout, b, blockData(layout, b), (n) => new Float64Array(n));
        expect(parts.length, `${kind} block ${b.index}`).toBe(kind === 'square' && b.rowFirst !== b.colFirst ? 2 : 1);
        for (const { data, runs } of parts) {
          expect(data.length).toBeLessThanOrEqual(b.rowCount * b.colCount);
          const bytes = new Uint8Array(data.buffer);
          for (const run of runs) file.set(bytes.subarray(run.from * 8, (run.from + run.length) * 8), run.at * 8);
        }
      }
      expect(new Float64Array(file.buffer), kind).toEqual(reference(layout, scheduler.blocks));
    }
  });
});

describe('blocks held in file order', () => {
  const layout = npyFileLayout('square', 'float64', 12, 12);
  const scheduler = new BlockScheduler({ nRows: 12, nCols: 12, mode: 'lowerTriangle', maxOutputElements: 9 });
  const tiles = fileOrderTiles(layout, scheduler.blocks, scheduler.blockSide, scheduler.blocks.length);
  const elementsBefore = (t: number) => (tiles.completeBefore[t]! - layout.header.length) / 8;

  it('writes only the complete start of the file, front to back, and reports a block once both its halves are written', () => {
    const held = new FileOrderWrites(layout);
    const file = new Uint8Array(layout.bytes - layout.header.length);
    const freed: number[] = [];
    const settled: number[] = [];
    let written = 0;
    tiles.blocks.forEach((b, t) => {
      held.hold(b.index, stageBlockParts(layout, b, blockData(layout, b), (n) => new Float64Array(n)));
      const taken = held.takeBefore(elementsBefore(t + 1));
      for (const w of taken.writes) {
        // Each write continues the one before it: the file goes out front to back.
        expect(w.position).toBe(layout.header.length + written);
        written += w.pieces.reduce((n, p) => n + p.length, 0);
        apply(layout, [w], file);
      }
      expect(written).toBe(elementsBefore(t + 1) * 8);
      freed.push(taken.freed.length);
      settled.push(...taken.settled);
    });
    expect(held.size).toBe(0);
    expect(new Float64Array(file.buffer)).toEqual(reference(layout, scheduler.blocks));
    expect([...settled].sort((a, b) => a - b)).toEqual(scheduler.blocks.map((b) => b.index));
    // Column band 0 completes file row band 0: its blocks' mirrors and the diagonal block are
    // written, their direct halves below wait for their own row bands.
    const band0 = tiles.blocks.filter((b) => b.colFirst === 0);
    expect(freed[band0.length - 1]).toBe(band0.length);
    expect(settled.slice(0, 1)).toEqual([band0[0]!.index]);
  });

  it('takes the oldest part as it is when short of memory, still reporting a block only once all of it is written', () => {
    const held = new FileOrderWrites(layout);
    const offDiagonal = tiles.blocks.find((b) => b.rowFirst !== b.colFirst)!;
    held.hold(offDiagonal.index, stageBlockParts(layout, offDiagonal, blockData(layout, offDiagonal), (n) => new Float64Array(n)));
    expect(held.size).toBe(2);
    const first = held.takeOldest();
    expect(first.settled).toEqual([]);
    expect(first.freed.length).toBe(1);
    expect([...first.writes].length).toBe(offDiagonal.rowCount);
    const second = held.takeOldest();
    expect(second.settled).toEqual([offDiagonal.index]);
    expect(held.takeOldest()).toMatchObject({ freed: [], settled: [] });
  });

  it('takes the parts held since before a time, oldest first, wherever they go in the file', () => {
    const held = new FileOrderWrites(layout);
    const [a, b] = tiles.blocks.filter((x) => x.rowFirst !== x.colFirst);
    held.hold(a!.index, stageBlockParts(layout, a!, blockData(layout, a!), (n) => new Float64Array(n)), 100);
    held.hold(b!.index, stageBlockParts(layout, b!, blockData(layout, b!), (n) => new Float64Array(n)), 200);
    expect(held.oldestSince).toBe(100);
    expect(held.takeHeldBefore(100)).toMatchObject({ freed: [], settled: [] });
    const old = held.takeHeldBefore(150);
    expect(old.settled).toEqual([a!.index]);
    expect(old.freed.length).toBe(2);
    expect(held.oldestSince).toBe(200);
    expect(held.takeAll().settled).toEqual([b!.index]);
    expect(held.oldestSince).toBeUndefined();
  });

  it('writes and reports a block held for a second even though its stretch of the file is not complete, for the journal of a slow run', async () => {
    const path = join(dir, 'order-slow.npy');
    await writeFile(path, new Uint8Array(layout.bytes));
    const fd = openSync(path, 'r+');
    const written: number[] = [];
    const writer = ThreadFileWriter.start({ fd, layout, blockElements: 9, stagingElements: 9, tiles, inFileOrder: {}, slots: 2, onWritten: (b) => written.push(b.index) });
    const lone = tiles.blocks.find((b) => b.rowFirst !== b.colFirst)!;
    await writer.put(lone, blockData(layout, lone));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(written).toEqual([]);
    // Written about a second after it was staged; a loaded machine may take longer to get there.
    for (let waited = 0; written.length === 0 && waited < 10_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(written).toEqual([lone.index]);
    await writer.stop();
    closeSync(fd);
    const data = new Float64Array(Uint8Array.from(readFileSync(path).subarray(layout.header.length)).buffer);
    const want = reference(layout, [lone]);
    expect(data).toEqual(want);
  });

  it('streams through the writer thread byte for byte, in order, shuffled and with staging for two blocks only', async () => {
    for (const [name, order, stagingBytes] of [
      ['in order', tiles.blocks, 1 << 20],
      ['shuffled', [...tiles.blocks].reverse(), 1 << 20],
      ['two blocks of staging', [...tiles.blocks].reverse(), 2 * 9 * 8],
    ] as const) {
      const path = join(dir, `order-${name.replaceAll(' ', '-')}.npy`);
      await writeFile(path, new Uint8Array(layout.bytes));
      const fd = openSync(path, 'r+');
      const written: number[] = [];
      const writer = ThreadFileWriter.start({ fd, layout, blockElements: 9, stagingElements: 9, stagingBytes, tiles, inFileOrder: { path }, slots: 2, onWritten: (b) => written.push(b.index) });
      for (const b of order) await writer.put(b, blockData(layout, b));
      await writer.stop();
      closeSync(fd);
      const data = new Float64Array(Uint8Array.from(readFileSync(path).subarray(layout.header.length)).buffer);
      expect(data, name).toEqual(reference(layout, scheduler.blocks));
      expect(written.sort((a, b) => a - b), name).toEqual(scheduler.blocks.map((b) => b.index));
    }
  });

  it('drops the blocks it holds unwritten and unreported when stopped with discard', async () => {
    const path = join(dir, 'order-discard.npy');
    await writeFile(path, new Uint8Array(layout.bytes));
    const fd = openSync(path, 'r+');
    const written: number[] = [];
    const writer = ThreadFileWriter.start({ fd, layout, blockElements: 9, stagingElements: 9, tiles, inFileOrder: {}, slots: 2, onWritten: (b) => written.push(b.index) });
    // Column band 0 but its last block: row band 0 is not complete, so nothing is written yet.
    const band0 = tiles.blocks.filter((b) => b.colFirst === 0);
    const started = performance.now();
    for (const b of band0.slice(0, -1)) await writer.put(b, blockData(layout, b));
    await writer.stop(true);
    const seconds = (performance.now() - started) / 1000;
    closeSync(fd);
    const data = new Float64Array(Uint8Array.from(readFileSync(path).subarray(layout.header.length)).buffer);
    // On a machine so loaded that the puts took a second, the writer wrote the blocks it had held
    // that long (no block waits longer); whatever it reported is in the file, and nothing else.
    expect(data).toEqual(reference(layout, tiles.blocks.filter((b) => written.includes(b.index))));
    if (seconds < 0.9) expect(written).toEqual([]);
  });
});

describe('writes through a bounce buffer', () => {
  it('writes every piece at its place, gathering continuing pieces across writes and passing long ones through', () => {
    const path = join(dir, 'bounce.bin');
    const fd = openSync(path, 'w+');
    const piece = (n: number, value: number) => new Uint8Array(n).fill(value);
    // 3 + 4 continuing each other (split over two writes), a gap, then a piece longer than the buffer, then 5 bytes.
    const writes: TileWrite[] = [
      { position: 0, pieces: [piece(3, 1)] },
      { position: 3, pieces: [piece(4, 2)] },
      { position: 10, pieces: [piece(20, 3), piece(5, 4)] },
    ];
    writeBouncedSync(fd, writes, new Uint8Array(8));
    closeSync(fd);
    expect([...readFileSync(path)]).toEqual([1, 1, 1, 2, 2, 2, 2, 0, 0, 0, ...Array(20).fill(3), ...Array(5).fill(4)]);
  });
});

import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockScheduler, type BlockInfo } from '../src/blocks/blockScheduler.js';
import { FileWriter } from '../src/blocks/fileWriter.js';
import { NpyFileSink } from '../src/blocks/npyFileSink.js';
import { npyFileLayout } from '../src/blocks/npyLayout.js';
import { LogicError } from '../src/core/errors.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pxl-writer-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const block = (index: number, rowFirst: number, rowCount: number, colFirst: number, colCount: number): BlockInfo => ({ index, rowFirst, rowCount, colFirst, colCount, diagonal: rowFirst === colFirst });

describe('the file writer thread', () => {
  it('writes blocks at their offsets, reports each once written, and lets the caller reuse its buffer at once', async () => {
    const layout = npyFileLayout('dense', 'float64', 4, 6);
    const path = join(dir, 'dense.bin');
    await writeFile(path, new Uint8Array(layout.bytes));
    const fd = openSync(path, 'r+');
    const written: number[] = [];
    const writer = FileWriter.start({ fd, layout, blockElements: 6, stagingElements: 6, slots: 1, onWritten: (b) => written.push(b.index) });
    const buf = new Float64Array(6);
    const blocks = [block(0, 0, 2, 0, 3), block(1, 0, 2, 3, 3), block(2, 2, 2, 0, 3), block(3, 2, 2, 3, 3)];
    for (const b of blocks) {
      // One slot: each put waits for the block before it, and overwriting buf afterwards is safe.
      for (let r = 0; r < 2; r++) for (let c = 0; c < 3; c++) buf[r * 3 + c] = (b.rowFirst + r) * 10 + b.colFirst + c;
      await writer.put(b, buf);
      buf.fill(-1);
    }
    await writer.stop();
    closeSync(fd);
    expect(written.sort()).toEqual([0, 1, 2, 3]);
    const data = new Float64Array(Uint8Array.from(readFileSync(path).subarray(layout.header.length)).buffer);
    expect([...data]).toEqual(Array.from({ length: 24 }, (_, k) => Math.floor(k / 6) * 10 + (k % 6)));
  });

  it('stages a block of shared memory where it lies, resolving only once the buffer may be overwritten', async () => {
    const layout = npyFileLayout('square', 'float32', 4, 4);
    const path = join(dir, 'shared.bin');
    await writeFile(path, new Uint8Array(layout.bytes));
    const fd = openSync(path, 'r+');
    const written: number[] = [];
    // blockElements 0: no slot could hold a block, so a copy through a slot would show up as a failed write.
    const writer = FileWriter.start({ fd, layout, blockElements: 0, stagingElements: 32, slots: 1, onWritten: (b) => written.push(b.index) });
    // The device's buffer: a view at an offset into shared memory, as a CPU core's result buffer is.
    const memory = new SharedArrayBuffer(64);
    const buf = new Float32Array(memory, 16, 4);
    const blocks = [block(0, 0, 2, 0, 2), block(1, 2, 2, 0, 2), block(2, 2, 2, 2, 2)];
    for (const b of blocks) {
      for (let r = 0; r < 2; r++) for (let c = 0; c < 2; c++) buf[r * 2 + c] = b.rowFirst + r >= b.colFirst + c ? (b.rowFirst + r) * 10 + b.colFirst + c : 0;
      await writer.put(b, buf);
      buf.fill(-1);
    }
    await writer.stop();
    closeSync(fd);
    expect(written.sort()).toEqual([0, 1, 2]);
    const data = new Float32Array(Uint8Array.from(readFileSync(path).subarray(layout.header.length)).buffer);
    expect([...data]).toEqual(Array.from({ length: 16 }, (_, k) => Math.max(Math.floor(k / 4), k % 4) * 10 + Math.min(Math.floor(k / 4), k % 4)));
  });

  it('fails with the write error when the descriptor cannot be written, and refuses later blocks', async () => {
    const layout = npyFileLayout('dense', 'float32', 2, 2);
    const path = join(dir, 'readonly.bin');
    await writeFile(path, new Uint8Array(layout.bytes));
    const fd = openSync(path, 'r');
    const writer = FileWriter.start({ fd, layout, blockElements: 4, stagingElements: 4, slots: 2, onWritten: () => expect.fail('nothing is written') });
    await writer.put(block(0, 0, 2, 0, 2), new Float32Array(4));
    await writer.drain();
    expect(writer.failure?.message).toMatch(/EBADF/);
    await expect(writer.put(block(1, 0, 2, 0, 2), new Float32Array(4))).rejects.toThrow(/EBADF/);
    await writer.stop();
    closeSync(fd);
  });

  it('fails a sink with a LogicError naming the block when a block breaks the layout, and removes the partial files', async () => {
    const target = join(dir, 'bad.npy');
    const layout = npyFileLayout('condensed', 'float64', 6, 6);
    const sink = await NpyFileSink.open({ target, layout, identity: { inputs: 'x', options: 'y' }, queueBytes: 1 << 20, what: 'the test result', waysOut: [] });
    const scheduler = new BlockScheduler({ nRows: 6, nCols: 6, mode: 'lowerTriangle', maxOutputElements: 9, nSplitsHint: 1 });
    const blocks = await sink.begin(scheduler);
    const diagonal = blocks.find((b) => b.rowFirst === b.colFirst)!;
    const buf = new Float64Array(diagonal.rowCount * diagonal.colCount).fill(1);
    await sink.write(diagonal, buf);
    const failed = sink.commit();
    await expect(failed).rejects.toThrow(LogicError);
    await expect(failed).rejects.toThrow(new RegExp(`block ${diagonal.index} .*skipped entry`));
    expect((await readdir(dir)).filter((n) => n.includes('bad.npy'))).toEqual([]);
  });
});

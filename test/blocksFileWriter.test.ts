import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir, uptime } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { BlockScheduler, type BlockInfo } from '../src/blocks/blockScheduler.js';
import { stageBlock, stagedElements } from '../src/blocks/blockStaging.js';
import { STAGE_STEP_MS, stageInSteps } from '../src/blocks/eventLoopSteps.js';
import { MainThreadFileWriter, type TileWriting } from '../src/blocks/mainThreadFileWriter.js';
import { fileWriterKind, MAIN_THREAD_WRITER_BYTES, NpyFileSink } from '../src/blocks/npyFileSink.js';
import type { TileWrite } from '../src/blocks/stagedTile.js';
import { ThreadFileWriter } from '../src/blocks/threadFileWriter.js';
import { npyFileLayout } from '../src/blocks/npyLayout.js';
import { LogicError, OptionError } from '../src/core/errors.js';
import { FILE_WRITERS, startWriter, withFileWriter } from './helpers/fileWriters.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pxl-writer-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const block = (index: number, rowFirst: number, rowCount: number, colFirst: number, colCount: number): BlockInfo => ({ index, rowFirst, rowCount, colFirst, colCount, diagonal: rowFirst === colFirst });

describe.each(FILE_WRITERS)('the file writer (%s thread)', (kind) => {
  withFileWriter(kind);

  it('writes blocks at their offsets, reports each once written, and lets the caller reuse its buffer at once', async () => {
    const layout = npyFileLayout('dense', 'float64', 4, 6);
    const path = join(dir, `dense-${kind}.bin`);
    await writeFile(path, new Uint8Array(layout.bytes));
    const fd = openSync(path, 'r+');
    const written: number[] = [];
    const writer = startWriter(kind, { fd, layout, blockElements: 6, stagingElements: 6, slots: 1, onWritten: (b) => written.push(b.index) });
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
    const path = join(dir, `shared-${kind}.bin`);
    await writeFile(path, new Uint8Array(layout.bytes));
    const fd = openSync(path, 'r+');
    const written: number[] = [];
    // blockElements 0: no slot could hold a block, so a copy through a slot would show up as a failed write.
    const writer = startWriter(kind, { fd, layout, blockElements: 0, stagingElements: 32, slots: 1, onWritten: (b) => written.push(b.index) });
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
    const path = join(dir, `readonly-${kind}.bin`);
    await writeFile(path, new Uint8Array(layout.bytes));
    const fd = openSync(path, 'r');
    const writer = startWriter(kind, { fd, layout, blockElements: 4, stagingElements: 4, slots: 2, onWritten: () => expect.fail('nothing is written') });
    await writer.put(block(0, 0, 2, 0, 2), new Float32Array(4));
    await writer.drain();
    expect(writer.failure?.message).toMatch(/EBADF/);
    await expect(writer.put(block(1, 0, 2, 0, 2), new Float32Array(4))).rejects.toThrow(/EBADF/);
    await writer.stop();
    closeSync(fd);
  });

  // /dev/full refuses every write with ENOSPC, as a disk that filled up during the run does.
  it.runIf(existsSync('/dev/full'))("keeps a failed write's system error code (ENOSPC), which the sink's advice goes by", async () => {
    const layout = npyFileLayout('square', 'float32', 2, 2);
    const fd = openSync('/dev/full', 'r+');
    const writer = startWriter(kind, { fd, layout, blockElements: 4, stagingElements: 4, slots: 2, onWritten: () => expect.fail('nothing is written') });
    await writer.put(block(0, 0, 2, 0, 2), new Float32Array(4));
    await writer.drain();
    expect(writer.failure?.message).toMatch(/ENOSPC/);
    expect((writer.failure as NodeJS.ErrnoException | undefined)?.code).toBe('ENOSPC');
    await writer.stop();
    closeSync(fd);
  });

  it('fails a sink with a LogicError naming the block when a block breaks the layout, and removes the partial files', async () => {
    const target = join(dir, `bad-${kind}.npy`);
    const layout = npyFileLayout('condensed', 'float64', 6, 6);
    const sink = await NpyFileSink.open({ target, layout, identity: { inputs: 'x', options: 'y' }, queueBytes: 1 << 20, what: 'the test result', waysOut: [] });
    const scheduler = new BlockScheduler({ nRows: 6, nCols: 6, mode: 'lowerTriangle', maxOutputElements: 9, nSplitsHint: 1 });
    const blocks = await sink.begin(scheduler);
    const diagonal = blocks.find((b) => b.rowFirst === b.colFirst)!;
    const buf = new Float64Array(diagonal.rowCount * diagonal.colCount).fill(1);
    // The main thread stages the block in the call and rejects at once; the writer thread's failure shows at the next call.
    await sink.write(diagonal, buf).catch(() => undefined);
    const failed = sink.commit();
    await expect(failed).rejects.toThrow(LogicError);
    await expect(failed).rejects.toThrow(new RegExp(`block ${diagonal.index} .*skipped entry`));
    expect((await readdir(dir)).filter((n) => n.includes(`bad-${kind}.npy`))).toEqual([]);
  });
});

describe('a resumed sink', () => {
  it('claims a dead run\'s files as written now, so that files from before a reboot do not pass for stale while it resumes them', async () => {
    const target = join(dir, 'claimed.npy');
    const layout = npyFileLayout('square', 'float64', 4, 4);
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    const before = new Date(Date.now() - uptime() * 1000 - 3_600_000);
    const stale = join(dir, `.claimed.npy.${dead}.00ff00`);
    await writeFile(`${stale}.tmp`, new Uint8Array(layout.bytes));
    await writeFile(`${stale}.journal`, `pxl-block-journal-1 ${JSON.stringify({ inputs: 'x', options: 'y', blockSide: 4, blocks: 1, bytes: layout.bytes })}\n`);
    for (const ext of ['tmp', 'journal']) await utimes(`${stale}.${ext}`, before, before);
    const sink = await NpyFileSink.open({ target, layout, identity: { inputs: 'x', options: 'y' }, resume: true, queueBytes: 1 << 20, what: 'the test result', waysOut: [] });
    expect(sink.resumed).toBeDefined();
    const booted = Date.now() - uptime() * 1000;
    for (const path of [sink.paths.temp, sink.paths.journal]) expect((await stat(path)).mtimeMs).toBeGreaterThan(booted);
    await sink.abort();
    expect((await readdir(dir)).filter((n) => n.includes('claimed.npy'))).toEqual([]);
  });
});

describe('the writer thread', () => {
  it('given up, drops the blocks still queued for it instead of staging and writing them', async () => {
    const count = 40;
    const layout = npyFileLayout('dense', 'float64', count, 64);
    const path = join(dir, 'given-up.bin');
    await writeFile(path, new Uint8Array(layout.bytes));
    const fd = openSync(path, 'r+');
    const written: number[] = [];
    const writer = ThreadFileWriter.start({ fd, layout, blockElements: 0, stagingElements: 64, slots: 1, onWritten: (b) => written.push(b.index) });
    // Every block is queued, and the run given up, in the turn that starts the thread: it reads the
    // first message only after its module has loaded, by which time every block is queued behind
    // the stop. Each block (one file row) is a tile of its own, so a writer that went through its
    // queue would write and report every one.
    const memory = new SharedArrayBuffer(count * 64 * 8);
    new Float64Array(memory).fill(7);
    const puts = Array.from({ length: count }, (_, k) => writer.put(block(k, k, 1, 0, 64), new Float64Array(memory, k * 64 * 8, 64)));
    await writer.stop(true);
    await Promise.all(puts);
    closeSync(fd);
    expect(written).toEqual([]);
    expect(readFileSync(path).subarray(layout.header.length).every((byte) => byte === 0)).toBe(true);
  });
});

describe('the main thread file writer', () => {
  const layout = npyFileLayout('dense', 'float64', 4, 4);
  const blocks = [block(0, 0, 2, 0, 2), block(1, 0, 2, 2, 2), block(2, 2, 2, 0, 2), block(3, 2, 2, 2, 2)];
  const options = (onWritten: (b: BlockInfo) => void) => ({ fd: -1, layout, blockElements: 4, stagingElements: 4, stagingBytes: 2 * 4 * 8, slots: 1, onWritten });

  /** A stand-in for the disk whose writes end only when the test says so. */
  function heldDisk() {
    const pending: Array<{ writes: readonly TileWrite[]; end: (error?: Error) => void }> = [];
    const write: TileWriting = (_fd, writes) => new Promise<void>((resolve, reject) => pending.push({ writes: [...{ [Symbol.iterator]: () => writes }], end: (error) => (error === undefined ? resolve() : reject(error)) }));
    return { pending, write };
  }

  it('holds a put back while its staging budget waits for writes, and reports blocks only once written', async () => {
    const disk = heldDisk();
    const written: number[] = [];
    const writer = new MainThreadFileWriter(options((b) => written.push(b.index)), disk.write);
    await writer.put(blocks[0]!, new Float64Array(4).fill(1));
    await writer.put(blocks[1]!, new Float64Array(4).fill(2));
    // Two tiles of one block each are being written: the budget of two is held.
    expect(disk.pending.length).toBe(2);
    let third = false;
    const put = writer.put(blocks[2]!, new Float64Array(4).fill(3)).then(() => (third = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(third).toBe(false);
    expect(written).toEqual([]);
    disk.pending[0]!.end();
    await put;
    expect(written).toEqual([0]);
    // The first tile's buffer staged the third block: it is written from there, at its own offsets.
    expect(disk.pending.length).toBe(3);
    const bytes = disk.pending[2]!.writes.flatMap((w) => w.pieces.map((p) => [w.position, ...new Float64Array(Uint8Array.from(p).buffer)]));
    expect(bytes).toEqual([[layout.header.length + 8 * 8, 3, 3], [layout.header.length + 12 * 8, 3, 3]]);
    disk.pending[1]!.end();
    disk.pending[2]!.end();
    await writer.stop();
    expect(written).toEqual([0, 1, 2]);
  });

  it('writes a block that took room in a tile in the same turn as a put that seals the tile for its buffer', async () => {
    const disk = heldDisk();
    const written: number[] = [];
    // A budget of one tile; tile 0 holds blocks 0 and 1 (the top two rows), tile 1 block 2.
    const tiles = { tileOf: Int32Array.from([0, 0, 1, -1]), tileBlocks: Int32Array.from([2, 1]) };
    const writer = new MainThreadFileWriter({ ...options((b) => written.push(b.index)), stagingElements: 8, stagingBytes: 8 * 8, tiles }, disk.write);
    await writer.put(blocks[0]!, new Float64Array(4).fill(1));
    // In one turn: block 1 finds room in tile 0, then block 2 finds no buffer free and seals tile 0, the oldest.
    const second = writer.put(blocks[1]!, new Float64Array(4).fill(2));
    const third = writer.put(blocks[2]!, new Float64Array(4).fill(3));
    await second;
    expect(disk.pending.length).toBe(1);
    const values = disk.pending[0]!.writes.flatMap((w) => w.pieces.flatMap((p) => [...new Float64Array(Uint8Array.from(p).buffer)]));
    expect(values).toEqual([1, 1, 2, 2, 1, 1, 2, 2]);
    disk.pending[0]!.end();
    await third;
    disk.pending[1]!.end();
    await writer.stop();
    expect(written).toEqual([0, 1, 2]);
  });

  it('lets every put waiting for a buffer look again when one comes free, so a put whose tile another opened joins it', async () => {
    const disk = heldDisk();
    const written: number[] = [];
    // A budget of one tile; tile 0 holds block 0, tile 1 blocks 1 and 2.
    const tiles = { tileOf: Int32Array.from([0, 1, 1, -1]), tileBlocks: Int32Array.from([1, 2]) };
    const writer = new MainThreadFileWriter({ ...options((b) => written.push(b.index)), stagingElements: 8, stagingBytes: 8 * 8, tiles }, disk.write);
    await writer.put(blocks[0]!, new Float64Array(4).fill(1));
    // Tile 0 is being written: blocks 1 and 2 both wait for its buffer.
    const settled = [false, false];
    const puts = [1, 2].map((k, i) => writer.put(blocks[k]!, new Float64Array(4).fill(k + 1)).then(() => (settled[i] = true)));
    disk.pending[0]!.end();
    // Block 1 opens tile 1 in the freed buffer; block 2 must then find it and join it, else tile 1
    // waits for block 2 and block 2 for a buffer, and the call never ends.
    for (let k = 0; k < 50 && !(settled[0] && settled[1]); k++) await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toEqual([true, true]);
    await Promise.all(puts);
    expect(disk.pending.length).toBe(2);
    const values = disk.pending[1]!.writes.flatMap((w) => w.pieces.flatMap((p) => [...new Float64Array(Uint8Array.from(p).buffer)]));
    expect(values.sort()).toEqual([2, 2, 2, 2, 3, 3, 3, 3]);
    disk.pending[1]!.end();
    await writer.stop();
    expect(written.sort()).toEqual([0, 1, 2]);
  });

  it('surfaces a write error such as ENOSPC: the tile is not reported, waiting and later puts reject with it', async () => {
    const disk = heldDisk();
    const written: number[] = [];
    const writer = new MainThreadFileWriter(options((b) => written.push(b.index)), disk.write);
    await writer.put(blocks[0]!, new Float64Array(4));
    await writer.put(blocks[1]!, new Float64Array(4));
    const waiting = writer.put(blocks[2]!, new Float64Array(4));
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    disk.pending[0]!.end(full);
    await expect(waiting).rejects.toBe(full);
    expect(writer.failure).toBe(full);
    disk.pending[1]!.end();
    await writer.drain();
    // The second tile was written before the failure was known to it; the first never.
    expect(written).toEqual([1]);
    await expect(writer.put(blocks[3]!, new Float64Array(4))).rejects.toBe(full);
    await writer.stop();
    expect(disk.pending.length).toBe(2);
  });

  it('waits for the writes in flight before a stop resolves, so the descriptor may be closed after it', async () => {
    const disk = heldDisk();
    const writer = new MainThreadFileWriter(options(() => undefined), disk.write);
    await writer.put(blocks[0]!, new Float64Array(4));
    let stopped = false;
    const stop = writer.stop(true).then(() => (stopped = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    disk.pending[0]!.end();
    await stop;
    await expect(writer.put(blocks[1]!, new Float64Array(4))).rejects.toThrow('MainThreadFileWriter.put after stop');
  });

  it('writes as far as it got a tile that a put woken during a drain opens, so the drain ends', async () => {
    const disk = heldDisk();
    const written: number[] = [];
    // Six blocks of 2 x 2 in tiles of two blocks, and room to stage two tiles.
    const wide = npyFileLayout('dense', 'float64', 4, 6);
    const six = [block(0, 0, 2, 0, 2), block(1, 0, 2, 2, 2), block(2, 0, 2, 4, 2), block(3, 2, 2, 0, 2), block(4, 2, 2, 2, 2), block(5, 2, 2, 4, 2)];
    const tiles = { tileOf: Int32Array.from([0, 0, 1, 1, 2, 2]), tileBlocks: Int32Array.from([2, 2, 2]) };
    const writer = new MainThreadFileWriter({ ...options((b) => written.push(b.index)), layout: wide, stagingElements: 8, stagingBytes: 2 * 8 * 8, tiles }, disk.write);
    for (const b of six.slice(0, 4)) await writer.put(b, new Float64Array(4).fill(b.index));
    const waiting = writer.put(six[4]!, new Float64Array(4).fill(4));
    let drained = false;
    const drain = writer.drain().then(() => (drained = true));
    // The first tile's buffer comes free while the drain still waits for the second tile: block 4 joins.
    disk.pending[0]!.end();
    await waiting;
    for (let k = 0; k < 20 && disk.pending.length < 3; k++) await new Promise((resolve) => setImmediate(resolve));
    // Its tile lacks block 5 but goes out as far as it got.
    expect(disk.pending.length).toBe(3);
    disk.pending[1]!.end();
    disk.pending[2]!.end();
    await drain;
    expect(drained).toBe(true);
    expect(written).toEqual([0, 1, 2, 3, 4]);
    await writer.stop();
  });

  it('stages a large block a step at a time, letting the event loop turn between steps', async () => {
    const n = 1024;
    const square = npyFileLayout('square', 'float64', 2 * n, 2 * n);
    const offDiagonal = block(0, n, n, 0, n);
    const staging = new Float64Array(stagedElements(square, offDiagonal));
    const buf = new Float64Array(n * n);
    for (let k = 0; k < buf.length; k++) buf[k] = k;
    // A clock that moves a whole step on every reading: every piece of the block ends a step.
    let clock = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => (clock += STAGE_STEP_MS + 1));
    let turns = 0;
    let done = false;
    const tick = (): void => {
      turns++;
      if (!done) setImmediate(tick);
    };
    setImmediate(tick);
    await stageInSteps(square, offDiagonal, buf, staging);
    done = true;
    vi.restoreAllMocks();
    // 2 * 1024 * 1024 elements in pieces of 8,192 (4 lines of 2 * 1,024): 256 pieces, a turn before each but the first.
    expect(turns).toBeGreaterThanOrEqual(255);
    const whole = new Float64Array(staging.length);
    stageBlock(square, offDiagonal, buf, whole, []);
    expect(staging.every((v, k) => v === whole[k])).toBe(true);
  });
});

describe('the choice of file writer', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it(`writes a result of at most ${MAIN_THREAD_WRITER_BYTES / 2 ** 20} MiB from the main thread and a larger one through the writer thread, unless PXL_FILE_WRITER says`, async () => {
    const before = process.env.PXL_FILE_WRITER;
    delete process.env.PXL_FILE_WRITER;
    try {
      expect(fileWriterKind(MAIN_THREAD_WRITER_BYTES, true)).toBe('main');
      expect(fileWriterKind(MAIN_THREAD_WRITER_BYTES + 1, true)).toBe('file-order');
      expect(fileWriterKind(MAIN_THREAD_WRITER_BYTES + 1, false)).toBe('thread');
      const started = vi.spyOn(ThreadFileWriter, 'start');
      // The side of the smallest square float64 file past the limit, and one below it.
      const side = Math.ceil(Math.sqrt(MAIN_THREAD_WRITER_BYTES / 8));
      for (const [n, threads] of [[side - 8, 0], [side, 1]] as const) {
        const target = join(dir, `choice-${n}.npy`);
        const sink = await NpyFileSink.open({ target, layout: npyFileLayout('square', 'float64', n, n), identity: { inputs: 'x', options: 'y' }, queueBytes: 1 << 24, what: 'the test result', waysOut: [] });
        await sink.begin(new BlockScheduler({ nRows: n, nCols: n, mode: 'lowerTriangle', maxOutputElements: 1 << 20 }));
        await sink.abort();
        expect(started, `n = ${n}`).toHaveBeenCalledTimes(threads);
      }
      // Past it, in file order where the blocks held fit the staging budget (half the queue), as tiles otherwise.
      for (const [queueBytes, ordered] of [[1 << 24, false], [1 << 28, true]] as const) {
        const target = join(dir, `choice-order-${queueBytes}.npy`);
        const sink = await NpyFileSink.open({ target, layout: npyFileLayout('square', 'float64', side, side), identity: { inputs: 'x', options: 'y' }, queueBytes, what: 'the test result', waysOut: [] });
        await sink.begin(new BlockScheduler({ nRows: side, nCols: side, mode: 'lowerTriangle', maxOutputElements: 1 << 20 }));
        await sink.abort();
        expect(started.mock.lastCall![0].inFileOrder !== undefined, `queue of ${queueBytes} bytes`).toBe(ordered);
      }
      process.env.PXL_FILE_WRITER = 'thread';
      expect(fileWriterKind(0, true)).toBe('thread');
      process.env.PXL_FILE_WRITER = 'file-order';
      expect(fileWriterKind(2 ** 40, false)).toBe('file-order');
      process.env.PXL_FILE_WRITER = 'main';
      expect(fileWriterKind(2 ** 40, true)).toBe('main');
    } finally {
      if (before === undefined) delete process.env.PXL_FILE_WRITER;
      else process.env.PXL_FILE_WRITER = before;
    }
    expect((await readdir(dir)).filter((n) => n.includes('choice'))).toEqual([]);
  });

  it('refuses a PXL_FILE_WRITER that names neither writer before it creates any file, and takes an empty one as unset', async () => {
    const before = process.env.PXL_FILE_WRITER;
    const target = join(dir, 'typo.npy');
    const open = () => NpyFileSink.open({ target, layout: npyFileLayout('square', 'float64', 4, 4), identity: { inputs: 'x', options: 'y' }, queueBytes: 1 << 20, what: 'the test result', waysOut: [] });
    try {
      process.env.PXL_FILE_WRITER = 'threads';
      expect(() => fileWriterKind(0, true)).toThrow(new OptionError("PXL_FILE_WRITER must be 'main', 'thread' or 'file-order' (or unset to choose by the result's size), got 'threads'"));
      await expect(open()).rejects.toBeInstanceOf(OptionError);
      expect((await readdir(dir)).filter((n) => n.includes('typo'))).toEqual([]);
      process.env.PXL_FILE_WRITER = '';
      expect(fileWriterKind(MAIN_THREAD_WRITER_BYTES + 1, false)).toBe('thread');
    } finally {
      if (before === undefined) delete process.env.PXL_FILE_WRITER;
      else process.env.PXL_FILE_WRITER = before;
    }
  });
});

import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir, uptime } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { stageBlock, type StagedRun } from '../src/blocks/blockStaging.js';
import { capacityProbe } from '../src/blocks/capacityCheck.js';
import { npyFileLayout, npyHeader } from '../src/blocks/npyLayout.js';
import { CancelledError, InputFormatError, OptionError, OutOfMemoryError } from '../src/core/errors.js';
import { encodeNpy } from '../src/pcf/npy.js';
import { cdist, l2Kernel, pdist } from '../src/pcf/operations.js';
import { pcfAt, pcfSetFrom, type PcfSet } from '../src/pcf/pcfSet.js';
import { randomPcfs } from '../src/pcf/random.js';
import { FILE_WRITERS, withFileWriter } from './helpers/fileWriters.js';

let dir: string;
const at = (name: string): string => join(dir, name);
/** Small blocks (side 8), so every layout gets off-diagonal, diagonal and ragged edge blocks. */
const SMALL_BLOCKS = { maxOutputElements: 64, nSplitsHint: 1, minBlockSide: 0 } as const;

const X = randomPcfs({ n: 37, points: 6, seed: 3 });
/** X with a shape [3, 4] for cdist, and a Y of 11: a result of shape [3, 4, 11]. */
const X34 = pcfSetFrom(Array.from({ length: 12 }, (_, i) => pcfAt(X, i)), 'float64', { shape: [3, 4] });
const Y = randomPcfs({ n: 11, points: 4, seed: 5 });

/** A pid that no process has: a child that has already exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid!;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pxl-sink-'));
});
afterEach(async () => {
  vi.restoreAllMocks();
  for (const name of await readdir(dir)) await rm(at(name));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.each(FILE_WRITERS)('results streamed to an .npy file (file writer on the %s thread)', (writer) => {
  withFileWriter(writer);

  const cases = [
    { name: 'pdist square', file: (dtype: 'float32' | 'float64', out?: string) => (out === undefined ? pdist(X, { dtype }).then((d) => d.toSquare()) : pdist(X, { dtype, out, ...SMALL_BLOCKS })) },
    { name: 'pdist condensed', file: (dtype: 'float32' | 'float64', out?: string) => (out === undefined ? pdist(X, { dtype }).then((d) => ({ data: d.condensed, shape: [d.condensed.length] })) : pdist(X, { dtype, out, layout: 'condensed', ...SMALL_BLOCKS })) },
    { name: 'l2Kernel square', file: (dtype: 'float32' | 'float64', out?: string) => (out === undefined ? l2Kernel(X, { dtype }).then((k) => k.toSquare()) : l2Kernel(X, { dtype, out, ...SMALL_BLOCKS })) },
    { name: 'cdist shaped', file: (dtype: 'float32' | 'float64', out?: string) => (out === undefined ? cdist(X34, Y, { dtype, p: 2 }) : cdist(X34, Y, { dtype, p: 2, out, ...SMALL_BLOCKS })) },
  ];
  for (const c of cases) {
    for (const dtype of ['float64', 'float32'] as const) {
      it(`writes ${c.name} ${dtype} byte for byte as encodeNpy of the in-memory result, block by block`, async () => {
        const memory = (await c.file(dtype)) as { data: Float64Array | Float32Array; shape: readonly number[] };
        const summary = (await c.file(dtype, at('r.npy'))) as { path: string; shape: readonly number[]; dtype: string; bytes: number; blocks: number };
        const bytes = new Uint8Array(await readFile(at('r.npy')));
        expect(Buffer.from(bytes).equals(Buffer.from(encodeNpy(memory.data, memory.shape)))).toBe(true);
        expect(summary).toMatchObject({ path: at('r.npy'), shape: memory.shape, dtype, bytes: bytes.length, blocksResumed: 0 });
        expect(summary.blocks).toBeGreaterThanOrEqual(4);
        expect(await readdir(dir)).toEqual(['r.npy']);
      });
    }
  }

  // Reference: the bytes np.save (NumPy 1.26) writes before the data of np.zeros((3, 3)) and np.zeros(3, '<i8').
  it.each<[string, number[], string]>([
    ['float64', [3, 3], "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 3), }"],
    ['<i8', [3], "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }"],
  ])('writes the .npy header NumPy writes for %s of shape %j', (type, shape, dict) => {
    const header = npyHeader(type, shape);
    expect(Buffer.from(header).toString('latin1')).toBe(`\x93NUMPY\x01\x00v\x00${dict}${' '.repeat(128 - 10 - dict.length - 1)}\n`);
    expect(header.length).toBe(128);
  });

  it('refuses a header type that is neither a float dtype nor a NumPy type string', () => {
    expect(() => npyHeader("<f8', 'x': '", [1])).toThrow(new OptionError("npyHeader: type must be 'float64', 'float32' or a NumPy type string such as '<i8', got '<f8', 'x': ''"));
  });

  it('writes the header encodeNpy writes, and stages a block and its mirror as runs of the square file', () => {
    for (const shape of [[0], [5], [3, 4, 11], [100000, 100000]]) {
      const size = shape.reduce((a, b) => a * b, 1);
      if (size < 1000) expect(npyHeader('float32', shape)).toEqual(encodeNpy(new Float32Array(size), shape).subarray(0, npyHeader('float32', shape).length));
    }
    const layout = npyFileLayout('square', 'float64', 2048, 2048);
    const block = { index: 0, rowFirst: 1024, rowCount: 1024, colFirst: 0, colCount: 1024, diagonal: false };
    const buf = new Float64Array(1024 * 1024).map((_, k) => k);
    const staging = new Float64Array(2 * 1024 * 1024);
    const runs: StagedRun[] = [];
    stageBlock(layout, block, buf, staging, runs);
    // 1024 block rows at (1024 + r) * 2048, then 1024 mirrored columns at c * 2048 + 1024.
    expect(runs.length).toBe(2048);
    expect(runs[1024]).toEqual({ at: 1024, from: 1024 * 1024, length: 1024 });
    expect(staging[1024 * 1024 + 1]).toBe(buf[1024]);
  });

  it('returns a summary and writes a valid file for results with no pairs', async () => {
    const one = await pdist([[[0, 1]]], { out: at('one.npy') });
    expect(one).toMatchObject({ shape: [1, 1], blocks: 0 });
    expect(Buffer.from(await readFile(at('one.npy'))).equals(Buffer.from(encodeNpy(new Float64Array(1), [1, 1])))).toBe(true);
    await cdist([], Y, { out: at('empty.npy') });
    expect(Buffer.from(await readFile(at('empty.npy'))).equals(Buffer.from(encodeNpy(new Float64Array(0), [0, 11])))).toBe(true);
  });
});

describe('refusals before computing', () => {
  it('refuses a file larger than the free disk space, naming the sizes and the ways out, and creates nothing', async () => {
    vi.spyOn(capacityProbe, 'freeDiskBytes').mockResolvedValue(5000);
    const error = await pdist(X, { out: at('d.npy') }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputFormatError);
    expect((error as Error).message).toBe(
      `${at('d.npy')}: the square float64 result of pdist of 37 PCFs needs 11.08 kB (11080 bytes) on disk, but only 5.00 kB (5000 bytes) is free in ${dir}; nothing was computed. ` +
        "To fit: --layout condensed (layout: 'condensed'): 5.46 kB (5456 bytes); --dtype float32 (dtype: 'float32'): 5.60 kB (5604 bytes); both: 2.79 kB (2792 bytes); -o/out naming a file on a disk with more free space",
    );
    expect(await readdir(dir)).toEqual([]);
  });

  it('refuses an in-memory result larger than the available memory before allocating it', async () => {
    vi.spyOn(capacityProbe, 'availableMemoryBytes').mockReturnValue(8 * 2 ** 30);
    // 50,000 PCFs: 1,249,975,000 distances, 10 GB in float64; none of it is allocated.
    const n = 50_000;
    const big: PcfSet = { count: n, shape: [n], dtype: 'float64', offsets: Uint32Array.from({ length: n + 1 }, (_, i) => i), times: new Float64Array(n), values: new Float64Array(n) };
    const error = await pdist(big).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutOfMemoryError);
    expect((error as Error).message).toMatch(/^the float64 result of pdist of 50000 PCFs needs 10\.54 GB \(10536670912 bytes\) of memory, but only 8\.59 GB \(8589934592 bytes\) is available; nothing was computed\. To fit: -o FILE\.npy \(out: 'FILE\.npy'\) to stream the result to disk instead; --dtype float32 \(dtype: 'float32'\): 5\.00 GB \(4999900000 bytes\); --memory/);
  });

  it('refuses bad out, resume, memory and layout options', async () => {
    await expect(pdist(X, { out: 'd.json' })).rejects.toThrow(new OptionError("out must name a .npy file (NumPy's format, written block by block), got 'd.json'"));
    await expect(pdist(X, { out: join(dir, '.npy') })).rejects.toThrow(new OptionError(`out '${join(dir, '.npy')}' has no name before its .npy extension; name the file, e.g. '${join(dir, 'distances.npy')}'`));
    await expect(pdist(X, { resume: true })).rejects.toThrow(new OptionError('resume continues a partial result file, so it needs out (the .npy file to finish)'));
    await expect(pdist(X, { memory: 1000 })).rejects.toThrow(new OptionError('memory must be an integer in [1048576, 9007199254740991], got 1000'));
    await expect(l2Kernel(X, { out: at('k.npy'), layout: 'condensed' as 'square' })).rejects.toThrow(/l2Kernel writes only layout 'square'/);
    await expect(pdist(X, { layout: 'condensed' })).rejects.toThrow(/layout says how out is written/);
  });

  it('refuses, before computing, an out in a missing directory or naming a directory', async () => {
    const missing = join(dir, 'no-such-dir', 'd.npy');
    await expect(pdist(X, { out: missing })).rejects.toThrow(new InputFormatError(`cannot write to directory ${join(dir, 'no-such-dir')}: ENOENT: no such file or directory, statfs '${join(dir, 'no-such-dir')}'; create it first (mkdir -p ${join(dir, 'no-such-dir')}), or name a file in a directory that exists`, missing));
    await mkdir(at('dir.npy'));
    let blocksDone = 0;
    const error = await pdist(X, { out: at('dir.npy'), ...SMALL_BLOCKS, onProgress: (p) => (blocksDone = p.blocksDone) }).catch((e: unknown) => e);
    await rm(at('dir.npy'), { recursive: true });
    expect(error).toEqual(new InputFormatError('is a directory; name a file to write', at('dir.npy')));
    expect(blocksDone).toBe(0);
    expect(await readdir(dir)).toEqual([]);
    // A file where the directory should be: the partial file cannot be made, and that is the error.
    await writeFile(at('file'), 'not a directory');
    const inFile = await pdist(X, { out: join(at('file'), 'd.npy') }).catch((e: unknown) => e);
    expect(inFile).toBeInstanceOf(InputFormatError);
    expect((inFile as Error).message).toMatch(/: cannot create the partial file .*: ENOTDIR: not a directory/);
  });
});

describe.each(FILE_WRITERS)('stop and resume (file writer on the %s thread)', (writer) => {
  withFileWriter(writer);

  it('leaves an existing output untouched and no partial file when cancelled mid-run', async () => {
    await writeFile(at('d.npy'), 'old');
    const controller = new AbortController();
    const run = pdist(X, { out: at('d.npy'), ...SMALL_BLOCKS, signal: controller.signal, onProgress: (p) => p.blocksDone === 3 && controller.abort() });
    await expect(run).rejects.toBeInstanceOf(CancelledError);
    expect(await readdir(dir)).toEqual(['d.npy']);
    expect(await readFile(at('d.npy'), 'utf8')).toBe('old');
  });

  it("removes a dead process's partial file and journal for the same target, and keeps other files", async () => {
    const pid = deadPid();
    await writeFile(at(`.d.npy.${pid}.0a1b2c.tmp`), 'partial');
    await writeFile(at(`.d.npy.${pid}.0a1b2c.journal`), 'journal');
    await writeFile(at(`.other.npy.${pid}.0a1b2c.tmp`), 'another target');
    await writeFile(at(`.d.npy.${process.ppid}.0a1b2c.tmp`), 'a live process');
    await pdist(X, { out: at('d.npy') });
    expect((await readdir(dir)).sort()).toEqual([`.d.npy.${process.ppid}.0a1b2c.tmp`, `.other.npy.${pid}.0a1b2c.tmp`, 'd.npy']);
  });

  it('takes files named with a pid that is not theirs now as stale: its own pid but not held (pid 1 in a container, run after run), a live pid but written before this boot', async () => {
    const { header, blocks, file } = await journalOf({ p: 1 });
    await writeFile(at(`.d.npy.${process.pid}.00ff00.tmp`), file);
    await writeFile(at(`.d.npy.${process.pid}.00ff00.journal`), `${header}\n0\n1\n2\n`);
    const resumed = await pdist(X, { out: at('d.npy'), resume: true, ...SMALL_BLOCKS });
    expect(resumed).toMatchObject({ blocks, blocksResumed: 3 });
    expect((await readFile(at('d.npy'))).equals(file)).toBe(true);
    // The parent process is alive; a power loss and a reboot gave its pid to it after the files were written.
    const before = new Date(Date.now() - uptime() * 1000 - 3_600_000);
    for (const ext of ['tmp', 'journal']) {
      await writeFile(at(`.d.npy.${process.ppid}.00ff00.${ext}`), ext === 'tmp' ? file : `${header}\n0\n`);
      await utimes(at(`.d.npy.${process.ppid}.00ff00.${ext}`), before, before);
    }
    expect(await pdist(X, { out: at('d.npy'), resume: true, ...SMALL_BLOCKS })).toMatchObject({ blocks, blocksResumed: 1 });
    expect(await readdir(dir)).toEqual(['d.npy']);
  });

  /** The journal header of a real run, read while it runs, and the finished file. */
  async function journalOf(options: { p: number }): Promise<{ header: string; blocks: number; file: Buffer }> {
    let header = '';
    const result = await pdist(X, {
      ...options, out: at('full.npy'), ...SMALL_BLOCKS,
      onProgress: () => {
        const name = readdirSync(dir).find((f) => f.endsWith('.journal'));
        if (header === '' && name !== undefined) header = readFileSync(join(dir, name), 'utf8').split('\n')[0]!;
      },
    });
    const file = await readFile(at('full.npy'));
    await rm(at('full.npy'));
    return { header, blocks: result.blocks, file };
  }

  it('resumes a dead run from its journal, computing only the blocks it lacks, byte-identical', async () => {
    const { header, blocks, file } = await journalOf({ p: 1 });
    const pid = deadPid();
    await writeFile(at(`.d.npy.${pid}.00ff00.tmp`), file);
    // Blocks 0-9 finished, then a torn write of block 10's line.
    await writeFile(at(`.d.npy.${pid}.00ff00.journal`), `${header}\n${Array.from({ length: 10 }, (_, i) => i).join('\n')}\n1`);
    let computed = 0;
    const result = await pdist(X, { out: at('d.npy'), resume: true, ...SMALL_BLOCKS, onProgress: () => computed++ });
    expect(result).toMatchObject({ blocks, blocksResumed: 10 });
    expect(computed).toBe(blocks - 10);
    expect((await readFile(at('d.npy'))).equals(file)).toBe(true);
    expect(await readdir(dir)).toEqual(['d.npy']);
  });

  it('refuses a journal written for other options, and keeps its files', async () => {
    const { header, file } = await journalOf({ p: 2 });
    const pid = deadPid();
    await writeFile(at(`.d.npy.${pid}.00ff00.tmp`), file);
    await writeFile(at(`.d.npy.${pid}.00ff00.journal`), `${header}\n0\n`);
    const error = await pdist(X, { out: at('d.npy'), resume: true, ...SMALL_BLOCKS }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputFormatError);
    expect((error as Error).message).toBe(
      `${at('d.npy')}: cannot resume from the journal ${at(`.d.npy.${pid}.00ff00.journal`)}: it was written for pdist lp p=2, float64, square layout of shape [37, 37], ` +
        'but this run is pdist l1, float64, square layout of shape [37, 37]. Run without resuming to start over (that replaces the partial file), or resume with the same inputs and options',
    );
    expect((await readdir(dir)).sort()).toEqual([`.d.npy.${pid}.00ff00.journal`, `.d.npy.${pid}.00ff00.tmp`]);
  });

  /**
   * Runs `call` into a file, keeping its journal's first line; leaves that file as a dead run's
   * partial file for target `name` with the line's `now` words replaced by `earlier`; and returns
   * the error of resuming it.
   */
  async function resumeEarlierArithmetic(call: (options: { out: string; resume?: boolean; onProgress?: () => void }) => Promise<unknown>, name: string, now: string, earlier: string): Promise<{ header: string; error: unknown }> {
    let header = '';
    const file = await call({
      out: at('full.npy'),
      onProgress: () => {
        const journal = readdirSync(dir).find((f) => f.endsWith('.journal'));
        if (header === '' && journal !== undefined) header = readFileSync(join(dir, journal), 'utf8').split('\n')[0]!;
      },
    }).then(() => readFile(at('full.npy')));
    await rm(at('full.npy'));
    const pid = deadPid();
    await writeFile(at(`.${name}.${pid}.00ff00.tmp`), file);
    await writeFile(at(`.${name}.${pid}.00ff00.journal`), `${header.replace(now, earlier)}\n0\n`);
    const error = await call({ out: at(name), resume: true }).catch((e: unknown) => e);
    return { header, error };
  }

  it('refuses a float32 journal of the earlier arithmetic (float64, rounded once), whose blocks would differ from this run\'s', async () => {
    const { header, error } = await resumeEarlierArithmetic((o) => pdist(X, { dtype: 'float32', ...SMALL_BLOCKS, ...o }), 'd.npy', 'float32 computed in float32', 'float32');
    expect(header).toContain('pdist l1, float32 computed in float32, square layout');
    expect(error).toBeInstanceOf(InputFormatError);
    expect((error as Error).message).toContain('it was written for pdist l1, float32, square layout of shape [37, 37], but this run is pdist l1, float32 computed in float32, square layout');
  });

  it('refuses a float32 inner-product journal begun before underflowing last products were computed in float64', async () => {
    const now = 'float32 computed in float32, underflowing last products in float64';
    const { header, error } = await resumeEarlierArithmetic((o) => l2Kernel(X, { dtype: 'float32', ...SMALL_BLOCKS, ...o }), 'k.npy', now, 'float32 computed in float32');
    expect(header).toContain(`l2inner, ${now}, square layout`);
    expect(error).toBeInstanceOf(InputFormatError);
    expect((error as Error).message).toContain(`l2inner, float32 computed in float32, square layout of shape [37, 37], but this run is l2Kernel l2inner, ${now}, square layout`);
  });
});

import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InputFormatError } from '../src/core/errors.js';
import { pdist } from '../src/pcf/operations.js';
import { randomPcfs } from '../src/pcf/random.js';
import { FILE_WRITERS, withFileWriter } from './helpers/fileWriters.js';

/**
 * A disk that fills up during a run, after the free space was checked (another process took it):
 * the file writers' positional writes fail with ENOSPC. node:fs is wrapped so they do on demand,
 * for the main thread's writer; the writer thread has a module registry of its own and is not
 * reached by the wrapper, so only the main thread's writer is tested here.
 */
const disk = vi.hoisted(() => ({ full: false }));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const refuse = (): never => {
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
  };
  const writeSync = ((...args: Parameters<typeof fs.writeSync>) => (disk.full ? refuse() : fs.writeSync(...args))) as typeof fs.writeSync;
  const writevSync = ((...args: Parameters<typeof fs.writevSync>) => (disk.full ? refuse() : fs.writevSync(...args))) as typeof fs.writevSync;
  return { ...fs, default: { ...fs, writeSync, writevSync }, writeSync, writevSync };
});

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pxl-full-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a disk that fills up during a run', () => {
  withFileWriter(FILE_WRITERS[0]);

  it('fails with an InputFormatError that says the disk filled up and what to change, and leaves no partial file', async () => {
    disk.full = true;
    try {
      const error = await pdist(randomPcfs({ n: 40, points: 5, seed: 1 }), { out: join(dir, 'd.npy') }).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(InputFormatError);
      const message = (error as Error).message;
      expect(message).toContain('ENOSPC: no space left on device');
      expect(message).toContain(`the disk filled up during the run, after its free space was checked: free space in ${dir} and run again, or make the result fit: --layout condensed (layout: 'condensed')`);
      expect(message).toContain('-o/out naming a file on a disk with more free space');
    } finally {
      disk.full = false;
    }
    expect(await readdir(dir)).toEqual([]);
  });
});

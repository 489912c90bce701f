import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { writePositional } from '../src/blocks/positionalWrites.js';
import type { TileWrite } from '../src/blocks/stagedTile.js';
import { SLOW_WRITE_MS, steppedWrites, WRITE_STEP_MS } from '../src/blocks/steppedWrites.js';

vi.mock('../src/blocks/positionalWrites.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../src/blocks/positionalWrites.js')>();
  return { ...original, writePositional: vi.fn(original.writePositional) };
});

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pxl-stepped-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A file of `bytes` zeros, open for writing. */
function zeroFile(name: string, bytes: number): { path: string; fd: number } {
  const path = join(dir, name);
  writeFileSync(path, new Uint8Array(bytes));
  return { path, fd: openSync(path, 'r+') };
}

/** Writes of one byte value each: `[position, value, length]`, the last one in two pieces. */
function writesOf(spec: ReadonlyArray<readonly [number, number, number]>): TileWrite[] {
  return spec.map(([position, value, length], k) => {
    const bytes = new Uint8Array(length).fill(value);
    return { position, pieces: k === spec.length - 1 ? [bytes.subarray(0, 1), bytes.subarray(1)] : [bytes] };
  });
}

/** A clock that moves `step` milliseconds each time it is read. */
function steppingClock(step: number): () => number {
  let now = 0;
  return () => (now += step);
}

const expected = [0, 1, 1, 0, 2, 2, 2, 0, 3, 3, 3, 3];
const spec = [
  [1, 1, 2],
  [4, 2, 3],
  [8, 3, 4],
] as const;

describe('steppedWrites', () => {
  afterEach(() => {
    vi.mocked(writePositional).mockClear();
  });

  it('writes each write whole at its position, the quick ones synchronously until the step is spent', async () => {
    const { path, fd } = zeroFile('quick.bin', 12);
    try {
      const done = steppedWrites(steppingClock(0))(fd, writesOf(spec).values());
      // Nothing awaited yet: a writing whose step is not spent wrote everything at once.
      expect([...readFileSync(path)]).toEqual(expected);
      await done;
      expect(writePositional).not.toHaveBeenCalled();
    } finally {
      closeSync(fd);
    }
  });

  it('gives the event loop a turn once a step is spent, and still writes everything', async () => {
    const { path, fd } = zeroFile('steps.bin', 12);
    try {
      let turned = false;
      setImmediate(() => (turned = true));
      const done = steppedWrites(steppingClock(WRITE_STEP_MS))(fd, writesOf(spec).values());
      expect([...readFileSync(path)].slice(8)).toEqual([0, 0, 0, 0]);
      await done;
      expect(turned).toBe(true);
      expect([...readFileSync(path)]).toEqual(expected);
    } finally {
      closeSync(fd);
    }
  });

  it('hands the writes after a slow one to the pool, in this call and every later one', async () => {
    const { path, fd } = zeroFile('slow.bin', 12);
    try {
      const write = steppedWrites(steppingClock(SLOW_WRITE_MS));
      const first = write(fd, writesOf(spec.slice(0, 2)).values());
      // The first write was made at once and took SLOW_WRITE_MS: the second went to the pool.
      expect([...readFileSync(path)].slice(0, 3)).toEqual([0, 1, 1]);
      expect(writePositional).toHaveBeenCalledTimes(1);
      await first;
      await write(fd, writesOf(spec.slice(2)).values());
      expect(writePositional).toHaveBeenCalledTimes(2);
      expect([...readFileSync(path)]).toEqual(expected);
    } finally {
      closeSync(fd);
    }
  });

  it('rejects with the write error and starts no later write', async () => {
    const { path, fd } = zeroFile('closed.bin', 12);
    closeSync(fd);
    const readOnly = openSync(path, 'r');
    try {
      const writes = writesOf(spec).values();
      await expect(steppedWrites(steppingClock(0))(readOnly, writes)).rejects.toMatchObject({ code: 'EBADF' });
      expect(writes.next().value).toMatchObject({ position: 4 });
    } finally {
      closeSync(readOnly);
    }
  });
});

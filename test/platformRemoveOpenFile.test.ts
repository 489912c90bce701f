import { closeSync, existsSync, fstatSync, openSync } from 'node:fs';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// Every spawn passes through, recorded; `missing` makes it fail the way a missing program does.
const spawned: { command: string; stdio: unknown[] }[] = [];
const helper = { missing: false };
vi.mock('node:child_process', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:child_process')>();
  const spawn = ((command: string, args: readonly string[], options: { stdio: unknown[] }) => {
    spawned.push({ command, stdio: options.stdio });
    return real.spawn(helper.missing ? 'pxl-no-such-program' : command, args, options as never);
  }) as unknown as typeof real.spawn;
  return { ...real, default: { ...real, spawn }, spawn };
});

const { removeOpenFiles } = await import('../src/platform/removeOpenFile.js');
const { holdPartialFiles, partialFileOpenAs, removeHeldPartialFilesSync } = await import('../src/blocks/partialFiles.js');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pxl-remove-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function openFile(name: string) {
  const path = join(dir, name);
  await writeFile(path, new Uint8Array(1 << 16).fill(1));
  const handle = await open(path, 'r+');
  return { path, fd: handle.fd, close: () => handle.close() };
}

describe('removing open partial files', () => {
  it('removes the names and closes the descriptors while a helper process holds them, so their blocks are freed in its exit', async () => {
    const files = [await openFile('a.tmp'), await openFile('a.journal')];
    spawned.length = 0;
    await removeOpenFiles(files);
    for (const { path, fd } of files) {
      expect(existsSync(path)).toBe(false);
      expect(() => fstatSync(fd)).toThrow(/EBADF/);
    }
    expect(spawned).toHaveLength(1);
    expect(spawned[0]).toMatchObject({ command: 'cat' });
    expect(spawned[0]!.stdio.slice(3)).toEqual(files.map((f) => f.fd));
  });

  it('removes and closes them all the same when no helper starts', async () => {
    const files = [await openFile('b.tmp')];
    helper.missing = true;
    try {
      await removeOpenFiles(files);
    } finally {
      helper.missing = false;
    }
    expect(existsSync(files[0]!.path)).toBe(false);
    expect(() => fstatSync(files[0]!.fd)).toThrow(/EBADF/);
  });

  it('on a forced exit, removes the held partial files at once and hands the open ones to a helper', async () => {
    const path = join(dir, 'c.tmp');
    const closed = join(dir, 'c.journal');
    await writeFile(path, 'x');
    await writeFile(closed, 'y');
    const fd = openSync(path, 'r+');
    holdPartialFiles(path, closed);
    partialFileOpenAs(path, fd);
    spawned.length = 0;
    try {
      expect(removeHeldPartialFilesSync().sort()).toEqual([closed, path].sort());
      expect(existsSync(path) || existsSync(closed)).toBe(false);
      expect(spawned).toHaveLength(1);
      expect(spawned[0]!.stdio.slice(3)).toEqual([fd]);
    } finally {
      closeSync(fd);
    }
  });
});

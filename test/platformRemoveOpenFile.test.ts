import { existsSync, fstatSync } from 'node:fs';
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

const { removeOpenFile } = await import('../src/platform/removeOpenFile.js');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pxl-remove-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('removing an open partial file', () => {
  it('removes the name and closes the descriptor, handing a large file to a helper process that holds it across the close', async () => {
    const path = join(dir, 'large.tmp');
    await writeFile(path, new Uint8Array(1 << 20).fill(1));
    const handle = await open(path, 'r+');
    const fd = handle.fd;
    spawned.length = 0;
    await removeOpenFile(handle, path, 1);
    expect(existsSync(path)).toBe(false);
    expect(() => fstatSync(fd)).toThrow(/EBADF/);
    expect(spawned).toHaveLength(1);
    expect(spawned[0]).toMatchObject({ command: 'cat' });
    expect(spawned[0]!.stdio[3]).toBe(fd);
  });

  it('removes and closes all the same when no helper starts, and starts none for a small file', async () => {
    for (const [name, helperFrom, missing, helpers] of [
      ['missing-helper', 1, true, 1],
      ['small', 256 * 2 ** 20, false, 0],
    ] as const) {
      const path = join(dir, `${name}.tmp`);
      await writeFile(path, new Uint8Array(1 << 16).fill(1));
      const handle = await open(path, 'r+');
      const fd = handle.fd;
      spawned.length = 0;
      helper.missing = missing;
      try {
        await removeOpenFile(handle, path, helperFrom);
      } finally {
        helper.missing = false;
      }
      expect(existsSync(path), name).toBe(false);
      expect(() => fstatSync(fd), name).toThrow(/EBADF/);
      expect(spawned, name).toHaveLength(helpers);
    }
  });
});

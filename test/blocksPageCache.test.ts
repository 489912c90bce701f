import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pageCacheRelease } from '../src/blocks/pageCache.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pxl-cache-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('page cache release', () => {
  it('loads WASI without printing its experimental warning, and passes other warnings on', async () => {
    // Each test file runs in a process of its own, so node:wasi is loaded here for the first time.
    const emitted: string[] = [];
    const spy = vi.spyOn(process, 'emitWarning').mockImplementation((warning: string | Error) => {
      emitted.push(typeof warning === 'string' ? warning : warning.message);
    });
    try {
      const path = join(dir, 'quiet.bin');
      writeFileSync(path, new Uint8Array(4096));
      expect(await pageCacheRelease(path)).toBeTypeOf('function');
      process.emitWarning('something else');
    } finally {
      spy.mockRestore();
    }
    expect(emitted).toEqual(['something else']);
  });

  it('advises on a file by path, on whole or partial ranges, and says false once the file is gone', async () => {
    const path = join(dir, 'data.bin');
    writeFileSync(path, new Uint8Array(1 << 20).fill(7));
    const release = await pageCacheRelease(path);
    expect(release).toBeTypeOf('function');
    expect(release!(0, 1 << 20)).toBe(true);
    expect(release!(4096, 100_000)).toBe(true);
    // Each call opens the file anew: the advice follows the path, not a descriptor kept open.
    await rm(path);
    expect(release!(0, 1 << 20)).toBe(false);
  });

  it('gives no release for a directory that does not exist', async () => {
    expect(await pageCacheRelease(join(dir, 'missing', 'x.npy'))).toBeUndefined();
  });
});

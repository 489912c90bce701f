import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * A program that allocates and frees device memory over and over keeps its memory flat: memFree
 * reaches the cores, which drop every binding that views the freed buffer and collect their heaps
 * once enough has been freed, so no core keeps freed SharedArrayBuffers alive. Runs in its own
 * process (fixtures/memFreeChild.ts): 300 rounds of 1 MiB (300 MiB freed in all); before cores
 * dropped them, RSS grew by about that much.
 */

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));

describe('memFree', () => {
  it('keeps RSS flat over 300 rounds of alloc 1 MiB / launch on both cores / free', async () => {
    const { stdout } = await run(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'test/fixtures/memFreeChild.ts'], { cwd: root, timeout: 90_000 });
    const { freedMB, rssGrowthMB } = JSON.parse(stdout.trim().split('\n').at(-1)!) as { freedMB: number; rssGrowthMB: number };
    expect(freedMB).toBe(300);
    expect(rssGrowthMB).toBeLessThan(64);
  }, 90_000);
});

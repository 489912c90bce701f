import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeNpy } from '../src/pcf/npy.js';
import { readPcfNpz } from '../src/pcf/npz.js';
import { writePcfNpz } from '../src/pcf/npzWriter.js';
import type { PcfSet } from '../src/pcf/pcfSet.js';
import { cdist } from '../src/pcf/operations.js';
import { randomPcfs } from '../src/pcf/random.js';

/**
 * Many against few (`pxl cdist X Y` with X of a million PCFs and Y of a hundred) at a size that
 * runs in seconds: a result far taller than wide goes through the same blocks and file sink as a
 * square one. The million-row figures are in bench/RESULTS.md.
 */

let dir: string;

async function writeNpzFile(path: string, set: PcfSet): Promise<void> {
  const handle = await open(path, 'w');
  try {
    await writePcfNpz(set, async (chunk) => {
      await handle.write(chunk);
    });
  } finally {
    await handle.close();
  }
}
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pxl-tall-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('cdist of many PCFs against few, to an .npy file', () => {
  it('writes the same bytes as encodeNpy of the in-memory cdist, from .npz inputs, in many row blocks', async () => {
    const xPath = join(dir, 'x.npz');
    const yPath = join(dir, 'y.npz');
    await writeNpzFile(xPath, randomPcfs({ n: 30_000, points: 12, seed: 11 }));
    await writeNpzFile(yPath, randomPcfs({ n: 7, points: 9, seed: 12 }));
    const xs = await readPcfNpz(xPath);
    const ys = await readPcfNpz(yPath);
    for (const dtype of ['float64', 'float32'] as const) {
      const out = join(dir, `d-${dtype}.npy`);
      const pairsPerBlock: number[] = [];
      let done = 0;
      const summary = await cdist(xs, ys, {
        dtype,
        p: 2,
        out,
        onProgress: (p) => {
          pairsPerBlock.push(p.pairsDone - done);
          done = p.pairsDone;
        },
      });
      const memory = await cdist(xs, ys, { dtype, p: 2 });
      const bytes = await readFile(out);
      expect(memory.shape).toEqual([30_000, 7]);
      expect(bytes.equals(Buffer.from(encodeNpy(memory.data, memory.shape)))).toBe(true);
      expect(summary).toMatchObject({ shape: [30_000, 7], dtype, bytes: bytes.length });
      // Many blocks, each a band of rows across all of Y.
      expect(pairsPerBlock.length).toBe(summary.blocks);
      expect(summary.blocks).toBeGreaterThan(4);
      expect(pairsPerBlock.every((pairs) => pairs % 7 === 0)).toBe(true);
      expect(done).toBe(30_000 * 7);
    }
  }, 120_000);
});

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { pcfSetFrom } from '../src/pcf/pcfSet.js';
import { pdist } from '../src/pcf/operations.js';
import { destroyDefaultContext } from '../src/pcf/defaultContext.js';
import type { DistanceMatrix } from '../src/blocks/distanceMatrix.js';
import type { PcfSet } from '../src/pcf/pcfSet.js';

/**
 * bench/pdist.mjs measures masspcf in the same run where `python3 -c "import masspcf"` succeeds,
 * and prints no masspcf figure elsewhere. A stand-in masspcf package (test/fixtures/masspcfStub)
 * on PYTHONPATH runs the harness here, where masspcf itself is not installed; a broken one
 * (test/fixtures/masspcfBroken) stands for a machine where the import fails.
 */

interface MasspcfLib {
  probeMasspcf(options?: { env?: NodeJS.ProcessEnv }): { available: true; version: string | null } | { available: false; reason: string };
  masspcfPdist(set: PcfSet, p: number, repeats: number, options?: { env?: NodeJS.ProcessEnv }): Promise<{ seconds: number[]; dense: Float64Array }>;
  compareWithMasspcf(d: DistanceMatrix, dense: Float64Array): { maxRelDiff: number; identical: boolean };
}

const LIB = new URL('../bench/lib/masspcf.mjs', import.meta.url).href;
const lib = async (): Promise<MasspcfLib> => (await import(LIB)) as MasspcfLib;
const withPath = (fixture: string): NodeJS.ProcessEnv => ({ ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONPATH: fileURLToPath(new URL(`./fixtures/${fixture}`, import.meta.url)) });
const numpy = spawnSync('python3', ['-c', 'import numpy'], { timeout: 60_000 }).status === 0;

// A = 10 on [0,2), 5 on [2,3); B = 5 on [0,6); C = 4 on [0,3): L1 |A-B| = 25, |A-C| = 13, |B-C| = 18.
const PCFS: Array<Array<[number, number]>> = [[[0, 10], [2, 5], [3, 0]], [[0, 5], [6, 0]], [[0, 4], [3, 0]]];
const SQUARE = [0, 25, 13, 25, 0, 18, 13, 18, 0];

describe.runIf(numpy)("bench/pdist's masspcf baseline", () => {
  afterAll(() => destroyDefaultContext());

  it('is not measured where python3 -c "import masspcf" fails, and says why', async () => {
    const probe = (await lib()).probeMasspcf({ env: withPath('masspcfBroken') });
    expect(probe).toEqual({ available: false, reason: expect.stringContaining('python3 -c "import masspcf" failed: ImportError: masspcf\'s compiled module is missing') });
  });

  it("times masspcf's pdist call by call and compares its result with pxl's", async () => {
    const { probeMasspcf, masspcfPdist, compareWithMasspcf } = await lib();
    const env = withPath('masspcfStub');
    expect(probeMasspcf({ env })).toEqual({ available: true, version: 'stub' });
    const set = pcfSetFrom(PCFS);
    const m = await masspcfPdist(set, 1, 2, { env });
    expect(m.seconds).toHaveLength(2);
    for (const s of m.seconds) expect(s).toBeGreaterThanOrEqual(0);
    expect(Array.from(m.dense)).toEqual(SQUARE);
    const d = await pdist(set);
    expect(compareWithMasspcf(d, m.dense)).toEqual({ maxRelDiff: 0, identical: true });
    const off = Float64Array.from(m.dense);
    off[1] = 25 * (1 + 1e-12);
    const compared = compareWithMasspcf(d, off);
    expect(compared.identical).toBe(false);
    expect(compared.maxRelDiff).toBeCloseTo((25 * 1e-12) / 25, 15);
    await expect(masspcfPdist(set, 1, 1, { env: withPath('masspcfBroken') })).rejects.toThrow(/^masspcf's pdist failed: ImportError: /);
  }, 60_000);
});

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * bench/scale.mjs's command line: --help, and a mistyped flag, answer at once instead of starting
 * the default runs (minutes, and files of gigabytes).
 */

const SCALE = fileURLToPath(new URL('../bench/scale.mjs', import.meta.url));

function scale(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [SCALE, ...args], { encoding: 'utf8', timeout: 20_000, killSignal: 'SIGKILL' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('bench/scale.mjs', () => {
  it('prints its usage, naming the JSON fields, for --help', () => {
    const r = scale(['--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: node bench\/scale\.mjs \[--sizes N,N,\.\.\.\] \[--reps R\] \[--dir DIR\] \[--big\]\n/);
    for (const field of ['pairsPerSecond', 'wallOverMemory', 'peakRssMiB', 'maxEventLoopStallMs', 'diskMBps', 'growthPerDoubling']) expect(r.stdout).toContain(field);
  });

  it('refuses an unknown flag, a flag without its value and malformed sizes with exit code 2', () => {
    for (const [args, message] of [
      [['--size', '2000'], "bench/scale: unknown or incomplete argument '--size'"],
      [['--reps'], "bench/scale: unknown or incomplete argument '--reps'"],
      [['--sizes', '2k'], "bench/scale: --sizes takes whole numbers of at least 2, separated by commas, got '2k'"],
      [['--reps', 'abc'], "bench/scale: --reps takes a whole number of at least 1, got 'abc'"],
      [['--reps', '0'], "bench/scale: --reps takes a whole number of at least 1, got '0'"],
      [['--reps', '1.5'], "bench/scale: --reps takes a whole number of at least 1, got '1.5'"],
    ] as const) {
      const r = scale([...args]);
      expect(r.status).toBe(2);
      expect(r.stderr.split('\n')[0]).toBe(message);
      expect(r.stdout).toBe('');
    }
  });

  it('gives growth per doubling of N whatever the step between sizes', async () => {
    type Growth = (fromN: number, fromCost: number, toN: number, toCost: number) => number;
    const { growthPerDoubling } = (await import(new URL('../bench/lib/stats.mjs', import.meta.url).href)) as { growthPerDoubling: Growth };
    // Quadratic work: 4 per doubling, whether the sizes are one, two or half a doubling apart.
    expect(growthPerDoubling(2000, 1, 4000, 4)).toBeCloseTo(4, 12);
    expect(growthPerDoubling(5000, 1, 20000, 16)).toBeCloseTo(4, 12);
    expect(growthPerDoubling(4000, 2, 5657, 4)).toBeCloseTo(4, 3);
    expect(growthPerDoubling(4000, 4, 2000, 1)).toBeCloseTo(4, 12);
    expect(growthPerDoubling(3000, 1, 3000, 2)).toBeNaN();
  });
});

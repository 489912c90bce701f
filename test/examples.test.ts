import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;

/**
 * The examples run as a user runs them: a separate Node process importing the built package
 * (`npm test` builds it first), kernel modules loaded by the cores from TypeScript and JavaScript.
 */
describe('examples', () => {
  it('runs the README\'s first example (a TypeScript kernel module) and prints 4', async () => {
    const { stdout } = await run(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'examples/readme/main.ts'], { cwd: root, timeout: 60_000 });
    expect(stdout.trim()).toBe('4');
  });

  it('keeps the README\'s first example identical to examples/readme', async () => {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    for (const file of ['kernels.ts', 'main.ts']) {
      const source = await readFile(new URL(`../examples/readme/${file}`, import.meta.url), 'utf8');
      const body = source.split('\n').filter((line) => !line.startsWith('// The ')).join('\n').trim();
      expect(readme).toContain(body);
    }
  });

  it('runs the kernel tour: a Monte Carlo task kernel and a batch triad with the expected result', async () => {
    const { stdout } = await run(process.execPath, ['examples/demo.mjs'], { cwd: root, timeout: 60_000 });
    expect(stdout).toMatch(/pi ≈ 3\.14\d*/);
    expect(stdout).toContain('y[0] = 35 (expected 35)');
  });

  it('runs the command-buffer and command-queue example with the expected result, and shows the queue stopping at a failure', async () => {
    const { stdout } = await run(process.execPath, ['examples/mux/queue.mjs'], { cwd: root, timeout: 60_000 });
    expect(stdout).toContain('command buffers: y[0] = 11, y[65535] = 11 (expected 11)');
    expect(stdout).toContain('command queue: y[0] = 11, y[65535] = 11 (expected 11)');
    expect(stdout).toContain('command 0 (callback) of the command buffer failed: host step failed');
    expect(stdout).toContain('y[0] = 11 (the fill after the failure did not run)');
  });

  it('runs the work-group example: a chained two-level sum and a DMA-tiled smoothing, both matching plain loops', async () => {
    const { stdout } = await run(process.execPath, ['examples/work-groups/main.mjs'], { cwd: root, timeout: 60_000 });
    const sum = /sum of 1048576 values: ([\d.]+) \(plain loop: ([\d.]+)\)/.exec(stdout);
    expect(sum).not.toBeNull();
    // Float64 sums of 2^20 values in [0, 1] in different orders: equal to 1e-6 relative.
    expect(Math.abs(Number(sum![1]) - Number(sum![2]))).toBeLessThan(1e-6 * Number(sum![2]));
    expect(stdout).toContain('smoothed 96 × 64: largest difference from a plain loop 0');
  });
});

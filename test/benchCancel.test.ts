import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/** bench/cancel.mjs's command line: --help and a mistyped flag answer at once instead of starting a minute of runs. */

const CANCEL = fileURLToPath(new URL('../bench/cancel.mjs', import.meta.url));

function cancel(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CANCEL, ...args], { encoding: 'utf8', timeout: 20_000, killSignal: 'SIGKILL' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('bench/cancel.mjs', () => {
  it('prints its usage for --help', () => {
    const r = cancel(['--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: node bench\/cancel\.mjs \[--n N\] \[--after MS,MS,\.\.\.\] \[--reps R\] \[--dir DIR\]\n/);
    expect(r.stdout).toContain('withinGoal');
  });

  it('refuses an unknown flag, a flag without its value and malformed numbers with exit code 2', () => {
    for (const [args, message] of [
      [['--size', '2000'], "bench/cancel: unknown or incomplete argument '--size'"],
      [['--reps'], "bench/cancel: unknown or incomplete argument '--reps'"],
      [['--n', '20k'], "bench/cancel: --n takes whole numbers of at least 2, got '20k'"],
      [['--after', '2000,x'], "bench/cancel: --after takes whole numbers of at least 1, got 'x'"],
      [['--reps', '0'], "bench/cancel: --reps takes whole numbers of at least 1, got '0'"],
    ] as const) {
      const r = cancel([...args]);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr.split('\n')[0]).toBe(message);
      expect(r.stdout).toBe('');
    }
  });
});

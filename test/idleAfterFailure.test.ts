import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * After any failure the process is idle again: no core respawned in a loop, no thread spinning.
 * Each case runs in its own process (fixtures/idleAfterFailureChild.ts), which provokes the
 * failure, waits until it has settled (the replacement cores are up, or the core was given up, so
 * their start-up never falls into the window), and measures its CPU time (process.cpuUsage(), every
 * thread) over one second that starts one second later. CPU time of our own process does not grow
 * when other processes load the machine, unlike wall-clock timing. The budget is 5% of the window.
 */

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const IDLE_BUDGET_MICROS = 50_000;

async function afterFailure(scenario: string): Promise<{ error: string; ran: number[]; cpuMicros: number }> {
  const { stdout } = await run(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'test/fixtures/idleAfterFailureChild.ts', scenario], { cwd: root, timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as { error: string; ran: number[]; cpuMicros: number };
}

describe('the process after a failure', () => {
  it('is idle within a second after a kernel module that calls process.exit at its top level failed to load', async () => {
    const { error, ran, cpuMicros } = await afterFailure('module exits at import');
    expect(error).toMatch(/^ModuleLoadError: cannot load kernel module .*exitAtImport\.mjs: an MU core died while importing it: its worker thread exited with code 4$/);
    expect(ran).toEqual([1, 1]);
    expect(cpuMicros).toBeLessThan(IDLE_BUDGET_MICROS);
  }, 60_000);

  it('is idle within a second after a kernel killed its core', async () => {
    const { error, ran, cpuMicros } = await afterFailure('kernel kills its core');
    expect(error).toMatch(/^CoreDiedError: MU core 0 died while running kernel 'exit_core' .*exited with code 3; the core was replaced/);
    expect(ran).toEqual([1, 1]);
    expect(cpuMicros).toBeLessThan(IDLE_BUDGET_MICROS);
  }, 60_000);

  it('is idle within a second after a core whose replacements kept dying was given up', async () => {
    const { error, cpuMicros } = await afterFailure('core given up');
    expect(error).toBe(
      'CoreDiedError: MU core 0 died: its replacement died while starting 3 times in a row (last: its worker thread exited with code 5); the core was given up; create a new Context',
    );
    expect(cpuMicros).toBeLessThan(IDLE_BUDGET_MICROS);
  }, 60_000);
});

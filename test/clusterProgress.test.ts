/**
 * The progress bar of a cluster run: blocks done and the live workers in the bar, statuses before
 * the bar appears left to the caller, and each worker's share in the summary.
 */
import { describe, expect, it, vi } from 'vitest';
import { formatShares, ProgressBar } from '../src/cli/progress.js';
import type { CliIo } from '../src/cli/terminal.js';

function terminal(): { io: CliIo; text: () => string } {
  let written = '';
  const stderr = { isTTY: true, columns: 200, write: (s: string) => ((written += s), true), on: () => stderr, removeListener: () => stderr, cursorTo: () => true, clearLine: () => true, moveCursor: () => true };
  return { io: { stderr } as unknown as CliIo, text: () => written };
}

describe('the progress bar of a cluster run', () => {
  it('shows blocks done and the live workers once the first block is in', async () => {
    const t = terminal();
    const bar = new ProgressBar('pdist', t.io, true);
    // Before the first block there is no bar: the caller prints the status as a line.
    expect(bar.clusterStatus({ kind: 'workers', workers: ['a', 'b'] })).toBe(false);
    bar.onProgress!({ blocksDone: 1, blocksTotal: 78, pairsDone: 100, pairsTotal: 1000, device: 0 });
    expect(t.text()).toContain('1/78 blocks | 2 live workers (a, b)');
    expect(bar.clusterStatus({ kind: 'workers', workers: ['b'] })).toBe(true);
    // The bar redraws on its own timer, at most ten times a second (later on a loaded machine).
    await vi.waitFor(() => expect(t.text()).toContain('1/78 blocks | 1 live worker (b) | ETA'), { timeout: 5000 });
    // A lost server shows in the bar until it is back.
    expect(bar.clusterStatus({ kind: 'server', url: 'nats://h:4222', connected: false })).toBe(true);
    await vi.waitFor(() => expect(t.text()).toContain('1/78 blocks | 1 live worker (b) | NATS server lost, waiting for it | ETA'), { timeout: 5000 });
    const before = t.text().length;
    expect(bar.clusterStatus({ kind: 'server', url: 'nats://h:4222', connected: true })).toBe(true);
    await vi.waitFor(() => expect(t.text().slice(before)).toContain('1/78 blocks | 1 live worker (b) | ETA'), { timeout: 5000 });
    expect(bar.clusterStatus({ kind: 'finished', shares: [] })).toBe(false);
    bar.stop();
  });

  it('shows blocks without workers for a local run, and nothing when stderr is no terminal', () => {
    const t = terminal();
    const bar = new ProgressBar('pdist', t.io, true);
    bar.onProgress!({ blocksDone: 3, blocksTotal: 4, pairsDone: 30, pairsTotal: 40, device: 0 });
    expect(t.text()).toMatch(/\d+\/40 pairs \| 3\/4 blocks \| ETA/);
    bar.stop();
    const quiet = new ProgressBar('pdist', t.io, false);
    expect(quiet.onProgress).toBeUndefined();
    expect(quiet.clusterStatus({ kind: 'workers', workers: ['a'] })).toBe(false);
  });

  it('names each worker\'s share in the summary', () => {
    expect(formatShares([{ worker: 'a', blocks: 40 }, { worker: 'b', blocks: 38 }])).toBe('blocks per worker: a 40 (51%), b 38 (49%)');
    expect(formatShares([])).toBe('blocks per worker: none (every block was resumed)');
  });
});

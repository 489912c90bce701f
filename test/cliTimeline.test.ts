import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../src/cli/main.js';
import { commandTimeline } from '../src/cli/timeline.js';

/** A stream that records what is written. */
class Capture {
  text = '';
  readonly isTTY = false;
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

const LINE = /^pxl timeline: \d+\.\d ms ([a-z ]+), rss \d+\.\d MiB, peak \d+\.\d MiB$/;

describe('commandTimeline', () => {
  it('prints nothing, and says it is off, unless PXL_TIMELINE is set to a non-empty value', () => {
    for (const env of [{}, { PXL_TIMELINE: '' }]) {
      const out = new Capture();
      const timeline = commandTimeline(out, env);
      timeline.mark('input read');
      expect(timeline.on).toBe(false);
      expect(out.text).toBe('');
    }
  });

  it('prints one line per stage: milliseconds since the process started, resident and peak memory', () => {
    const out = new Capture();
    const timeline = commandTimeline(out, { PXL_TIMELINE: '1' });
    timeline.mark('input read');
    timeline.mark('computed');
    expect(timeline.on).toBe(true);
    const lines = out.text.trimEnd().split('\n');
    expect(lines.map((l) => LINE.exec(l)?.[1])).toEqual(['input read', 'computed']);
    const ms = lines.map((l) => Number(/: (\d+\.\d) ms/.exec(l)![1]));
    expect(ms[1]).toBeGreaterThanOrEqual(ms[0]!);
  });
});

describe('PXL_TIMELINE on a pairwise command', () => {
  let dir: string;
  const saved = process.env.PXL_TIMELINE;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pxl-timeline-'));
    await writeFile(join(dir, 'in.json'), JSON.stringify([[[0, 1], [2, 0]], [[0, 3], [1, 0]], [[0, 2]]]));
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.PXL_TIMELINE;
    else process.env.PXL_TIMELINE = saved;
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('marks the stages of pdist -q in order on standard error, and nothing with the variable unset', async () => {
    const args = ['pdist', join(dir, 'in.json'), '-o', join(dir, 'out.npy'), '-q'];
    process.env.PXL_TIMELINE = '1';
    const stderr = new Capture();
    expect(await run(args, { stdout: new Capture(), stderr, interceptSigint: false })).toBe(0);
    const stages = stderr.text.trimEnd().split('\n').map((l) => LINE.exec(l)?.[1]);
    expect(stages).toEqual(['command started', 'options checked', 'devices opening', 'input read', 'devices ready', 'first block done', 'computed', 'devices closed']);
    delete process.env.PXL_TIMELINE;
    const quiet = new Capture();
    expect(await run(args, { stdout: new Capture(), stderr: quiet, interceptSigint: false })).toBe(0);
    expect(quiet.text).toBe('');
  });
});

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../src/cli/main.js';
import { FILE_WRITERS, withFileWriter } from './helpers/fileWriters.js';

// These tests run bin/pxl.js, which needs `npm run build` (the test script's pretest runs it).
const BIN = fileURLToPath(new URL('../bin/pxl.js', import.meta.url));
let dir: string;
const at = (name: string): string => join(dir, name);

/** Enough pairs, in blocks small enough (--memory 1M), that a run is caught with some blocks journaled. */
const N = 3000;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pxl-resume-'));
  const code = await run(['random-pcfs', '--n', String(N), '--points', '20', '--seed', '7', '-o', at('in.json'), '-q'], { interceptSigint: false });
  expect(code).toBe(0);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function start(args: string[]): { child: ChildProcess; exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> } {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal, stderr }));
  });
  return { child, exit };
}

/** Waits (polling the directory) until the run's journal lists at least one finished block. */
async function journaled(child: ChildProcess): Promise<string[]> {
  for (;;) {
    if (child.exitCode !== null) throw new Error('the run ended before its journal listed a block; raise N');
    const journal = (await readdir(dir)).find((f) => f.startsWith('.out.npy.') && f.endsWith('.journal'));
    if (journal !== undefined) {
      const lines = (await readFile(at(journal), 'utf8')).split('\n');
      if (lines.length > 2) return lines;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const partials = async (): Promise<string[]> => (await readdir(dir)).filter((f) => f.startsWith('.out.npy.')).sort();

// Both file writers: the environment variable that chooses one reaches the runs as well.
describe.each(FILE_WRITERS)('pxl runs that stop and resume (file writer on the %s thread)', (writer) => {
  withFileWriter(writer);

  it('resumes a run killed with SIGKILL from its journal, byte-identical to an uninterrupted run; refuses a journal of other options', async () => {
    const args = ['pdist', at('in.json'), '-o', at('out.npy'), '--memory', '1M', '-q'];
    const { child, exit } = start(args);
    await journaled(child);
    child.kill('SIGKILL');
    expect((await exit).signal).toBe('SIGKILL');
    const left = await partials();
    expect(left.map((f) => f.replace(/\d+\.[0-9a-f]+/, 'PID.HEX'))).toEqual(['.out.npy.PID.HEX.journal', '.out.npy.PID.HEX.tmp']);

    const other = start([...args, '--p', '2', '--resume']);
    const refused = await other.exit;
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('it was written for pdist l1, float64, square layout of shape [3000, 3000], but this run is pdist lp p=2, float64, square layout of shape [3000, 3000]');
    expect(await partials()).toEqual(left);

    const resumed = start([...args.filter((a) => a !== '-q'), '--resume']);
    const ended = await resumed.exit;
    expect(ended.code).toBe(0);
    const taken = /, computed on .*; --resume: (\d+) of (\d+) blocks taken over from the journal\n$/.exec(ended.stderr);
    expect(taken, ended.stderr).not.toBeNull();
    expect(Number(taken![1])).toBeGreaterThan(0);
    // The summary counts (and rates) only the pairs this run computed, not the 3000 PCFs' 4498500.
    const pairs = Number(/^pdist: 3000 PCFs, (\d+) pairs in /m.exec(ended.stderr)?.[1]);
    expect(pairs).toBeGreaterThan(0);
    expect(pairs).toBeLessThan(4498500);
    expect(await partials()).toEqual([]);
    expect(await run(['pdist', at('in.json'), '-o', at('whole.npy'), '--memory', '1M', '-q'], { interceptSigint: false })).toBe(0);
    expect((await readFile(at('out.npy'))).equals(await readFile(at('whole.npy')))).toBe(true);
  }, 60_000);

  it('stops on SIGTERM with exit code 130, leaving no partial file and the existing output untouched', async () => {
    await writeFile(at('out.npy'), 'previous result');
    const { child, exit } = start(['pdist', at('in.json'), '-o', at('out.npy'), '--memory', '1M', '-q']);
    await journaled(child);
    child.kill('SIGTERM');
    const ended = await exit;
    expect(ended.code).toBe(130);
    expect(ended.stderr).toBe('pxl: cancelled\n');
    expect(await partials()).toEqual([]);
    expect(await readFile(at('out.npy'), 'utf8')).toBe('previous result');
  }, 30_000);

  it('ends at once on a second signal, still removing its partial files', async () => {
    const { child, exit } = start(['pdist', at('in.json'), '-o', at('out.npy'), '--memory', '1M', '-q']);
    await journaled(child);
    child.kill('SIGINT');
    child.kill('SIGINT');
    expect((await exit).code).toBe(130);
    expect(await partials()).toEqual([]);
  }, 30_000);
});

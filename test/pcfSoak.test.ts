import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { lpDistance, pcfAt, randomPcfs } from '../src/index.js';
import { soakPdist, type SoakFigures } from './fixtures/pdistSoak.js';

/**
 * Soak of many small pdist calls on one Context, in the test's thread and inside a worker thread:
 * after a warm-up, the process's memory and file descriptors must stay where they were. Before
 * device buffers were reused, every call left its buffers (about 190 KB here) alive in each core's
 * idle worker thread, so these runs grew by hundreds of MB; the bounds leave room for allocator
 * noise only. No timing is asserted (bench/soak.mjs measures speed).
 */

// V8 grows the young generation of each thread for the first thousand calls or so (flat after).
const WARMUP = 1_500;
const CALLS = 2_500;
const MiB = 2 ** 20;
const BOUNDS = { rss: 20 * MiB, external: 5 * MiB };
const hasFds = existsSync('/proc/self/fd');

/** The same matrix from the plain single-pair reference, for the last call's result. */
function referenceLast(): number[] {
  const set = randomPcfs({ n: 100, points: 20, seed: 5 });
  const pcfs = Array.from({ length: set.count }, (_, i) => pcfAt(set, i));
  const out: number[] = [];
  for (let i = 1; i < pcfs.length; i++) for (let j = 0; j < i; j++) out.push(lpDistance(pcfs[i]!, pcfs[j]!, 1));
  return out;
}

function expectFlat(f: SoakFigures): void {
  const report = `after ${f.calls} calls: rss ${(f.rss / MiB).toFixed(1)} MiB, external ${(f.external / MiB).toFixed(1)} MiB, fds ${f.fds}`;
  expect(f.rss, report).toBeLessThan(BOUNDS.rss);
  expect(f.external, report).toBeLessThan(BOUNDS.external);
  if (hasFds) expect(f.fds, report).toBe(0);
  const ref = referenceLast();
  expect(f.last.length).toBe(ref.length);
  let worst = 0;
  for (let k = 0; k < ref.length; k++) worst = Math.max(worst, Math.abs(f.last[k]! - ref[k]!) / Math.max(1, Math.abs(ref[k]!)));
  expect(worst).toBeLessThan(1e-12);
}

/** Runs the soak in a worker thread that registers tsx first (workers cannot take it in execArgv). */
function inWorker(): Promise<SoakFigures> {
  const tsx = pathToFileURL(join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;
  const fixture = new URL('./fixtures/pdistSoak.ts', import.meta.url).href;
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    import(${JSON.stringify(tsx)})
      .then((m) => { m.register(); return import(${JSON.stringify(fixture)}); })
      .then((m) => m.soakPdist(workerData.warmup, workerData.calls))
      .then((figures) => parentPort.postMessage({ figures }), (error) => parentPort.postMessage({ error: String(error && error.stack || error) }));
  `;
  const worker = new Worker(source, { eval: true, workerData: { warmup: WARMUP, calls: CALLS } });
  return new Promise<SoakFigures>((resolve, reject) => {
    worker.once('message', (m: { figures?: SoakFigures; error?: string }) => (m.figures !== undefined ? resolve(m.figures) : reject(new Error(m.error))));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the soak worker exited with code ${code} before it reported`)));
  }).finally(() => void worker.terminate());
}

describe('pdist soak', () => {
  it(`keeps memory and file descriptors flat over ${CALLS} small pdist calls on one Context after ${WARMUP} warm-up calls`, async () => {
    expectFlat(await soakPdist(WARMUP, CALLS));
  }, 120_000);

  it(`keeps memory and file descriptors flat over ${CALLS} small pdist calls made inside a worker thread`, async () => {
    expectFlat(await inWorker());
  }, 120_000);
});

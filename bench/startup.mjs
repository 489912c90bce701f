// Start-up benchmark: `pxl --version` (and `pxl --help`) against `node -e 0`, each a fresh process,
// interleaved so that a burst of load on the shared machine hits every command alike. pxl runs as an
// executable through bin/pxl.js's first line (`#!/usr/bin/env node`), as a shell
// runs it, with this node first on PATH; `node bin/pxl.js --version` too, for comparison. Prints one
// JSON document with the median wall time of each and its ratio to `node -e 0` (issue 16's goal:
// --version within 1.5x).
//   npm run bench:startup            (builds first; PXL_BENCH_REPEATS=40 for more repeats)
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { delimiter, dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { median, printJson, sig } from './lib/stats.mjs';

const REPEATS = Number(process.env.PXL_BENCH_REPEATS ?? 25);
const pxl = fileURLToPath(new URL('../bin/pxl.js', import.meta.url));
// Windows runs no first lines: there pxl is node with the script.
const exe = process.platform === 'win32' ? [process.execPath, pxl] : [pxl];
const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` };
const commands = {
  'node -e 0': [process.execPath, '-e', '0'],
  'pxl --version': [...exe, '--version'],
  'node bin/pxl.js --version': [process.execPath, pxl, '--version'],
  'pxl --help': [...exe, '--help'],
  'pxl pdist --help': [...exe, 'pdist', '--help'],
};

function once([file, ...args]) {
  const t0 = performance.now();
  const r = spawnSync(file, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${file} ${args.join(' ')} exited with ${r.status}: ${r.stderr}`);
  return ms;
}

const samples = Object.fromEntries(Object.keys(commands).map((name) => [name, []]));
for (let i = -2; i < REPEATS; i++) {
  for (const [name, args] of Object.entries(commands)) {
    const ms = once(args);
    if (i >= 0) samples[name].push(ms);
  }
}
const base = median(samples['node -e 0']);
printJson({
  bench: 'startup', date: new Date().toISOString(), node: process.version, cpus: os.availableParallelism(),
  loadAverage: os.loadavg().map((x) => sig(x, 3)), repeats: REPEATS,
  results: Object.entries(samples).map(([command, xs]) => ({
    command, medianMs: sig(median(xs), 3), minMs: sig(Math.min(...xs), 3), ratioToNode: sig(median(xs) / base, 3),
  })),
  goal: { command: 'pxl --version', maxRatioToNode: 1.5, met: median(samples['pxl --version']) / base <= 1.5 },
});

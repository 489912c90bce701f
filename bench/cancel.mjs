// How fast a run to a file stops: `pxl pdist X.npz -o out.npy` of N PCFs (20 breakpoints) sent
// SIGINT, SIGTERM, or SIGINT twice 30 ms apart some time into the run, timed from the (last)
// signal to the process's exit, with the exit code and whatever partial files are left; baseline
// in the same run: a bare Node process that exits 130 on the same signals (the floor of any
// exit). Issue 14 asks for a stop within 1 s, exit code 130, no partial file left, and a second
// Ctrl-C that ends at once.
//
//   npm run build && node bench/cancel.mjs                  # N = 20,000, signals after 2 and 4 s
//   node bench/cancel.mjs --n 12000 --after 1000,2000 --reps 3 --dir /mnt/fast
//   node bench/cancel.mjs --help
//
// Prints one JSON document: per signal and delay the median latency and every run's.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, printJson, sig } from './lib/stats.mjs';

const USAGE = `Usage: node bench/cancel.mjs [--n N] [--after MS,MS,...] [--reps R] [--dir DIR]

pxl pdist of N PCFs (default 20,000, 20 breakpoints) to an .npy file in DIR (default: the system's
temporary directory), stopped by SIGINT, by SIGTERM and by two SIGINTs 30 ms apart after each
delay (default 2000,4000 ms),
R times each (default 3), against a bare Node process stopped the same way. Prints one JSON
document: per signal and delay the median seconds from the signal to the exit, the baseline's,
withinGoal (every run within 1 s, exit code 130, no partial file left) and every run.
`;
const valued = new Set(['--n', '--after', '--reps', '--dir']);
const given = new Map();
for (let k = 2; k < process.argv.length; k++) {
  const a = process.argv[k];
  if (a === '--help' || a === '-h') {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  // A mistyped flag must not start a minute of runs with the defaults.
  if (!valued.has(a) || process.argv[k + 1] === undefined) {
    process.stderr.write(`bench/cancel: unknown or incomplete argument '${a}'\n\n${USAGE}`);
    process.exit(2);
  }
  given.set(a, process.argv[++k]);
}
const whole = (name, text, least) => {
  if (!/^\d+$/.test(text) || Number(text) < least) {
    process.stderr.write(`bench/cancel: ${name} takes whole numbers of at least ${least}, got '${text}'\n`);
    process.exit(2);
  }
  return Number(text);
};
const arg = (name, fallback) => given.get(name) ?? fallback;
const n = whole('--n', arg('--n', '20000'), 2);
const delays = arg('--after', '2000,4000').split(',').map((d) => whole('--after', d, 1));
const reps = whole('--reps', arg('--reps', '3'), 1);
const bin = new URL('../bin/pxl.js', import.meta.url).pathname;
const dir = mkdtempSync(join(arg('--dir', tmpdir()), 'pxl-cancel-'));

/** The stops timed: one signal, or (issue 14: "a second Ctrl-C ends at once") two SIGINTs 30 ms apart, timed from the second. */
const STOPS = ['SIGINT', 'SIGTERM', 'SIGINT twice'];

/** Spawns `args`, sends `stopBy` (one of STOPS) after `delayMs`, and times the exit from the last signal. */
async function stop(args, delayMs, stopBy) {
  const child = spawn(process.execPath, args, { stdio: 'ignore' });
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  if (child.exitCode !== null) throw new Error(`the run ended before the signal at ${delayMs} ms; give --after a shorter delay or --n a larger N`);
  const signal = stopBy.split(' ')[0];
  if (stopBy.endsWith('twice')) {
    child.kill(signal);
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  const sent = performance.now();
  child.kill(signal);
  const code = await new Promise((resolve) => child.once('exit', (c, s) => resolve(c ?? s)));
  return { seconds: (performance.now() - sent) / 1000, code };
}

try {
  const input = join(dir, 'x.npz');
  const made = spawnSync(process.execPath, [bin, 'random-pcfs', '--n', String(n), '--points', '20', '--seed', '1', '-o', input, '-q']);
  if (made.status !== 0) throw new Error(`random-pcfs failed: ${made.stderr}`);
  const bare = ['-e', "for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => process.exit(130)); setInterval(() => {}, 1000)"];
  const results = [];
  const loadBefore = loadavg().map((x) => sig(x, 3));
  for (const signal of STOPS) {
    for (const delay of delays) {
      const runs = [];
      const baseline = [];
      for (let r = 0; r < reps; r++) {
        const run = await stop([bin, 'pdist', input, '-o', join(dir, 'out.npy'), '-q'], delay, signal);
        const left = readdirSync(dir).filter((f) => f.startsWith('.'));
        runs.push({ seconds: sig(run.seconds), code: run.code, left });
        for (const f of left) rmSync(join(dir, f), { force: true });
        baseline.push((await stop(bare, 300, signal.split(' ')[0])).seconds);
      }
      const seconds = median(runs.map((x) => x.seconds));
      results.push({
        signal,
        afterMs: delay,
        seconds: sig(seconds),
        baselineSeconds: sig(median(baseline)),
        withinGoal: runs.every((x) => x.seconds <= 1 && x.code === 130 && x.left.length === 0),
        runs,
      });
    }
  }
  printJson({ bench: 'cancel', n, points: 20, reps, loadAverage: { before: loadBefore, after: loadavg().map((x) => sig(x, 3)) }, results });
} finally {
  rmSync(dir, { recursive: true, force: true });
}

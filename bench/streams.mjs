// Streams benchmark: Maps dispatched per second with 1, 2 and 4 streams on one Job, each execute
// carrying host-side argument setup close to the 4 KiB launch limit (a nested constant object
// rebuilt and validated per execute, plus four NDArrays constructed and checked per execute) and a
// tiny kernel. The single-stream figure is measured in the same run, interleaved repeat by repeat,
// so the machine's noise hits every stream count alike. A second case with one-number arguments
// shows the same comparison when the launch round trip, not argument setup, is what costs.
// Prints one JSON document: medians and the median of per-repeat ratios against one stream.
//   npm run build && node bench/streams.mjs     (PXL_BENCH_REPEATS to change the repeats)
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { createContext, NDArray } from 'pxl';
import { toLaunchArgs } from '../dist/pxl/arguments.js';
import { encodeArgs } from '../dist/backends/cpu/argsCodec.js';
import { median, printJson, sig } from './lib/stats.mjs';

const REPEATS = Number(process.env.PXL_BENCH_REPEATS ?? 7);
const STREAM_COUNTS = [1, 2, 4];
const GROUPS = 16;
const PER_GROUP = 16;
const ROW = 8;

// One Sub per CPU, all in one Job: the guideline (streams per Job <= Subs per Job) then allows as
// many streams as CPUs, and 4 streams on this 2-CPU machine go past it.
const ctx = await createContext({ topology: { subs: os.availableParallelism(), clustersPerSub: 1, coresPerCluster: 1 } });
const cores = Number(ctx.getAttribute('coreCount'));
const mod = await ctx.createModule(new URL('./streamKernels.mjs', import.meta.url));
const job = ctx.createJob();
job.load(mod);
const TASKS = cores;
const launches = ctx.memAlloc(4);
const rows = Array.from({ length: 4 }, () => ctx.memAlloc(TASKS * ROW * 8));

/**
 * The constants of one execute: GROUPS groups of PER_GROUP numbers, built afresh every time as a
 * host program assembling its parameters would. The values do not change between executes, so the
 * cores keep their binding and do not decode the arguments again: the work measured is the host's.
 */
function largeParams() {
  const params = {};
  for (let g = 0; g < GROUPS; g++) {
    const group = {};
    for (let w = 0; w < PER_GROUP; w++) group[`w${String(w).padStart(2, '0')}`] = g * PER_GROUP + w + 0.5;
    params[`g${g}`] = group;
  }
  return params;
}

/** Each case: how one execute's arguments are made, and how many executes one sample times. */
const cases = {
  hostSetupBound: {
    executes: 1000,
    makeArgs: () => [largeParams(), launches, ...rows.map((p) => new NDArray(p, 'float64', [TASKS, ROW]))],
  },
  launchBound: {
    executes: 4000,
    makeArgs: (() => {
      const args = [{ g0: { w00: 0.5 } }, launches, ...rows.map((p) => new NDArray(p, 'float64', [TASKS, ROW]))];
      return () => args;
    })(),
  },
};

/** Bytes the arguments of one execute encode to in the launch descriptor (at most 4096). */
function encodedBytes(makeArgs) {
  return encodeArgs(toLaunchArgs(makeArgs(), ctx, 'task', TASKS)).length;
}

/** One Map per stream; stream s of `count` gets executes s, s + count, ... */
function setup(count) {
  const streams = Array.from({ length: count }, () => ctx.createStream());
  const maps = streams.map((s) => job.buildMap('touch_params', TASKS).setBatchSize(1).setStream(s));
  return { streams, maps };
}

/** Maps dispatched per second: `executes` executes round-robin over the streams, then one synchronize per Map. */
async function rate(maps, makeArgs, executes) {
  const view = ctx.hostView(launches, 'int32');
  view[0] = 0;
  const t0 = performance.now();
  for (let i = 0; i < executes; i++) await maps[i % maps.length].execute(...makeArgs());
  await Promise.all(maps.map((m) => m.synchronize()));
  const seconds = (performance.now() - t0) / 1e3;
  if (view[0] !== executes) throw new Error(`${view[0]} launches ran, expected ${executes}`);
  return executes / seconds;
}

/** Host microseconds per execute of building the arguments (`makeArgs`) alone. */
function setupMicroseconds(makeArgs) {
  const n = 2000;
  let sink = 0;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) sink += makeArgs().length;
  if (sink !== n * 6) throw new Error('unexpected argument count');
  return ((performance.now() - t0) * 1e3) / n;
}

/** Host microseconds per execute that execute() itself spends validating and encoding those arguments. */
function validateAndEncodeMicroseconds(makeArgs) {
  const n = 2000;
  const args = makeArgs();
  let sink = 0;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) sink += encodeArgs(toLaunchArgs(args, ctx, 'task', TASKS)).length;
  if (sink === 0) throw new Error('nothing encoded');
  return ((performance.now() - t0) * 1e3) / n;
}

async function compareStreams({ executes, makeArgs }) {
  const configs = STREAM_COUNTS.map((count) => ({ count, ...setup(count), samples: [] }));
  for (const c of configs) await rate(c.maps, makeArgs, Math.min(500, executes)); // warm-up
  for (let r = 0; r < REPEATS; r++) {
    // Rotate which stream count goes first, so drift over the run does not favour one.
    for (let k = 0; k < configs.length; k++) {
      const c = configs[(r + k) % configs.length];
      c.samples.push(await rate(c.maps, makeArgs, executes));
    }
  }
  const single = configs[0].samples;
  const out = {};
  for (const c of configs) {
    out[`streams${c.count}`] = {
      mapsPerSec: sig(median(c.samples)),
      microsecondsPerMap: sig(1e6 / median(c.samples), 3),
      vsOneStream: sig(median(c.samples.map((x, i) => x / single[i])), 3),
    };
    for (const s of c.streams) ctx.destroyStream(s);
  }
  return { executesPerSample: executes, argumentBytes: encodedBytes(makeArgs), argumentSetupMicroseconds: sig(setupMicroseconds(makeArgs), 3), validateAndEncodeMicroseconds: sig(validateAndEncodeMicroseconds(makeArgs), 3), ...out };
}

try {
  const t0 = performance.now();
  const report = {
    bench: 'streams',
    date: new Date().toISOString(),
    node: process.version,
    cores,
    job: { subs: job.subCount, cores: job.coreCount },
    kernel: `touch_params over ${TASKS} tasks, batch size 1`,
    repeats: REPEATS,
    note: '',
    hostSetupBound: await compareStreams(cases.hostSetupBound),
    launchBound: await compareStreams(cases.launchBound),
  };
  report.seconds = sig((performance.now() - t0) / 1e3, 3);
  report.note = note(report);
  printJson(report);
} finally {
  await ctx.destroy();
}

function note(r) {
  const ratios = (c) => STREAM_COUNTS.slice(1).map((n) => `${n} streams x${c[`streams${n}`].vsOneStream}`).join(', ');
  return [
    'Medians over interleaved repeats in one process; vsOneStream is the median of per-repeat ratios against one stream.',
    `This machine has ${r.cores} CPUs, shared by the one JavaScript host thread and the Job's ${r.job.cores} MU cores.`,
    'Argument setup (building the constants and NDArrays, then execute\'s validation and encoding, see argumentSetupMicroseconds and validateAndEncodeMicroseconds) runs on the host thread whatever the number of streams:',
    'streams do not spread it over threads and do not add cores. What they parallelize is the dispatch path: with one stream a launch is dispatched only after the previous one finished,',
    'with several, launches of different Maps are in flight together, so one stream\'s round trip (wake the cores, wait for completion, hand the slot on) overlaps host work and other streams\' launches.',
    `Setup-bound, the host thread is the bottleneck: the gain is bounded by the round trip's share of the time per Map and stays small (this run: ${ratios(r.hostSetupBound)}).`,
    `Launch-bound, more streams overlap the round trips (this run: ${ratios(r.launchBound)}) until the host thread or the cores saturate;`,
    `the kernel leaves the cores almost idle, so this gain does not carry over to kernels that keep them busy, where the Job's cores bound throughput.`,
    `Guideline: streams per Job <= Subs per Job (${r.job.subs} here); 4 streams go past it. Numbers on this shared 2-CPU machine vary by tens of percent between runs.`,
  ].join(' ');
}

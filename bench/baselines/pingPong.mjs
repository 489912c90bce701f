// Baseline: raw launch round trip. The main thread bumps a generation word and
// Atomics.notify()s `threads` workers sleeping in Atomics.wait; each worker acknowledges
// with Atomics.add on a shared counter and the last one notifies the main thread, which
// waits with Atomics.waitAsync. Hot words live on separate 64-byte lines.

import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { isMainThread, workerData } from 'node:worker_threads';
import { median, waitUntil } from '../lib/stats.mjs';
import { isEntryModule, serveLaunches, startWorkers } from '../lib/workers.mjs';

const ROLE = 'pxl-bench-ping-pong';
const LINE = 16; // Int32 slots per 64-byte line
const GEN = 0 * LINE;
const ACK = 1 * LINE;
const READY = 2 * LINE;
const STOP = 3 * LINE;

function workerMain() {
  const { sab, threads } = workerData;
  const ctl = new Int32Array(sab);
  serveLaunches(ctl, GEN, READY, () => {
    if (Atomics.load(ctl, STOP) !== 0) return false;
    if (Atomics.add(ctl, ACK, 1) + 1 === threads) Atomics.notify(ctl, ACK);
    return true;
  });
}

/** One set of fresh workers; returns the sorted round-trip samples in µs. */
async function pingPongOnce({ threads, rounds, warmupRounds, gapMs }) {
  const sab = new SharedArrayBuffer(4 * LINE * 4);
  const ctl = new Int32Array(sab);
  const group = startWorkers(
    new URL(import.meta.url),
    threads,
    () => ({ role: ROLE, sab, threads }),
    () => {
      Atomics.notify(ctl, READY);
      Atomics.notify(ctl, ACK);
    },
  );
  const failed = () => group.failure() !== null;
  try {
    await waitUntil(ctl, READY, threads, (v) => v >= threads || failed());
    const samples = [];
    for (let r = 0; r < warmupRounds + rounds; r++) {
      if (failed()) throw group.failure();
      if (gapMs > 0) await new Promise((res) => setTimeout(res, gapMs));
      const t0 = performance.now();
      Atomics.store(ctl, ACK, 0);
      Atomics.add(ctl, GEN, 1);
      Atomics.notify(ctl, GEN, threads);
      await waitUntil(ctl, ACK, threads, (v) => v >= threads || failed());
      const us = (performance.now() - t0) * 1e3;
      if (r >= warmupRounds) samples.push(us);
    }
    if (failed()) throw group.failure();
    return samples.sort((a, b) => a - b);
  } finally {
    await group.terminate(() => {
      Atomics.store(ctl, STOP, 1);
      Atomics.add(ctl, GEN, 1);
      Atomics.notify(ctl, GEN);
    });
  }
}

/**
 * Round-trip time in microseconds of one empty launch (main -> `threads` sleeping workers
 * -> main). Runs `repeats` sets, each with fresh workers, `warmupRounds` untimed rounds and
 * `rounds` timed ones, and returns the median of the per-set medians (wake-up latency on a
 * shared VM varies a lot between sets). `gapMs` > 0 pauses between rounds (with a timer) so
 * workers are surely asleep. Details of the last call are on `rawPingPong.last`.
 * @returns {Promise<number>} µs
 */
export async function rawPingPong({
  threads = os.availableParallelism(),
  rounds = 400,
  repeats = 5,
  warmupRounds = 100,
  gapMs = 0,
} = {}) {
  const setMedians = [];
  const all = [];
  for (let k = 0; k < repeats; k++) {
    const s = await pingPongOnce({ threads, rounds, warmupRounds, gapMs });
    setMedians.push(median(s));
    all.push(...s);
  }
  all.sort((a, b) => a - b);
  const q = (f) => all[Math.min(all.length - 1, Math.floor(f * all.length))];
  rawPingPong.last = {
    threads,
    rounds,
    repeats,
    gapMs,
    medianUs: median(setMedians),
    setMediansUs: setMedians,
    pooledP10Us: q(0.1),
    pooledP50Us: q(0.5),
    pooledP90Us: q(0.9),
  };
  return rawPingPong.last.medianUs;
}
rawPingPong.last = null;

if (!isMainThread && workerData?.role === ROLE) {
  workerMain();
} else if (isMainThread && isEntryModule(import.meta.url)) {
  for (const gapMs of [0, 1]) {
    await rawPingPong({ gapMs, rounds: gapMs ? 100 : 400 });
    console.log({ gapMs, ...rawPingPong.last });
  }
}

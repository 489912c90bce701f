// Helpers for the raw worker_threads baselines: start a group of workers running a module,
// notice when one fails (error event or unexpected exit), and stop them all.

import { Worker } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';

/** True when the module whose `import.meta.url` is given is the script node was started with. */
export function isEntryModule(metaUrl) {
  return process.argv[1] !== undefined && metaUrl === pathToFileURL(process.argv[1]).href;
}

/**
 * Start `count` workers on module `url`; worker i gets `makeData(i)` as workerData.
 * `onFailure(err)` runs once, on the first worker error or unexpected exit, so the caller
 * can wake whatever Atomics word its main thread is waiting on.
 * @returns {{ workers: Worker[], failure(): Error|null, terminate(signalStop?: () => void): Promise<void> }}
 */
export function startWorkers(url, count, makeData, onFailure = () => {}) {
  let failure = null;
  let stopping = false;
  const fail = (err) => {
    if (failure || stopping) return;
    failure = err;
    onFailure(err);
  };
  const workers = [];
  for (let i = 0; i < count; i++) {
    const w = new Worker(url, { workerData: makeData(i) });
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`worker ${i} exited early with code ${code}`)));
    workers.push(w);
  }
  return {
    workers,
    failure: () => failure,
    /** Run `signalStop()` (e.g. set a stop word and notify), then terminate every worker. */
    async terminate(signalStop = () => {}) {
      stopping = true;
      signalStop();
      await Promise.all(workers.map((w) => w.terminate()));
    },
  };
}

/**
 * Worker side of the baselines' launch protocol: announce readiness on `ctl[ready]`, then sleep in
 * Atomics.wait on the generation word `ctl[gen]` and call `onLaunch()` once per new generation
 * (spurious wake-ups are ignored) until it returns false.
 */
export function serveLaunches(ctl, gen, ready, onLaunch) {
  let seen = 0;
  Atomics.add(ctl, ready, 1);
  Atomics.notify(ctl, ready);
  for (;;) {
    Atomics.wait(ctl, gen, seen);
    const g = Atomics.load(ctl, gen);
    if (g === seen) continue;
    seen = g;
    if (!onLaunch()) return;
  }
}

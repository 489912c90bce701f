/**
 * The CPU Context that pairwise operations run on when the caller passes none: one per process,
 * created by the first such call (one Sub of one core per CPU) and kept for every later one, so a
 * small call costs its computing rather than starting worker threads. Its cores never keep the
 * process alive while idle (the core pool holds a reference only while work is in flight), so a
 * program that is done exits without destroying it.
 */
import { availableCores, sharedMemoryAvailable } from '../platform/machine.js';
import { createContext, type Context } from '../pxl/context.js';

let current: Promise<Context> | undefined;
/** The destruction of the last default Context, which a second destroyDefaultContext waits for too. */
let ending: Promise<void> | undefined;

/**
 * The process-wide default CPU Context, created on first use. Concurrent first calls share one
 * creation; a creation that fails is forgotten, so the next call tries again.
 */
export function defaultContext(): Promise<Context> {
  if (current === undefined) {
    // Without shared memory (a browser page that is not cross-origin isolated) kernels run on the
    // page's thread, one batch at a time: more Subs would only interleave, not run in parallel.
    const subs = sharedMemoryAvailable() ? availableCores() : 1;
    const created = createContext({ topology: { subs, clustersPerSub: 1, coresPerCluster: 1 } });
    current = created;
    created.catch(() => {
      if (current === created) current = undefined;
    });
  }
  return current;
}

/**
 * Destroys the default Context, if one was created: its worker threads end and its memory is
 * released. Calls still running on it reject as on any destroyed Context; the next call without a
 * context creates a fresh one. A call made while an earlier one is still destroying resolves when
 * that one has finished.
 */
export async function destroyDefaultContext(): Promise<void> {
  const pending = current;
  current = undefined;
  if (pending !== undefined) {
    const ended = pending.then((ctx) => ctx.destroy(), () => undefined);
    ending = ended;
    void ended.finally(() => {
      if (ending === ended) ending = undefined;
    }).catch(() => undefined);
  }
  await ending;
}

/**
 * How the main thread's file writer (mainThreadFileWriter.ts) writes a finished tile: synchronous
 * positional writes, a quarter of a millisecond of them per turn of the event loop, for as long as
 * each write is quick (a copy into the page cache, a few microseconds for the 2 KiB runs of a
 * pdist of 2,000 PCFs); from the first slow one on (a disk or a network file system that makes the
 * caller wait), the rest go through libuv's pool (positionalWrites.ts), off the main thread.
 *
 * Why not the pool throughout: each request to it wakes a pool thread, which on a machine whose
 * cores are busy with the kernels takes the CPU from the main thread (a CPU profile put 60 ms of
 * each pdist of 2,000 PCFs x 20 breakpoints in the write calls that submit them), and each answer
 * is a turn of the event loop. pdist to a square float64 file, 2 vCPUs, eleven interleaved calls
 * of each in one process, medians (bench/fileWriters.mjs; the pool alone with a switch left out
 * of the code): at 2,000 x 20 breakpoints 0.150 and 0.144 s in steps against 0.179 and 0.201 s on
 * the pool (the writer thread 0.242 and 0.181 s), at 2,800 x 20 0.224 and 0.345 against 0.279 and
 * 0.369 s, at 2,000 x 100 0.259 and 0.431 against 0.280 and 0.424 s (load 6.5-8); the event
 * loop's longest stall 2-5 ms longer in the median (7.3-14.3 against 5.2-11.0 ms). Under a load
 * of 9 the pool was faster (0.212 against 0.247 s at 2,000 x 20) and stalled less. Steps of 0.5
 * ms were no faster than 0.25 ms and stalled longer at 2,800 (median 14.9 against 11.7 ms), steps
 * of 2 ms stalled 15-18 ms.
 */
import { performance } from 'node:perf_hooks';
import { writePositional, writeWholeSync } from './positionalWrites.js';

/** Milliseconds of synchronous writes per turn of the event loop. */
export const WRITE_STEP_MS = 0.25;

/**
 * A write that keeps the main thread this long shows a disk that makes its caller wait: the
 * writer's later writes go to libuv's pool. More than two ticks of the scheduler: on a loaded
 * machine a quick write that loses the CPU to a core for one tick measured 4.0-4.1 ms.
 */
export const SLOW_WRITE_MS = 10;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A tile writing of one file writer: see the file comment. Each call writes each of `writes`
 * whole at its position and resolves once all are written; it rejects with the first error, after
 * which it starts no more writes (nothing writes to `fd` after it settles). Once a write took
 * {@link SLOW_WRITE_MS} or longer, this and every later call of the same writing hand their writes
 * to {@link writePositional}.
 *
 * @param clock milliseconds, for tests that make a write slow; default `performance.now`.
 * @example
 * const write = steppedWrites();
 * await write(fd, tileWrites(layout, tile));
 */
export function steppedWrites(clock: () => number = () => performance.now()): typeof writePositional {
  let slow = false;
  return async (fd, writes) => {
    let turn = clock();
    while (!slow) {
      const next = writes.next();
      if (next.done === true) return;
      const started = clock();
      writeWholeSync(fd, next.value.pieces, next.value.position);
      const now = clock();
      if (now - started >= SLOW_WRITE_MS) slow = true;
      else if (now - turn > WRITE_STEP_MS) {
        await nextTurn();
        turn = clock();
      }
    }
    await writePositional(fd, writes);
  };
}

/**
 * Positional writes on libuv's pool, for the main thread's file writer once its disk has shown
 * itself slow (steppedWrites.ts).
 * Each write costs a wake-up of a pool thread and one of the event loop; with several in flight
 * those overlap. Measured on the development machine (2 vCPUs), 16,000 writes of 2 KiB at their
 * own offsets: one at a time 0.7 s, 4 at a time 0.27 s, 16 at a time 80 ms, 64 at a time 40 ms
 * (against 30-70 ms of synchronous writes). In a pdist of 2,000 PCFs (the same 16,000 writes
 * beside two busy cores) 16 in flight ran as fast as 64 with shorter event-loop stalls: every
 * pool thread busy at once is one more thread wanting a CPU that the main thread then waits for.
 */
import { write, writeSync, writev, writevSync } from 'node:fs';
import type { TileWrite } from './stagedTile.js';

/** Writes in flight at most. */
const IN_FLIGHT = 16;

type Done = (error: Error | null) => void;

/**
 * The pieces left after the first `bytes` of `pieces`: what a short positional write left to write.
 *
 * @example remainingPieces([a, b], a.length + 1) // [b.subarray(1)]
 */
export function remainingPieces(pieces: readonly Uint8Array[], bytes: number): Uint8Array[] {
  const left: Uint8Array[] = [];
  let at = 0;
  for (const piece of pieces) {
    const skip = Math.min(piece.length, Math.max(0, bytes - at));
    if (skip < piece.length) left.push(piece.subarray(skip));
    at += piece.length;
  }
  return left;
}

/**
 * Writes `pieces` (bytes that follow each other in the file) whole from `position`, synchronously,
 * in one gather write when it takes them all: a positional write may write less than asked
 * (rarely, for regular files).
 *
 * @example writeWholeSync(fd, [head, body], 0);
 */
export function writeWholeSync(fd: number, pieces: readonly Uint8Array[], position: number): void {
  let left = pieces;
  let at = position;
  for (;;) {
    const total = left.reduce((n, p) => n + p.length, 0);
    if (total === 0) return;
    const bytes = left.length === 1 ? writeSync(fd, left[0]!, 0, total, at) : writevSync(fd, left as Uint8Array[], at);
    if (bytes >= total) return;
    left = remainingPieces(left, bytes);
    at += bytes;
  }
}

/**
 * Writes `writes` (each pieces that follow each other in the file) synchronously through `bounce`:
 * pieces are copied into it and written a buffer at a time wherever they continue each other in
 * the file, across writes too; a piece at least as long as `bounce` goes out as it is.
 *
 * Why: on the development machine (kernel 6.18, ext4) a gather write of many short pieces cost the
 * kernel's copy into the page cache up to six times as much as the same bytes from one buffer
 * (200 MB in pieces of 5,000 bytes, 1,024 to a writev: 0.04 to 0.30 s of system time, varying from
 * run to run; copied into a 1 MiB buffer first and written from it: 0.025 to 0.045 s, the copies
 * included).
 *
 * @example writeBouncedSync(fd, held.takeBefore(n).writes, new Uint8Array(1 << 20));
 */
export function writeBouncedSync(fd: number, writes: Iterable<TileWrite>, bounce: Uint8Array): void {
  let used = 0;
  let at = 0;
  const flush = (): void => {
    if (used > 0) writeWholeSync(fd, [bounce.subarray(0, used)], at);
    used = 0;
  };
  for (const { position, pieces } of writes) {
    let next = position;
    if (used > 0 && at + used !== next) flush();
    for (let piece of pieces) {
      if (used === 0 && piece.length >= bounce.length) {
        writeWholeSync(fd, [piece], next);
        next += piece.length;
        continue;
      }
      if (used === 0) at = next;
      next += piece.length;
      while (piece.length > 0) {
        const n = Math.min(piece.length, bounce.length - used);
        bounce.set(piece.subarray(0, n), used);
        used += n;
        piece = piece.subarray(n);
        if (used === bounce.length) {
          flush();
          at += bounce.length;
        }
      }
    }
  }
  flush();
}

/** Writes `pieces` whole from `position`: a positional write may write less than asked (rarely, for regular files). */
function writeWhole(fd: number, pieces: readonly Uint8Array[], position: number, done: Done): void {
  const total = pieces.reduce((n, p) => n + p.length, 0);
  const written = (error: Error | null, bytes: number): void => {
    if (error !== null) done(error);
    else if (bytes >= total) done(null);
    else writeWhole(fd, remainingPieces(pieces, bytes), position + bytes, done);
  };
  if (pieces.length === 1) write(fd, pieces[0]!, 0, total, position, written);
  else writev(fd, pieces as Uint8Array[], position, written);
}

/**
 * Writes each of `writes` whole at its position, at most 16 at a time, taking the next one as one
 * ends. Resolves once all are written; after a failure no more are started, and it rejects with
 * the first error once the writes in flight have ended (so nothing writes to `fd` after it settles).
 *
 * @example await writePositional(fd, tileWrites(layout, tile));
 */
export function writePositional(fd: number, writes: Iterator<TileWrite, void, undefined>): Promise<void> {
  return new Promise((resolve, reject) => {
    let running = 0;
    let ended = false;
    let failure: Error | undefined;
    const done = (error: Error | null): void => {
      running--;
      if (error !== null) failure ??= error;
      pump();
    };
    const pump = (): void => {
      while (running < IN_FLIGHT && failure === undefined && !ended) {
        const next = writes.next();
        if (next.done === true) {
          ended = true;
          break;
        }
        running++;
        writeWhole(fd, next.value.pieces, next.value.position, done);
      }
      if (running > 0) return;
      if (failure !== undefined) reject(failure);
      else if (ended) resolve();
    };
    pump();
  });
}

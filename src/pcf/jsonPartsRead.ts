/**
 * Reading a large JSON file of PCFs on several threads at once: the file is cut between PCFs
 * (jsonSplit.ts), each part is read by its own thread (jsonPartThread.ts) into columns whose
 * buffers come back transferred, and the parts are joined in order (jsonPartsJoin.ts) into the set
 * or the error a one-pass read gives. Where that cannot be told from the parts, or the file is
 * small or not in a form the parts can resume in, the answer is undefined and the caller reads the
 * file in one pass (pcfFileRead.ts).
 *
 * Threads: every thread started here has ended when the promise settles, whatever the outcome.
 */
import type { Worker } from 'node:worker_threads';
import { InputFormatError, OutOfMemoryError } from '../core/errors.js';
import { open, stat } from '../platform/files.js';
import { availableCores } from '../platform/machine.js';
import { startThread, threadEntry } from '../platform/thread.js';
import type { JsonPart } from './jsonPart.js';
import type { JsonPartAnswer, JsonPartTask } from './jsonPartThread.js';
import { joinJsonParts, partsDecided } from './jsonPartsJoin.js';
import type { JsonResumeForm } from './jsonScanner.js';
import { pcfJsonForm, pcfJsonSplits } from './jsonSplit.js';
import type { PcfDtype } from './pcf.js';
import type { PcfSet } from './pcfSet.js';

const entry = threadEntry(import.meta.url, 'jsonPartThread');

/**
 * Files smaller than this are read in one pass. Each thread costs about 35 ms of CPU time to start
 * and as much again before its scanner is compiled to machine code (measured with bench/input.mjs:
 * a 31 MB file took 0.42 s of CPU time in two parts against 0.25 s in one pass), so below about
 * 64 MB two parts finish little sooner than one pass, at a higher cost.
 */
export const PARTS_MIN_BYTES = 64 << 20;
/** Smallest part worth a thread of its own. */
const PART_MIN_BYTES = 32 << 20;
/**
 * Most threads a file is read on. Each costs about 10 MB of memory of its own, and the join after
 * them runs on one thread (about 0.4 s per GB of JSON), so more threads gain little.
 */
const MAX_PARTS = 8;
/** Bytes of the file's start looked at to tell its form. */
const HEAD_BYTES = 1 << 12;

/** Choices the tests make; the reader decides them itself otherwise. */
export interface PartsReadOptions {
  /** Read in parts from this size on (default {@link PARTS_MIN_BYTES}). */
  minBytes?: number;
  /** Parts to cut into (default: one per core, at most 8, at least 32 MiB each). */
  parts?: number;
  /** Cut at these byte offsets instead of looking for boundaries (in increasing order). */
  splits?: number[];
}

/** Sets a part's thread going; resolves with what it found, rejects with the error a one-pass read would give for a failure. */
function readPart(thread: Worker, path: string): Promise<JsonPart> {
  return new Promise((resolve, reject) => {
    thread.once('message', (answer: JsonPartAnswer) => {
      if (answer.kind === 'part') resolve(answer.part);
      else if (answer.kind === 'read') reject(new InputFormatError(`cannot read the file: ${answer.message}`, path));
      else if (answer.kind === 'memory') reject(new OutOfMemoryError(answer.requested, 0, answer.message));
      else reject(Object.assign(new Error(`reading ${path} on a thread: ${answer.name}: ${answer.message}`), { stack: answer.stack }));
    });
    thread.once('error', reject);
    thread.once('exit', (code) => reject(new Error(`the thread reading part of ${path} ended (exit code ${code}) before answering`)));
  });
}

/**
 * The parts' results, in order, once all have answered or those answered decide the outcome
 * (`partsDecided`: the others are stopped and stay undefined); every thread has ended when this
 * settles.
 */
async function readParts(path: string, bounds: readonly number[], form: JsonResumeForm, dtype: PcfDtype): Promise<(JsonPart | undefined)[]> {
  const threads: Worker[] = [];
  const ended: Promise<unknown>[] = [];
  try {
    for (let i = 0; i + 1 < bounds.length; i++) {
      const task: JsonPartTask = { path, start: bounds[i]!, end: bounds[i + 1]!, form: i === 0 ? undefined : form, last: i + 2 === bounds.length, dtype };
      const thread = startThread(entry, { workerData: task });
      threads.push(thread);
      ended.push(new Promise((resolve) => thread.once('exit', resolve)));
    }
    const answers: (JsonPart | undefined)[] = threads.map(() => undefined);
    return await new Promise((resolve, reject) => {
      let left = threads.length;
      for (const [i, thread] of threads.entries()) {
        readPart(thread, path).then((part) => {
          answers[i] = part;
          left--;
          if (left === 0 || partsDecided(answers, form)) resolve(answers.slice());
        }, reject);
      }
    });
  } finally {
    // After a failure the others may still be reading: stop them, and wait for every thread to end.
    for (const thread of threads) void thread.terminate();
    await Promise.all(ended);
  }
}

/**
 * Reads the JSON file `path` in parts on several threads, giving exactly the set (or error) of a
 * one-pass read; undefined where the file should be read in one pass instead (too small, a form
 * the parts cannot resume in, a cut that did not hold, a problem only a one-pass read words).
 *
 * @throws (rejects) InputFormatError naming `path` for invalid JSON or PCFs, as a one-pass read
 *   does; OutOfMemoryError when a column cannot grow.
 */
export async function readPcfJsonInParts(path: string, dtype: PcfDtype, shared: boolean, options: PartsReadOptions = {}): Promise<PcfSet | undefined> {
  // A pipe named .json opens once only: after that read, a second open would wait for a writer for ever.
  if (!(await stat(path).then((s) => s.isFile(), () => false))) return undefined;
  let handle;
  try {
    handle = await open(path, 'r');
  } catch {
    return undefined; // the one-pass read reports it
  }
  let form: JsonResumeForm | undefined;
  let bounds: number[];
  try {
    const size = (await handle.stat()).size;
    const parts = options.parts ?? Math.min(availableCores(), MAX_PARTS, Math.floor(size / PART_MIN_BYTES));
    if (size < (options.minBytes ?? PARTS_MIN_BYTES) || (parts < 2 && options.splits === undefined)) return undefined;
    const readAt = async (position: number, length: number): Promise<Uint8Array> => {
      const bytes = new Uint8Array(Math.max(0, Math.min(length, size - position)));
      let got = 0;
      while (got < bytes.length) {
        const { bytesRead } = await handle.read(bytes, got, bytes.length - got, position + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      return bytes.subarray(0, got);
    };
    form = pcfJsonForm(await readAt(0, HEAD_BYTES));
    if (form === undefined) return undefined;
    const splits = options.splits ?? (await pcfJsonSplits(readAt, size, parts));
    if (splits.length === 0) return undefined;
    bounds = [0, ...splits, size];
  } catch {
    return undefined; // the one-pass read reports it
  } finally {
    await handle.close();
  }
  const parts = await readParts(path, bounds, form, dtype);
  return joinJsonParts(parts, form, dtype, shared, path);
}

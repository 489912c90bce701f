/**
 * The thread that reads one part of a JSON document of PCFs (jsonPart.ts) from the file, with
 * synchronous reads (they cost no other thread anything), and posts what it found to the thread
 * that started it, the columns' buffers transferred, not copied. It posts exactly one message and
 * then ends by itself: nothing keeps it alive.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { OutOfMemoryError } from '../core/errors.js';
import type { PcfDtype } from './pcf.js';
import { parseJsonPart, type JsonPart } from './jsonPart.js';
import type { JsonResumeForm } from './jsonScanner.js';

/** What the thread is started with (its `workerData`). */
export interface JsonPartTask {
  path: string;
  start: number;
  end: number;
  /** How the part resumes; undefined for the first part. */
  form: JsonResumeForm | undefined;
  last: boolean;
  dtype: PcfDtype;
}

/** The thread's one message. */
export type JsonPartAnswer =
  | { kind: 'part'; part: JsonPart }
  /** The file could not be read (the system's words). */
  | { kind: 'read'; message: string }
  /** A column could not grow. */
  | { kind: 'memory'; requested: number; message: string }
  | { kind: 'error'; name: string; message: string; stack: string | undefined };

/** Bytes read at a time, as the one-pass reader reads them. */
const CHUNK_BYTES = 1 << 20;

class ReadFailure extends Error {}

/** The bytes of `path` from `start` to `end`, one chunk at a time in one reused buffer (the scanner copies what it keeps). */
function* rangeChunks(fd: number, start: number, end: number): Generator<Uint8Array> {
  const buffer = new Uint8Array(CHUNK_BYTES);
  for (let at = start; at < end;) {
    let got: number;
    try {
      got = readSync(fd, buffer, 0, Math.min(CHUNK_BYTES, end - at), at);
    } catch (err) {
      throw new ReadFailure((err as Error).message);
    }
    if (got === 0) throw new ReadFailure(`the file ended at byte ${at}, before byte ${end}; was it changed while being read?`);
    yield buffer.subarray(0, got);
    at += got;
  }
}

function run(task: JsonPartTask): { answer: JsonPartAnswer; transfer: ArrayBuffer[] } {
  let fd: number | undefined;
  try {
    fd = openSync(task.path, 'r');
    const part = parseJsonPart(rangeChunks(fd, task.start, task.end), task.start, task.form, task.last, task.dtype);
    return { answer: { kind: 'part', part }, transfer: [part.times, part.values, part.offsets].flatMap((c) => c.segments) };
  } catch (err) {
    if (err instanceof ReadFailure || (fd === undefined && err instanceof Error)) return { answer: { kind: 'read', message: err.message }, transfer: [] };
    if (err instanceof OutOfMemoryError) return { answer: { kind: 'memory', requested: err.requested, message: err.message }, transfer: [] };
    const e = err instanceof Error ? err : new Error(String(err));
    return { answer: { kind: 'error', name: e.name, message: e.message, stack: e.stack }, transfer: [] };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

const { answer, transfer } = run(workerData as JsonPartTask);
parentPort!.postMessage(answer, transfer);

/**
 * The file writer's thread: it takes one finished block at a time out of a shared slot, stages it
 * into the file's order (mirror, condensed columns) and writes it with synchronous positional
 * writes. Synchronous writes here cost a few microseconds each and none of the main thread's time;
 * through libuv's pool each write would cost the main thread a callback, and staging there would
 * hold up the event loop for as long as a block takes to copy.
 */
import { writeSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { LogicError } from '../core/errors.js';
import type { BlockInfo } from './blockScheduler.js';
import { stageBlock, type StagedRun } from './blockStaging.js';
import { allocFloatArray, type FloatArray } from './floatArray.js';
import type { NpyFileLayout } from './npyLayout.js';

/** What the thread starts with. */
export interface FileWriterInit {
  /** The partial file's descriptor, opened by the host; descriptors belong to the whole process. */
  readonly fd: number;
  readonly layout: NpyFileLayout;
  /** Elements of the staging buffer: the most any block of the schedule occupies in the file. */
  readonly stagingElements: number;
}

/** Host to thread: write `block`, whose results the host copied into `data` (row-major, `colCount` per row). */
export interface WriteBlock {
  readonly block: BlockInfo;
  readonly data: SharedArrayBuffer;
}

/** Thread to host: the block's bytes are in the file (`error` undefined), or why not. */
export interface BlockWritten {
  readonly block: number;
  readonly error?: { readonly logic: boolean; readonly message: string };
}

function viewOf(layout: NpyFileLayout, buffer: SharedArrayBuffer): FloatArray {
  return layout.dtype === 'float32' ? new Float32Array(buffer) : new Float64Array(buffer);
}

function writeRuns(fd: number, layout: NpyFileLayout, staging: FloatArray, runs: readonly StagedRun[]): void {
  const size = layout.elementBytes;
  const base = layout.header.length;
  const bytes = new Uint8Array(staging.buffer, staging.byteOffset, staging.byteLength);
  for (const run of runs) {
    let offset = run.from * size;
    let position = base + run.at * size;
    let left = run.length * size;
    // A positional write may write less than asked (rarely, for regular files): go on from there.
    while (left > 0) {
      const written = writeSync(fd, bytes, offset, left, position);
      offset += written;
      position += written;
      left -= written;
    }
  }
}

function serve(init: FileWriterInit): void {
  const port = parentPort!;
  const { fd, layout } = init;
  const staging = allocFloatArray(layout.dtype, init.stagingElements);
  const runs: StagedRun[] = [];
  // After the first failure the file is garbage: later blocks are answered without writing.
  let failed = false;
  port.on('message', ({ block, data }: WriteBlock) => {
    let error: BlockWritten['error'];
    if (failed) {
      error = { logic: false, message: 'an earlier block failed' };
    } else {
      try {
        runs.length = 0;
        stageBlock(layout, block, viewOf(layout, data), staging, runs);
        writeRuns(fd, layout, staging, runs);
      } catch (e) {
        failed = true;
        error = { logic: e instanceof LogicError, message: e instanceof Error ? e.message : String(e) };
      }
    }
    const answer: BlockWritten = error === undefined ? { block: block.index } : { block: block.index, error };
    port.postMessage(answer);
  });
}

serve(workerData as FileWriterInit);

import type { Chunk } from '../core/chunk.js';
import { KernelError, StateError, TaskGraphError } from '../core/errors.js';
import type { Region } from '../core/region.js';
import { formatSubrange } from '../core/subrange.js';
import { CHUNK_ROW } from '../mu/chunkKernel.js';
import type { KernelArg } from '../pxl/arguments.js';
import type { Context } from '../pxl/context.js';
import type { DevicePtr } from '../pxl/devicePtr.js';
import type { Job } from '../pxl/job.js';
import type { KernelMap } from '../pxl/kernelMap.js';
import { NDArray } from '../pxl/ndarray.js';
import { Result } from '../pxl/result.js';
import type { Stream } from '../pxl/stream.js';
import { taskLabel, type TaskRecord } from './task.js';

/** One accessor argument of a launch under debug bounds checking. */
export interface DebugAccessor {
  /** Its position among the kernel's arguments (after the chunk, which is not counted). */
  readonly arg: number;
  /** 1 read, 2 write, 3 read and write. */
  readonly mode: 1 | 2 | 3;
  readonly buffer: number;
  /** How diagnostics name the buffer: `B0 'grid'`. */
  readonly label: string;
  readonly extent: readonly number[];
  /** The region each chunk may touch, in chunk order. */
  readonly chunkRegions: readonly Region[];
}

/**
 * Runs kernel tasks as Map launches on a Job's cores. A task with `n` chunks is one launch of
 * `n` tasks with batchSize 1, so launch task `t` runs chunk `t` (`defineChunkKernel` reads its bounds
 * from a chunk table passed as the first argument), spread over the Job's cores by the usual compact
 * plan: with one chunk per core, one chunk each.
 *
 * Each launch goes through an idle Map of its kernel and chunk count with a stream of its own, so
 * launches of independent tasks are in flight at once (a Map is only reused once its last launch
 * finished). Runs on the main thread only.
 */
export class Launcher {
  readonly #ctx: Context;
  readonly #job: Job;
  readonly #idle = new Map<string, KernelMap[]>();
  readonly #streams: Stream[] = [];
  readonly #tables = new Map<string, Promise<NDArray<'int32'>>>();
  readonly #tablePtrs: DevicePtr[] = [];
  #maps = 0;

  constructor(ctx: Context, job: Job) {
    this.#ctx = ctx;
    this.#job = job;
  }

  /** Maps made so far (each with its own stream): the most launches that were in flight at once. */
  get mapCount(): number {
    return this.#maps;
  }

  /**
   * Launches a kernel task over its chunks and resolves when every chunk has run.
   * @throws (rejects) TaskGraphError naming the task and, for a kernel that threw, the chunk; the
   *   Map's error is the cause.
   */
  async run(task: TaskRecord, args: readonly KernelArg[], debug?: readonly DebugAccessor[]): Promise<void> {
    if (task.chunks.length === 0) return;
    const debugTable = debug === undefined ? undefined : await this.#debugTable(task.chunks, debug);
    const table = debugTable ?? (await this.#table(task.chunks));
    const map = this.#take(task.name, task.chunks.length);
    try {
      if ((await map.execute(table, ...args)) !== Result.Success) throw new StateError('the queue was destroyed before the task could start');
      await map.synchronize();
    } catch (err) {
      throw explainFailure(task, err, debug);
    } finally {
      if (debugTable !== undefined) this.#ctx.memFree(debugTable.ptr);
    }
    this.#idle.get(keyOf(task.name, task.chunks.length))!.push(map);
  }

  /** Releases the Maps' streams and the chunk tables. Call once no launch is in flight. */
  destroy(): void {
    for (const s of this.#streams.splice(0)) this.#ctx.destroyStream(s);
    for (const p of this.#tablePtrs.splice(0)) this.#ctx.memFree(p);
    this.#tables.clear();
    this.#idle.clear();
  }

  #take(kernel: string, chunks: number): KernelMap {
    const key = keyOf(kernel, chunks);
    let idle = this.#idle.get(key);
    if (idle === undefined) this.#idle.set(key, (idle = []));
    const reused = idle.pop();
    if (reused !== undefined) return reused;
    const stream = this.#ctx.createStream(1);
    this.#streams.push(stream);
    this.#maps++;
    return this.#job.buildMap(kernel, chunks).setBatchSize(1).setStream(stream);
  }

  /**
   * The chunk table of these chunks in device memory, made once per distinct chunk list and kept
   * until `destroy()` (a queue's tasks usually share a handful of range shapes; tables are 40 bytes
   * per chunk).
   */
  #table(chunks: readonly Chunk[]): Promise<NDArray<'int32'>> {
    const key = chunks.map((c) => `${c.offset.join(',')}+${c.range.join(',')}`).join(';') + `/${chunks[0]!.globalSize.join(',')}`;
    let table = this.#tables.get(key);
    if (table === undefined) {
      table = this.#makeTable(chunks);
      this.#tables.set(key, table);
    }
    return table;
  }

  /**
   * A chunk table with, after each chunk's bounds, the boxes each checked accessor may touch in that
   * chunk (the layout `defineChunkKernel` reads in debug mode); made per launch, freed after it.
   */
  async #debugTable(chunks: readonly Chunk[], debug: readonly DebugAccessor[]): Promise<NDArray<'int32'>> {
    const extra = chunks.map((_, t) => 1 + debug.reduce((n, a) => n + 8 + 6 * a.chunkRegions[t]!.boxes.length, 0));
    const width = CHUNK_ROW + Math.max(...extra);
    const rows = this.#fillChunks(chunks, width);
    chunks.forEach((_, t) => {
      let at = t * width + CHUNK_ROW;
      rows[at++] = debug.length;
      for (const a of debug) {
        const r = a.chunkRegions[t]!;
        rows.set([a.arg, a.mode, a.buffer, a.extent.length, a.extent[0] ?? 1, a.extent[1] ?? 1, a.extent[2] ?? 1, r.boxes.length], at);
        at += 8;
        for (const b of r.boxes) {
          for (let d = 0; d < 3; d++) {
            rows[at + d] = b.min[d] ?? 0;
            rows[at + 3 + d] = b.max[d] ?? 1;
          }
          at += 6;
        }
      }
    });
    const ptr = this.#ctx.memAlloc(rows.byteLength);
    await this.#ctx.copyToDevice(ptr, rows);
    return new NDArray(ptr, 'int32', [chunks.length, width]);
  }

  #fillChunks(chunks: readonly Chunk[], width: number): Int32Array {
    const rows = new Int32Array(chunks.length * width);
    chunks.forEach((c, t) => {
      const at = t * width;
      rows[at] = c.offset.length;
      for (let d = 0; d < 3; d++) {
        rows[at + 1 + d] = c.offset[d] ?? 0;
        rows[at + 4 + d] = c.range[d] ?? 1;
        rows[at + 7 + d] = c.globalSize[d] ?? 1;
      }
    });
    return rows;
  }

  async #makeTable(chunks: readonly Chunk[]): Promise<NDArray<'int32'>> {
    const rows = this.#fillChunks(chunks, CHUNK_ROW);
    const ptr = this.#ctx.memAlloc(rows.byteLength);
    this.#tablePtrs.push(ptr);
    await this.#ctx.copyToDevice(ptr, rows);
    return new NDArray(ptr, 'int32', [chunks.length, CHUNK_ROW]);
  }
}

function keyOf(kernel: string, chunks: number): string {
  return `${chunks}/${kernel}`;
}

/** A failed launch as a TaskGraphError: the task, the chunk whose kernel threw, the Map's error as cause. */
function explainFailure(task: TaskRecord, err: unknown, debug?: readonly DebugAccessor[]): TaskGraphError {
  const label = taskLabel(task);
  let message = err instanceof Error ? err.message : String(err);
  // Bounds errors name buffers by id on the core; name them as diagnostics do.
  for (const a of debug ?? []) message = message.replace(`of buffer B${a.buffer} at`, `of buffer ${a.label} at`);
  const chunk = err instanceof KernelError ? task.chunks[err.taskIdx] : undefined;
  const where = chunk === undefined ? '' : ` in chunk ${(err as KernelError).taskIdx} (${formatSubrange(chunk)})`;
  return new TaskGraphError(`task ${label} failed${where}: ${message}`, { task: label }, { cause: err });
}

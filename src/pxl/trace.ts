import { writeFile } from '../platform/files.js';
import type { Backend, BatchRecord } from '../backends/backend.js';
import { ArgumentError } from '../core/errors.js';
import { describe } from '../core/validate.js';
import type { ExecuteStatus } from './result.js';

/**
 * Execution traces: what ran where and when. The host records each execute's lifecycle
 * transitions; the cores record each batch's start and end (see the backend). Exported in the
 * Chrome Trace Event format, which Perfetto (ui.perfetto.dev) and chrome://tracing open.
 *
 * Nothing here runs unless tracing is on: a Map asks the Context for its tracer once per execute
 * and gets `undefined` otherwise.
 */

/** One event of the Chrome Trace Event format (the fields pxl writes). */
export interface TraceEvent {
  readonly name: string;
  readonly ph: 'X' | 'b' | 'e' | 'M' | 'i';
  readonly pid: number;
  readonly tid: number;
  readonly ts?: number;
  readonly dur?: number;
  readonly cat?: string;
  readonly id?: number;
  readonly s?: 't' | 'p' | 'g';
  readonly args?: Record<string, unknown>;
}

/** A trace in the Chrome Trace Event format's JSON object form. */
export interface ChromeTrace {
  readonly traceEvents: TraceEvent[];
  readonly displayTimeUnit: 'ms';
  readonly otherData: Record<string, unknown>;
}

const HOST = 1;
const CORES = 2;
const now = (): number => performance.timeOrigin + performance.now();

interface LaunchInfo {
  readonly kernel: string;
  readonly execute: number;
  readonly taskCount: number;
  readonly batchSize: number;
}

/** @internal Where a trace draws an execute's lifecycle: a stream's or a command buffer's track. */
export interface TraceTrack {
  readonly id: number;
  readonly label: string;
}

/** The lifecycle of one execute as a trace sees it. */
export interface TracedExecute {
  /** Records a transition to `state` now. */
  state(state: ExecuteStatus): void;
  /** Records that the execute's launch `launchId` reached the cores. */
  launched(launchId: number, taskCount: number, batchSize: number): void;
  /** Records the end of the execute (Idle, Cancelled or Fail) and collects its batches. */
  end(state: ExecuteStatus): void;
}

/** Collects one Context's trace while tracing is on. @internal */
export class Tracer {
  readonly #backend: Backend;
  readonly #origin = now();
  readonly #events: TraceEvent[] = [];
  readonly #launches = new Map<number, LaunchInfo>();
  readonly #streams = new Map<number, string>();
  readonly #cores = new Set<number>();
  #executes = 0;
  #dropped = 0;

  constructor(backend: Backend) {
    this.#backend = backend;
    backend.setTracing(true);
  }

  /** Starts recording one execute of `kernel` on stream `streamId` (its track in the trace). */
  execute(kernel: string, streamId: number, streamLabel: string): TracedExecute {
    const id = ++this.#executes;
    this.#streams.set(streamId, streamLabel);
    const at = (): number => (now() - this.#origin) * 1000;
    const slice = (ph: 'b' | 'e', name: string, ts: number, args?: Record<string, unknown>): void => {
      this.#events.push({ name, ph, cat: 'execute', id, pid: HOST, tid: streamId, ts, ...(args === undefined ? {} : { args }) });
    };
    let phase: { name: ExecuteStatus; ts: number } | undefined;
    const begun = at();
    slice('b', kernel, begun, { execute: id });
    return {
      state: (state) => {
        const ts = at();
        if (phase !== undefined) slice('e', phase.name, ts);
        slice('b', state, ts);
        phase = { name: state, ts };
      },
      launched: (launchId, taskCount, batchSize) => {
        this.#launches.set(launchId, { kernel, execute: id, taskCount, batchSize });
      },
      end: (state) => {
        const ts = at();
        if (phase !== undefined) slice('e', phase.name, ts);
        slice('e', kernel, ts, { outcome: state });
        this.drain();
      },
    };
  }

  /** Moves the cores' batch records into the trace. */
  drain(): void {
    const { records, dropped } = this.#backend.drainTrace();
    this.#dropped += dropped;
    for (const r of records) this.#batch(r);
  }

  /** Stops recording and returns everything recorded. */
  finish(): ChromeTrace {
    this.drain();
    this.#backend.setTracing(false);
    const meta: TraceEvent[] = [
      { name: 'process_name', ph: 'M', pid: HOST, tid: 0, args: { name: 'pxl host (one track per stream)' } },
      { name: 'process_name', ph: 'M', pid: CORES, tid: 0, args: { name: `MU cores (${this.#backend.name})` } },
    ];
    for (const [id, label] of this.#streams) meta.push({ name: 'thread_name', ph: 'M', pid: HOST, tid: id, args: { name: label } });
    for (const core of [...this.#cores].sort((a, b) => a - b)) {
      meta.push({ name: 'thread_name', ph: 'M', pid: CORES, tid: core, args: { name: `MU core ${core}` } });
      meta.push({ name: 'thread_sort_index', ph: 'M', pid: CORES, tid: core, args: { sort_index: core } });
    }
    return {
      traceEvents: [...meta, ...this.#events],
      displayTimeUnit: 'ms',
      otherData: { producer: 'pxl', origin: new Date(this.#origin).toISOString(), droppedBatchRecords: this.#dropped },
    };
  }

  #batch(r: BatchRecord): void {
    const launch = this.#launches.get(r.launchId);
    const first = launch === undefined ? undefined : r.batch * launch.batchSize;
    this.#cores.add(r.core);
    this.#events.push({
      name: launch?.kernel ?? `launch ${r.launchId}`,
      ph: 'X',
      cat: 'batch',
      pid: CORES,
      tid: r.core,
      ts: (r.start - this.#origin) * 1000,
      dur: Math.max(0, (r.end - r.start) * 1000),
      args: {
        launch: r.launchId,
        batch: r.batch,
        ...(launch === undefined || first === undefined ? {} : { execute: launch.execute, tasks: `[${first}, ${Math.min(first + launch.batchSize, launch.taskCount)})` }),
      },
    });
  }
}

/**
 * Writes a trace as JSON, for Perfetto or chrome://tracing.
 * @throws (rejects) ArgumentError when `path` is not a file name (or file URL), or `trace` is not
 *   a trace from `ctx.stopTrace()`; the file system's error when the file cannot be written.
 * @example await writeTrace('trace.json', ctx.stopTrace());
 */
export async function writeTrace(path: string | URL, trace: ChromeTrace): Promise<void> {
  if (!(path instanceof URL) && (typeof path !== 'string' || path === '')) throw new ArgumentError(`writeTrace: path must be a file name, got ${describe(path)}`);
  if (!Array.isArray((trace as Partial<ChromeTrace> | null)?.traceEvents)) {
    throw new ArgumentError(`writeTrace: trace must be a trace from ctx.stopTrace() (an object with a traceEvents array), got ${describe(trace)}`);
  }
  await writeFile(path, JSON.stringify(trace));
}

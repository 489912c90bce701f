/**
 * The `out`, `memory` and `resume` options of pdist, cdist and l2Kernel: a result streamed into an
 * `.npy` file through {@link NpyFileSink}, what the call then resolves to, and the up-front checks
 * that the result fits (on disk for a file, in memory otherwise).
 */
import { basename, dirname, join, resolve } from 'node:path';
import {
  checkMemory,
  hashParts,
  npyFileLayout,
  NpyFileSink,
  type FileLayout,
  type FloatDType,
  type WayOut,
} from '../blocks/index.js';
import { CancelledError, OptionError } from '../core/errors.js';
import { sumsInFloat32, type PcfOp } from './integrate.js';
import type { PcfSet } from './pcfSet.js';

/** Default of the `memory` option: 512 MiB for block buffers and writes in flight. */
export const DEFAULT_MEMORY = 512 * 2 ** 20;

/**
 * What pdist, cdist and l2Kernel resolve to when given `out`: a description of the file written,
 * not the matrix (which may be far larger than memory). Read it with
 * `numpy.load(path, mmap_mode='r')`.
 */
export interface ResultFile {
  /** The file written, as an absolute path. */
  readonly path: string;
  /** The array's shape: `[n, n]` (square), `[n * (n - 1) / 2]` (condensed), `[...X.shape, ...Y.shape]` (cdist). */
  readonly shape: readonly number[];
  readonly dtype: FloatDType;
  readonly layout: FileLayout;
  /** Size of the file in bytes, header included. */
  readonly bytes: number;
  /** Blocks the result was cut into, and how many of them a resumed journal already held. */
  readonly blocks: number;
  readonly blocksResumed: number;
}

/** What one call writes: the operation's name, its inputs, operation and result layout. */
export interface ResultFileRequest {
  readonly fnName: 'pdist' | 'cdist' | 'l2Kernel';
  readonly rows: PcfSet;
  readonly cols: PcfSet;
  readonly op: PcfOp;
  readonly layout: FileLayout;
  readonly dtype: FloatDType;
  readonly out: string;
  readonly resume: boolean;
  readonly memory: number;
  /** Whether the file may be written front to back (NpyFileSinkOptions.fileOrder); false for a cluster's coordinator. */
  readonly fileOrder: boolean;
}

function opText(op: PcfOp): string {
  return op.kind === 'lp' ? `lp p=${op.p}` : op.kind;
}

function subject(r: Pick<ResultFileRequest, 'fnName' | 'rows' | 'cols'>): string {
  return r.fnName === 'cdist' ? `cdist of ${r.rows.count} x ${r.cols.count} PCFs` : `${r.fnName} of ${r.rows.count} PCFs`;
}

/** Smaller forms of the same result, offered when it does not fit. */
function smallerForms(r: Pick<ResultFileRequest, 'fnName' | 'rows' | 'dtype' | 'layout'>, bytesOf: (layout: FileLayout, dtype: FloatDType) => number): WayOut[] {
  const ways: WayOut[] = [];
  if (r.fnName === 'pdist' && r.layout === 'square') ways.push({ how: "--layout condensed (layout: 'condensed')", bytes: bytesOf('condensed', r.dtype) });
  if (r.dtype === 'float64') ways.push({ how: "--dtype float32 (dtype: 'float32')", bytes: bytesOf(r.layout, 'float32') });
  // A quarter of the file, which may fit where either half does not.
  if (ways.length === 2) ways.push({ how: 'both', bytes: bytesOf('condensed', 'float32') });
  return ways;
}

/**
 * Opens the sink for a call's `out`: refuses a name that is not `.npy`, cleans up or resumes what a
 * dead process left, checks free disk space, and creates the partial file.
 *
 * @throws (rejects) OptionError for an `out` not ending in `.npy`; CancelledError when `signal`
 *   has aborted; InputFormatError from {@link NpyFileSink.open}.
 */
export async function openResultFile(r: ResultFileRequest, signal?: AbortSignal): Promise<NpyFileSink> {
  checkOut(r.out, 'the pairwise computation', signal);
  const shape = r.layout === 'dense' ? [...r.rows.shape, ...r.cols.shape] : undefined;
  const layout = npyFileLayout(r.layout, r.dtype, r.rows.count, r.cols.count, shape);
  const parts = (set: PcfSet) => [set.offsets, set.times, set.values, JSON.stringify(set.shape)];
  const inputs = await hashParts(r.cols === r.rows ? parts(r.rows) : [...parts(r.rows), ...parts(r.cols)]);
  // float32 results were computed in float64 and rounded before this version: naming the
  // arithmetic keeps a file begun that way from being finished the other way (and an inner
  // product begun before its underflowing last products were computed in float64).
  const arithmetic = r.dtype !== 'float32' || !sumsInFloat32(r.op) ? r.dtype : r.op.kind === 'l2inner' ? 'float32 computed in float32, underflowing last products in float64' : 'float32 computed in float32';
  const options = `${r.fnName} ${opText(r.op)}, ${arithmetic}, ${r.layout} layout of shape [${layout.shape.join(', ')}]`;
  const bytesOf = (kind: FileLayout, dtype: FloatDType) => npyFileLayout(kind, dtype, r.rows.count, r.cols.count, shape).bytes;
  return NpyFileSink.open({
    target: resolve(r.out),
    layout,
    identity: { inputs, options },
    resume: r.resume,
    queueBytes: Math.floor(r.memory / 2),
    fileOrder: r.fileOrder,
    what: `the ${r.layout} ${r.dtype} result of ${subject(r)}`,
    waysOut: [...smallerForms(r, bytesOf), { how: '-o/out naming a file on a disk with more free space' }],
  });
}

/**
 * What every `out` is checked for before its sink opens: a `.npy` name, and a signal not yet
 * aborted (`computation` names what would have run, for the CancelledError).
 * @throws OptionError for another file name; CancelledError when `signal` has aborted.
 */
export function checkOut(out: string, computation: string, signal: AbortSignal | undefined): void {
  if (typeof out !== 'string' || !out.toLowerCase().endsWith('.npy')) throw new OptionError(`out must name a .npy file (NumPy's format, written block by block), got '${String(out)}'`);
  // '.npy' alone would write a hidden file of that name, as the CLI's -o would refuse it.
  if (basename(out).length === 4) throw new OptionError(`out '${out}' has no name before its .npy extension; name the file, e.g. '${join(dirname(out), 'distances.npy')}'`);
  if (signal?.aborted === true) throw new CancelledError(`${computation} was cancelled before it started`, { cause: signal.reason });
}

/**
 * Runs `compute` into `sink` and moves the finished file into place; on any failure or
 * cancellation the partial file and its journal are removed and the error is rethrown.
 */
export async function computeToFile(sink: NpyFileSink, target: string, compute: () => Promise<void>): Promise<ResultFile> {
  try {
    await compute();
    await sink.commit();
  } catch (error) {
    await sink.abort();
    throw error;
  }
  const { layout } = sink;
  const blocks = sink.blocksTotal;
  return Object.freeze({
    path: resolve(target),
    shape: layout.shape,
    dtype: layout.dtype,
    layout: layout.kind,
    bytes: layout.bytes,
    blocks,
    blocksResumed: sink.resumed?.done.size ?? 0,
  });
}

/**
 * Refuses, before anything is allocated, a result held in memory that this process cannot hold:
 * `elements` of `dtype`, plus block buffers (at most the result's size, within `memory`).
 *
 * @throws OutOfMemoryError giving the bytes needed and the ways out: a file (`-o` / `out`), float32,
 *   a smaller memory budget.
 */
export function checkResultFitsMemory(fnName: ResultFileRequest['fnName'], rows: PcfSet, cols: PcfSet, elements: number, dtype: FloatDType, memory: number): void {
  const size = dtype === 'float64' ? 8 : 4;
  const result = elements * size;
  const ways: WayOut[] = [{ how: "-o FILE.npy (out: 'FILE.npy') to stream the result to disk instead", elements: 0 }];
  if (dtype === 'float64') ways.push({ how: "--dtype float32 (dtype: 'float32')", bytes: elements * 4 });
  ways.push({ how: `--memory (memory) below the ${memory} bytes the run's buffers may take` });
  checkMemory(result + Math.min(memory, result), elements, `the ${dtype} result of ${subject({ fnName, rows, cols })}`, ways);
}

import { ArgumentError, StateError } from '../core/errors.js';
import type { KernelArg } from '../pxl/arguments.js';
import type { Context } from '../pxl/context.js';
import { DevicePtr } from '../pxl/devicePtr.js';
import type { Job } from '../pxl/job.js';
import type { KernelMap } from '../pxl/kernelMap.js';
import { checkNDRange, type NDRange } from '../core/ndRange.js';
import { newTrackId } from '../pxl/stream.js';
import type { TraceTrack } from '../pxl/trace.js';
import type { Command, CommandCallback } from './command.js';
import { commandGraph, type CommandGraph } from './commandOrder.js';
import { runCommands, type CommandFailure } from './commandRunner.js';
import { checkCommandCallback, checkContextAndJob, checkKernelName } from './muxArgs.js';
import { describe } from '../core/validate.js';

export type { Command, CommandCallback } from './command.js';

/** Where a command buffer stands: recording, finalized (dispatchable), or dispatched and not yet complete. */
export type CommandBufferState = 'recording' | 'finalized' | 'dispatched';

/**
 * A recorded sequence of memory commands, kernel launches and host callbacks, dispatched as one
 * unit with `dispatch()`. Record, `finalize()`, dispatch (again and again once each dispatch has
 * completed), and `reset()` to record anew.
 *
 * Ordering contract: commands of one buffer behave as if run in recording order. Commands that
 * touch overlapping memory, at least one of them writing, run in recording order; the others may
 * overlap. A kernel launch touches every device pointer and NDArray it is given (from the pointer
 * to the end of its allocation), and a callback is a barrier. Dependent kernel launches are handed
 * to the cores back to back, and the cores order them, so a chain of kernels runs without a host
 * round trip between them.
 *
 * Validation: every recording method checks its arguments before touching the buffer; a rejected
 * call (ArgumentError, OptionError, KernelNotFoundError, StateError) leaves the buffer unchanged.
 *
 * @example
 * ```ts
 * const cb = new CommandBuffer(ctx, job);
 * cb.write(ptr, 0, new Float32Array([1, 2, 3, 4]))
 *   .launch('scale', { global: [4], local: [2] }, ptr)
 *   .read(ptr, 0, out)
 *   .finalize();
 * const fence = new Fence();
 * dispatch(cb, { fence });
 * await fence.wait();
 * ```
 */
export class CommandBuffer {
  readonly #ctx: Context;
  readonly #job: Job | undefined;
  #commands: Command[] = [];
  #state: CommandBufferState = 'recording';
  /** Computed by finalize(): which commands wait for which. */
  #graph: CommandGraph = EMPTY_GRAPH;
  /** Where execution traces draw this buffer's launches. */
  readonly #track: TraceTrack;

  /**
   * `job` runs the buffer's kernel launches; a buffer without one records memory commands and callbacks only.
   * @throws ArgumentError when `context` is not a Context or `job` not a Job; StateError for a Job of another Context.
   */
  constructor(context: Context, job?: Job) {
    checkContextAndJob('CommandBuffer', context, job);
    this.#ctx = context;
    this.#job = job;
    const id = newTrackId();
    this.#track = { id, label: `command buffer ${id}` };
  }

  /** @internal The Context the buffer records for. */
  get context(): Context {
    return this.#ctx;
  }

  get state(): CommandBufferState {
    return this.#state;
  }

  /** The recorded commands, in order. */
  get commands(): readonly Command[] {
    return [...this.#commands];
  }

  /**
   * Records a write of `data`'s bytes to `dst` + `offset`. The bytes are copied when recorded, so
   * later changes to `data` do not reach the device.
   * @throws ArgumentError for a region outside the allocation or a foreign/freed pointer.
   */
  write(dst: DevicePtr, offset: number, data: ArrayBufferView): this {
    this.#recording('write');
    const bytes = hostBytes('write', data);
    checkRegion(this.#ctx, 'write', dst, offset, bytes.byteLength);
    return this.#push({ kind: 'write', dst, offset, size: bytes.byteLength, data: bytes.slice() });
  }

  /**
   * Records a read of `dst.byteLength` bytes at `src` + `offset` into host memory `dst`, which is
   * written when the command runs.
   * @throws ArgumentError for a region outside the allocation or a foreign/freed pointer.
   */
  read(src: DevicePtr, offset: number, dst: ArrayBufferView): this {
    this.#recording('read');
    const bytes = hostBytes('read', dst);
    checkRegion(this.#ctx, 'read', src, offset, bytes.byteLength);
    return this.#push({ kind: 'read', src, offset, size: bytes.byteLength, dst: bytes });
  }

  /**
   * Records a device-to-device copy of `size` bytes. Overlapping regions copy as if through a
   * temporary buffer.
   * @throws ArgumentError for either region outside its allocation.
   */
  copy(src: DevicePtr, srcOffset: number, dst: DevicePtr, dstOffset: number, size: number): this {
    this.#recording('copy');
    checkRegion(this.#ctx, 'copy source', src, srcOffset, size);
    checkRegion(this.#ctx, 'copy destination', dst, dstOffset, size);
    return this.#push({ kind: 'copy', src, srcOffset, dst, dstOffset, size });
  }

  /**
   * Records a fill of `size` bytes at `dst` + `offset` with `pattern` repeated (for example a
   * `Float32Array.of(1)`); `size` must be a multiple of the pattern's byte length.
   * @throws ArgumentError for a bad region, an empty pattern or a size that is not a multiple of it.
   */
  fill(dst: DevicePtr, offset: number, size: number, pattern: ArrayBufferView): this {
    this.#recording('fill');
    const bytes = hostBytes('fill', pattern);
    checkRegion(this.#ctx, 'fill', dst, offset, size);
    if (bytes.byteLength === 0 || size % bytes.byteLength !== 0) {
      throw new ArgumentError(`fill: size ${size} must be a multiple of the pattern's ${bytes.byteLength} bytes (and the pattern must not be empty)`);
    }
    return this.#push({ kind: 'fill', dst, offset, size, pattern: bytes.slice() });
  }

  /**
   * Records a launch of kernel `kernel` over an ND-range. A task or batch kernel runs once per
   * work-item, flattened row-major (task index `i` is item `(i % g0, ⌊i / g0⌋ % g1, ⌊i / (g0·g1)⌋)`);
   * a work-group kernel (`defineGroupKernel`) runs its work-items group by group, with `local` as the
   * work-group size (see docs/work-groups.md). The launch touches every device pointer and NDArray
   * it is given, for the ordering of the buffer's commands.
   * @throws StateError when the buffer has no Job; ArgumentError for a kernel name that is not a
   *   string, or arguments the kernel cannot take; OptionError for a bad range; KernelNotFoundError
   *   for a kernel the Job's modules do not export.
   * @example
   * ```ts
   * cb.launch('block_sum', { global: [4096], local: [64] }, input, sums);
   * ```
   */
  launch(kernel: string, range: NDRange, ...args: KernelArg[]): this {
    this.#recording('launch');
    if (this.#job === undefined) throw new StateError('launch: this command buffer has no Job; create it with new CommandBuffer(ctx, job)');
    checkKernelName('launch', kernel);
    // The range's shape here; how many tasks it may make depends on the kernel's form (buildMap).
    const { global, local, taskCount } = checkNDRange(range, 'launch');
    const map = launchMap(this.#job, kernel, global, local);
    // Refused now, as execute() refuses them, rather than failing the dispatch later.
    map.checkLaunchArgs(args);
    return this.#push({ kind: 'launch', kernel, global, local, taskCount, args: [...args], map });
  }

  /**
   * Records a host callback; a callback that throws (or rejects) fails the dispatch.
   * @throws ArgumentError when `fn` is not a function.
   */
  callback(fn: CommandCallback): this {
    this.#recording('callback');
    checkCommandCallback('callback', fn);
    return this.#push({ kind: 'callback', fn });
  }

  /** Ends recording so the buffer can be dispatched. A second call is harmless. */
  finalize(): this {
    if (this.#state !== 'recording') return this;
    this.#graph = commandGraph(this.#commands);
    this.#state = 'finalized';
    return this;
  }

  /**
   * Drops every command and returns to recording.
   * @throws StateError while a dispatch of this buffer has not completed.
   */
  reset(): this {
    if (this.#state === 'dispatched') throw new StateError('reset: this command buffer is dispatched and has not completed; wait on its fence first');
    this.#commands = [];
    this.#graph = EMPTY_GRAPH;
    this.#state = 'recording';
    return this;
  }

  /** @internal Marks the buffer dispatched. @throws StateError unless it is finalized and idle. */
  claim(): void {
    if (this.#state === 'recording') throw new StateError('dispatch: the command buffer is still recording; call finalize() first');
    if (this.#state === 'dispatched') throw new StateError('dispatch: the command buffer is already dispatched and has not completed; dispatch it again once its fence completes');
    this.#state = 'dispatched';
  }

  /** @internal Returns a dispatched buffer to finalized. */
  release(): void {
    this.#state = 'finalized';
  }

  /**
   * @internal Runs the commands, overlapping those that do not depend on each other. Resolves
   * with undefined, or with the lowest-indexed command that failed (no command starts after a
   * failure; those that depend on it do not run).
   */
  run(): Promise<CommandFailure | undefined> {
    return runCommands(this.#ctx, this.#commands, this.#graph, this.#track);
  }

  #recording(op: string): void {
    if (this.#state !== 'recording') throw new StateError(`${op}: the command buffer is finalized; call reset() to record again`);
  }

  #push(command: Command): this {
    this.#commands.push(command);
    return this;
  }
}

const EMPTY_GRAPH: CommandGraph = { before: [], after: [] };

/**
 * Command-buffer launches of one Job share a Map per kernel and range (command buffers launch
 * outside a Map's stream and lifecycle, so sharing is safe): cores keep a Map's bound arguments
 * between launches, so many buffers launching one kernel bind it once instead of once each. The
 * most recently used LAUNCH_MAPS Maps per Job are kept.
 */
const LAUNCH_MAPS = 256;
const launchMaps = new WeakMap<Job, Map<string, KernelMap>>();

function launchMap(job: Job, kernel: string, global: readonly number[], local: readonly number[]): KernelMap {
  let maps = launchMaps.get(job);
  if (maps === undefined) launchMaps.set(job, (maps = new Map()));
  const key = `${kernel}/${global.join('x')}/${local.join('x')}`;
  const map = maps.get(key) ?? job.buildMap(kernel, { global, local });
  maps.delete(key);
  maps.set(key, map);
  if (maps.size > LAUNCH_MAPS) maps.delete(maps.keys().next().value!);
  return map;
}

function hostBytes(op: string, x: ArrayBufferView): Uint8Array {
  if (!ArrayBuffer.isView(x)) throw new ArgumentError(`${op}: host memory must be a TypedArray or DataView, got ${describe(x)}`);
  return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
}

function checkRegion(ctx: Context, op: string, ptr: DevicePtr, offset: number, size: number): void {
  if (!(ptr instanceof DevicePtr)) throw new ArgumentError(`${op}: the device pointer must be a DevicePtr from ctx.memAlloc(), got ${describe(ptr)}`);
  if (ptr.owner !== ctx) throw new ArgumentError(`${op}: the device pointer belongs to another Context`);
  if (ptr.freed) throw new ArgumentError(`${op}: the device pointer was freed with memFree`);
  if (!Number.isSafeInteger(offset) || offset < 0) throw new ArgumentError(`${op}: offset must be an integer ≥ 0, got ${describe(offset)}`);
  if (!Number.isSafeInteger(size) || size < 1) throw new ArgumentError(`${op}: size must be an integer ≥ 1, got ${describe(size)}`);
  if (offset + size > ptr.byteLength) {
    throw new ArgumentError(`${op}: region [${offset}, ${offset + size}) does not fit in the ${ptr.byteLength} bytes from the pointer to the end of its allocation`);
  }
}

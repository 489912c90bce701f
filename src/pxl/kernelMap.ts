import type { Backend, GroupGeometry, KernelInfo, LaunchArg, LaunchHandle, LaunchRequest } from '../backends/backend.js';
import { ArgumentError, OptionError, PxlError, StateError, UnsupportedError } from '../core/errors.js';
import { checkNDRange, type NDRange } from '../core/ndRange.js';
import { checkFunction, checkInteger, checkOneOf, describe } from '../core/validate.js';
import type { Topology } from '../core/topology.js';
import { toLaunchArgs, type KernelArg } from './arguments.js';
import { checkArgumentCount } from './kernelModule.js';
import { batchCountOf, DefaultBatchSize, LocalityMode, MaxTaskCount, planLaunch, type CorePlan, type LaunchPlan } from './launchPlan.js';
import { newRun, type Run } from './mapRun.js';
import { Result, type ExecuteStatus, type Progress } from './result.js';
import { Stream } from './stream.js';
import type { TracedExecute, Tracer, TraceTrack } from './trace.js';

/** @internal What a Map needs from its Job. */
export interface MapSite {
  readonly owner: object;
  readonly backend: Backend;
  readonly topology: Topology;
  subs(): readonly number[];
  defaultStream(): Stream;
  tracer(): Tracer | undefined;
  alive(): void;
}

let nextMapId = 1;
let nextLaunchId = 1;

/**
 * A Map: one kernel bound to a taskCount, launched over the MU cores of its Job with `execute`.
 * Built by `Job.buildMap`. Executes go through the Map's stream (its Job's default stream unless
 * `setStream` binds another) and run in enqueue order.
 *
 * Lifecycle per execute: HostInit → DeviceInit → Request → Waiting → DeviceFinalize →
 * HostFinalize → Idle, or Fail (terminal) or Cancelled (reusable).
 */
export class KernelMap {
  readonly kernelName: string;
  /**
   * Tasks per launch. For a Map built over an ND-range: the range's work-items for task and batch
   * kernels, its work-groups for a group kernel.
   */
  readonly taskCount: number;
  /** The ND-range the Map was built over (local filled in, frozen); undefined for a plain taskCount. */
  readonly range: NDRange | undefined;
  readonly #site: MapSite;
  /** A group kernel's hidden first launch argument: the range's geometry, read by the core's group runner. */
  readonly #geometry: LaunchArg | undefined;
  readonly #module: number;
  readonly #kernel: number;
  readonly #info: KernelInfo;
  readonly #form: KernelInfo['form'];
  readonly #id = nextMapId++;
  readonly #token = {};
  #batchSize = DefaultBatchSize;
  #locality: LocalityMode = 'compact';
  #stream: Stream | undefined;
  #status: ExecuteStatus = 'Idle';
  /** Executes not yet settled (waiting for room, queued on a stream, or running), oldest first. */
  #runs: Run[] = [];
  #handle: LaunchHandle | undefined;
  #target = 0;
  #cachedPlan: { key: string; plan: LaunchPlan } | undefined;
  #error: PxlError | undefined;
  #onComplete: (() => void) | undefined;
  #onMessage: ((message: unknown) => void) | undefined;
  #onError: ((error: PxlError) => void) | undefined;

  /** @internal */
  constructor(site: MapSite, kernelName: string, module: number, kernel: number, info: KernelInfo, taskCount: number | NDRange) {
    this.#site = site;
    this.kernelName = kernelName;
    this.#module = module;
    this.#kernel = kernel;
    this.#info = info;
    this.#form = info.form;
    if (info.async === true) {
      throw new UnsupportedError(`kernel '${kernelName}' is an async function: MU cores run kernels synchronously and cannot await them, so its work and failures would escape the launch; make it a plain (synchronous) function and do asynchronous work on the host`);
    }
    if (typeof taskCount === 'number') {
      if (info.form === 'group') throw new OptionError(`kernel '${kernelName}' is a work-group kernel: build its Map with job.buildMap('${kernelName}', { global: [...], local: [...] })`);
      this.taskCount = checkInteger('taskCount', taskCount, 0, MaxTaskCount);
      this.range = undefined;
      this.#geometry = undefined;
    } else {
      const r = checkNDRange(taskCount, 'buildMap');
      // A task runs one work-item, or a whole work-group of a group kernel: MaxTaskCount bounds those.
      if (info.form === 'group' && r.groupCount > MaxTaskCount) {
        throw new OptionError(`buildMap: the range has ${r.groupCount} work-groups; at most ${MaxTaskCount} (MaxTaskCount) are supported, one task per work-group: use larger work-groups`);
      }
      if (info.form !== 'group' && r.taskCount > MaxTaskCount) {
        throw new OptionError(`buildMap: the range has ${r.taskCount} work-items; at most ${MaxTaskCount} (MaxTaskCount) are supported, one task per work-item`);
      }
      this.range = Object.freeze({ global: r.global, local: r.local });
      this.taskCount = info.form === 'group' ? r.groupCount : r.taskCount;
      const [g0 = 1, g1 = 1, g2 = 1] = r.global;
      const [l0 = 1, l1 = 1, l2 = 1] = r.local;
      const geometry: GroupGeometry = { dims: r.global.length, g0, g1, g2, l0, l1, l2 };
      this.#geometry = info.form === 'group' ? { kind: 'constant', value: { ...geometry } } : undefined;
    }
  }

  /** Unique per process; the Map that error messages (CoreDiedError) and traces name. */
  get id(): number {
    return this.#id;
  }

  get batchSize(): number {
    return this.#batchSize;
  }

  get localityMode(): LocalityMode {
    return this.#locality;
  }

  /** The failure that put this Map in the Fail state, if any. */
  get error(): PxlError | undefined {
    return this.#error;
  }

  /** Tasks each MU core runs back to back per batch. Default 16. */
  setBatchSize(batchSize: number): this {
    this.#batchSize = checkInteger('batchSize', batchSize, 1, MaxTaskCount);
    return this;
  }

  /** CompactMode (default) fills a Sub's clusters first; SpreadMode deals batches across Subs. */
  setLocalityMode(mode: LocalityMode): this {
    this.#locality = checkOneOf('localityMode', mode, [LocalityMode.CompactMode, LocalityMode.SpreadMode]);
    return this;
  }

  /**
   * Binds a stream; with no argument, returns to the Job's default stream.
   * @throws ArgumentError when `stream` is neither a Stream nor left out; StateError for a stream of another Context.
   */
  setStream(stream?: Stream): this {
    if (stream !== undefined && !(stream instanceof Stream)) {
      throw new ArgumentError(`setStream: stream must be a Stream from ctx.createStream(), or left out for the Job's default stream, got ${describe(stream)}`);
    }
    if (stream !== undefined && stream.owner !== this.#site.owner) throw new StateError('setStream: the stream belongs to another Context');
    this.#stream = stream;
    return this;
  }

  get stream(): Stream {
    return this.#stream ?? this.#site.defaultStream();
  }

  /** Called on the main thread after each launch that completes; `undefined` removes it. @throws OptionError for a non-function. */
  setCompletionCallback(callback: (() => void) | undefined): this {
    if (callback !== undefined) checkFunction('setCompletionCallback: callback', callback);
    this.#onComplete = callback;
    return this;
  }

  /** Receives every value a kernel sends with `mu.message()`, on the main thread. @throws OptionError for a non-function. */
  setMessageCallback(callback: ((message: unknown) => void) | undefined): this {
    if (callback !== undefined) checkFunction('setMessageCallback: callback', callback);
    this.#onMessage = callback;
    return this;
  }

  /** Called with the error when the Map reaches Fail; `undefined` removes it. @throws OptionError for a non-function. */
  setErrorCallback(callback: ((error: PxlError) => void) | undefined): this {
    if (callback !== undefined) checkFunction('setErrorCallback: callback', callback);
    this.#onError = callback;
    return this;
  }

  getExecuteStatus(): ExecuteStatus {
    return this.#status;
  }

  /** Batches of the launch in progress (or the last one). */
  getProgress(): Progress {
    const p = this.#handle?.progress() ?? { issued: 0, done: 0 };
    return { target: this.#target, issued: p.issued, done: p.done };
  }

  /**
   * Enqueues one launch with these kernel arguments. Resolves `Result.Success` once the stream has
   * accepted it (at once while the stream has room), or `Result.Failure` if the stream is
   * destroyed, or `cancel()` withdraws this execute, while this call waits for room.
   *
   * @throws (rejects) ArgumentError for arguments a kernel cannot take; StateError after Fail.
   */
  async execute(...args: KernelArg[]): Promise<Result> {
    this.#site.alive();
    if (this.#status === 'Fail') {
      throw new StateError(`Map '${this.kernelName}' failed (${this.#error?.message ?? 'unknown error'}); a failed Map cannot run again: build a new one with job.buildMap`, { cause: this.#error });
    }
    // Arguments that cannot travel in a launch reject here; found inside the launch, they would
    // fail the Map (terminal) after this execute had already resolved Success.
    const launchArgs = this.#launchArgs(args);
    const stream = this.stream;
    const run = newRun(launchArgs, this.#site.tracer()?.execute(this.kernelName, stream.id, stream.label));
    run.trace?.state('HostInit');
    const before = this.#status;
    if (this.#runs.length === 0) this.#status = 'HostInit';
    this.#runs.push(run);
    run.stream = stream;
    run.op = () => this.#run(run);
    if (await stream.enqueue(run.op, run.abort.signal)) return Result.Success;
    // Refused: the stream was destroyed, or cancel() withdrew the execute, while it waited for room.
    // If it was the Map's only work, nothing ran since it set HostInit (a run would have moved the
    // state on), so the Map returns to where it was.
    if (run.phase === 'queued') {
      if (this.#runs.length === 1 && this.#status === 'HostInit') this.#status = before;
      this.#settle(run, 'Cancelled');
    }
    return Result.Failure;
  }

  /**
   * Resolves when every execute issued so far has settled, and the Map is Idle or Cancelled.
   * @throws (rejects) the Map's failure (KernelError, CoreDiedError) when it reached Fail.
   */
  async synchronize(): Promise<void> {
    if (this.#runs.length > 0) await Promise.all(this.#runs.map((r) => r.settled));
    if (this.#status === 'Fail' && this.#error !== undefined) throw this.#error;
  }

  /**
   * Cancels every execute of this Map that has not settled: one waiting for room in its stream
   * (that execute resolves `Result.Failure`), queued on a stream, waiting for a launch slot, or
   * running (batches in flight drain; no other batch starts). Resolves once all of them have
   * settled, without waiting for any other Map's launches; after that no task of them starts. The
   * Map is then Cancelled (or still Fail) and stays reusable. Executes issued after this call are
   * not affected.
   */
  async cancel(): Promise<void> {
    const runs = [...this.#runs];
    for (const run of runs) {
      run.abort.abort();
      run.handle?.cancel();
      if (run.phase === 'queued') {
        if (this.#status !== 'Fail' && !this.#runs.some((r) => r.phase === 'started')) this.#status = 'Cancelled';
        this.#settle(run, this.#status === 'Fail' ? 'Fail' : 'Cancelled');
      }
    }
    await Promise.all(runs.map((r) => r.settled));
  }

  async #run(run: Run): Promise<void> {
    // Cancelled (or skipped by the Map's failure) while it was queued: already settled.
    if (run.phase !== 'queued') return;
    run.phase = 'started';
    const step = (state: ExecuteStatus): void => {
      // A launch of this Map on another stream may have failed it meanwhile: Fail is terminal.
      if (this.#status === 'Fail') return;
      this.#status = state;
      run.trace?.state(state);
    };
    try {
      // A launch queued before its Job or Context was destroyed has no cores left to run on: it
      // fails with the StateError that says so (planning it over no Subs would fail obscurely).
      this.#site.alive();
      step('DeviceInit');
      // Progress belongs to this launch from here on, not to the previous one.
      this.#handle = undefined;
      this.#target = batchCountOf(this.taskCount, this.#batchSize);
      step('Request');
      const launchId = nextLaunchId++;
      run.trace?.launched(launchId, this.taskCount, this.#batchSize);
      // The backend watches the signal from here on: a cancel() while the launch waits for a slot
      // withdraws it before any core can see it.
      const handle = await this.#site.backend.launch(this.#request(launchId, run.args, undefined, run.abort.signal));
      this.#handle = run.handle = handle;
      // For a backend that does not watch the signal: a cancel() that came while it accepted the launch.
      if (run.abort.signal.aborted) handle.cancel();
      step('Waiting');
      const outcome = await handle.done;
      // Device memory is the host's memory on this backend, so DeviceFinalize has nothing to copy;
      // HostFinalize is where callbacks run, as in PXL, so a callback sees that state.
      step('DeviceFinalize');
      step('HostFinalize');
      if (outcome.kind === 'failed') {
        this.#fail(outcome.error);
      } else if (outcome.kind === 'cancelled' || run.abort.signal.aborted) {
        if (this.#status !== 'Fail') this.#status = 'Cancelled';
      } else if (this.#status !== 'Fail') {
        try {
          this.#onComplete?.();
        } catch (err) {
          // The launch itself succeeded; a faulty callback must not turn it into a failure.
          process.emitWarning(`completion callback of Map '${this.kernelName}' threw: ${String(err)}`);
        }
        this.#status = 'Idle';
      }
    } catch (err) {
      this.#fail(err instanceof PxlError ? err : new StateError(`launch of '${this.kernelName}' failed: ${String(err)}`, { cause: err }));
    } finally {
      this.#settle(run, run.abort.signal.aborted && this.#status !== 'Fail' ? 'Cancelled' : this.#status);
    }
  }

  /**
   * @internal One launch outside the Map's stream and lifecycle, for command buffers. The backend
   * starts it once `after` (a launch of this Context still running, or finished) has finished,
   * without a host round trip where it can, and does not run it if `after` failed.
   * @throws (rejects) ArgumentError for arguments the kernel cannot take.
   */
  async launchNow(args: readonly KernelArg[], after: LaunchHandle | undefined, track: TraceTrack): Promise<LaunchHandle> {
    this.#site.alive();
    const launchArgs = this.#launchArgs(args);
    const trace = this.#site.tracer()?.execute(this.kernelName, track.id, track.label);
    trace?.state('Request');
    const launchId = nextLaunchId++;
    trace?.launched(launchId, this.taskCount, this.#batchSize);
    const handle = await this.#site.backend.launch(this.#request(launchId, launchArgs, after));
    if (trace !== undefined) {
      trace.state('Waiting');
      void handle.done.then((o) => trace.end(o.kind === 'completed' ? 'Idle' : o.kind === 'failed' ? 'Fail' : 'Cancelled'));
    }
    return handle;
  }

  /** @internal Checks launch arguments as `execute()` does, for command buffers, which record launches before they run. */
  checkLaunchArgs(args: readonly KernelArg[]): void {
    this.#launchArgs(args);
  }

  /**
   * The request of one launch. Its cores are planned when the backend first reads them: CPU cores
   * need the plan, while a GPU, whose topology has a core per batch, never reads it, and a plan of
   * 2^20 cores cost about 100 ms and tens of MB of objects kept with the Map.
   */
  #request(launchId: number, args: readonly LaunchArg[], after?: LaunchHandle, signal?: AbortSignal): LaunchRequest {
    let cores: readonly CorePlan[] | undefined;
    const plan = (): readonly CorePlan[] => (cores ??= this.#plan().cores);
    return {
      launchId,
      module: this.#module,
      kernel: this.#kernel,
      kernelName: this.kernelName,
      mapId: this.#id,
      mapToken: this.#token,
      taskCount: this.taskCount,
      batchSize: this.#batchSize,
      args,
      get cores() {
        return plan();
      },
      onMessage: (m) => this.#onMessage?.(m),
      ...(after === undefined ? {} : { after }),
      ...(signal === undefined ? {} : { signal }),
    };
  }

  /**
   * Validates one launch's arguments and adds a group kernel's hidden geometry argument in front.
   * The backend checks the user's arguments alone first, so its messages number them as the user did.
   */
  #launchArgs(args: readonly KernelArg[]): LaunchArg[] {
    const kernel = { module: this.#module, kernel: this.#kernel };
    const userArgs = toLaunchArgs(args, this.#site.owner, this.#form, this.taskCount);
    this.#site.backend.checkArgs(userArgs, kernel);
    // After the checks of each argument, whose messages say more about an argument that is wrong.
    checkArgumentCount(this.kernelName, this.#info, args.length);
    if (this.#geometry === undefined) return userArgs;
    const launchArgs = [this.#geometry, ...userArgs];
    this.#site.backend.checkArgs(launchArgs, kernel);
    return launchArgs;
  }

  /** The launch plan, recomputed only when batch size, locality or the Job's Subs changed. */
  #plan(): LaunchPlan {
    const subs = this.#site.subs();
    const key = `${this.#batchSize}/${this.#locality}/${subs.join(',')}`;
    if (this.#cachedPlan?.key !== key) {
      this.#cachedPlan = { key, plan: planLaunch({ taskCount: this.taskCount, batchSize: this.#batchSize, locality: this.#locality, topology: this.#site.topology, subs }) };
    }
    return this.#cachedPlan.plan;
  }

  #fail(error: PxlError): void {
    this.#status = 'Fail';
    this.#error ??= error;
    // Fail is terminal: nothing queued behind the failing launch runs, and a launch of this Map
    // running on another stream stops at its next batch boundary.
    for (const run of [...this.#runs]) {
      run.abort.abort();
      run.handle?.cancel();
      if (run.phase === 'queued') this.#settle(run, 'Fail');
    }
    try {
      this.#onError?.(error);
    } catch {
      // The error is already recorded and reported by synchronize().
    }
  }

  /** Ends a run exactly once: it leaves #runs, its trace ends with `state`, its waiters wake. */
  #settle(run: Run, state: ExecuteStatus): void {
    if (run.phase === 'settled') return;
    if (run.phase === 'queued' && run.op !== undefined) run.stream?.withdraw(run.op);
    run.phase = 'settled';
    this.#runs.splice(this.#runs.indexOf(run), 1);
    run.trace?.end(state);
    run.markSettled();
  }
}

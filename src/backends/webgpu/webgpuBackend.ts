/// <reference types="@webgpu/types" />
import { invariant, StateError, UnsupportedError, type PxlError } from '../../core/errors.js';
import type { Topology } from '../../core/topology.js';
import { kernelForm } from '../../mu/kernel.js';
import type { GroupKernel } from '../../mu/groupKernel.js';
import type { Backend, BatchRecord, LaunchArg, LaunchHandle, LaunchRequest, ModuleInfo } from '../backend.js';
import { acquireGpuDevice, type GpuDevice } from './gpuDevice.js';
import { startLaunch, type LaunchTransfer } from './gpuLaunch.js';
import type { DescriptorSlot } from './launchDescriptor.js';
import { GpuMemory } from './gpuMemory.js';
import { defaultGpuMemorySize, gpuShape } from './gpuTopology.js';
import { asGeometry, groupConstants, writeRange } from './groupLaunch.js';
import { KernelProgram, type CompiledKernel } from './kernelProgram.js';
import { bindArgs, checkGpuArgs, type BoundArgs } from './launchArgs.js';
import { loadKernels, type LoadedKernel } from './kernelLoader.js';
import type { GroupSignature, GroupWgsl } from './wgslGroupProgram.js';

/** Options of {@link WebGpuBackend.create}. */
export interface WebGpuBackendOptions {
  /** Bytes the Context may allocate. Default: four of the device's largest storage bindings. */
  readonly memorySize?: number;
  /** Refuse software adapters such as llvmpipe (what `backend: 'auto'` asks). Default false. */
  readonly hardwareOnly?: boolean;
  /** Largest batch count a launch can have (MaxTaskCount), which sizes the topology. */
  readonly maxBatches: number;
}

/** Dispatch records kept between drains. */
const TRACE_CAPACITY = 1 << 16;

/** Per-launch transfer records {@link WebGpuBackend.transferStats} keeps: the most recent ones. */
export const TRANSFER_HISTORY = 256;

/**
 * Bytes moved between host and GPU, for tests and diagnostics (see docs/webgpu.md, "What moves
 * between host and GPU").
 */
export interface TransferStats {
  /** Bytes of explicit host-to-device copies (`copyToDevice`) since the backend was created. */
  readonly uploadedBytes: number;
  /** Bytes of explicit device-to-host copies (`copyFromDevice`) since the backend was created. */
  readonly downloadedBytes: number;
  /** What each recent launch moved, oldest first (at most {@link TRANSFER_HISTORY}). */
  readonly launches: readonly LaunchTransfer[];
}

/** The UnsupportedError for a work-group kernel without a WGSL body, or undefined. */
function unsupportedForm(loaded: LoadedKernel): UnsupportedError | undefined {
  if (loaded.info.form !== 'group' || loaded.definition.wgsl !== undefined) return undefined;
  return new UnsupportedError(
    `kernel '${loaded.info.name}' is a work-group kernel (defineGroupKernel) without a WGSL body, so the webgpu backend cannot run it: give its defineGroupKernel a wgsl: { params, body, local? } (see GroupKernelSpec in pxl/mu), or run it on a Context created with backend: 'cpu'`,
  );
}

interface LoadedModule {
  readonly kernels: readonly LoadedKernel[];
  /** WGSL programs by kernel index; undefined for kernels without WGSL. */
  readonly programs: readonly (KernelProgram | GroupProgram | undefined)[];
}

/** A group kernel's compiled WGSL and its resolved spec (for local array lengths). */
interface GroupProgram {
  readonly program: KernelProgram & { readonly signature: GroupSignature };
  readonly spec: GroupWgsl;
}

/**
 * The webgpu backend: device memory is GPU buffers, kernels are the WGSL bodies of kernel modules
 * the host imports, and a launch is a chunked sequence of compute dispatches (see gpuLaunch.ts).
 * Everything runs on the main thread; the GPU queue orders copies and launches as they are issued.
 */
export class WebGpuBackend implements Backend {
  readonly name = 'webgpu';
  readonly topology: Topology;
  readonly memorySize: number;
  readonly #gpu: GpuDevice;
  readonly #memory: GpuMemory;
  readonly #workgroupSize: number;
  readonly #modules = new Map<number, LoadedModule>();
  readonly #closed: Promise<PxlError>;
  #close: (error: PxlError) => void = () => {};
  #closedError: PxlError | undefined;
  #destroyed = false;
  #trace: { records: BatchRecord[]; dropped: number } | undefined;
  #nextModule = 1;
  /** Each Map's descriptor buffers, kept between its launches (keyed by its mapToken). */
  readonly #descriptors = new WeakMap<object, DescriptorSlot>();
  readonly #transfers: LaunchTransfer[] = [];

  private constructor(gpu: GpuDevice, options: WebGpuBackendOptions) {
    this.#gpu = gpu;
    const shape = gpuShape(gpu.device.limits, options.maxBatches);
    this.topology = shape.topology;
    this.#workgroupSize = shape.workgroupSize;
    this.memorySize = options.memorySize ?? defaultGpuMemorySize(gpu.device.limits);
    this.#memory = new GpuMemory(gpu.device, this.memorySize);
    this.#closed = new Promise<PxlError>((resolve) => {
      this.#close = (error) => {
        this.#closedError ??= error;
        resolve(this.#closedError);
      };
    });
    void gpu.device.lost.then((info) => {
      this.#close(new StateError(`the GPU device was lost (${info.reason}: ${info.message}); create a new Context`));
    });
  }

  /** @throws (rejects) DeviceUnavailableError when no adapter can be opened. */
  static async create(options: WebGpuBackendOptions): Promise<WebGpuBackend> {
    const gpu = await acquireGpuDevice(options.hardwareOnly === true ? { hardwareOnly: true } : {});
    return new WebGpuBackend(gpu, options);
  }

  get allocatedBytes(): number {
    return this.#memory.allocatedBytes;
  }

  allocate(bytes: number): number {
    this.#alive();
    return this.#memory.allocate(bytes);
  }

  free(buffer: number): void {
    this.#memory.free(buffer);
  }

  async write(buffer: number, byteOffset: number, src: Uint8Array): Promise<void> {
    this.#alive();
    await this.#memory.write(buffer, byteOffset, src);
  }

  async read(buffer: number, byteOffset: number, dst: Uint8Array): Promise<void> {
    this.#alive();
    await this.#memory.read(buffer, byteOffset, dst);
  }

  /** GPU memory is not host memory: the host copies with write/read. */
  hostBuffer(): undefined {
    return undefined;
  }

  /**
   * Imports a kernel module and compiles the WGSL of its kernels, group kernels' included (their
   * pipelines are built per work-group size at launch). Kernels without WGSL are listed (so one
   * module serves both backends) but never compiled: launching one throws UnsupportedError.
   * @throws (rejects) ModuleLoadError when the module cannot be imported or its WGSL does not compile.
   */
  async loadModule(url: string): Promise<ModuleInfo> {
    this.#alive();
    const kernels = await loadKernels(url);
    const device = this.#gpu.device;
    const programs = await Promise.all(
      kernels.map(async ({ info, definition: d }): Promise<KernelProgram | GroupProgram | undefined> => {
        if (d.wgsl === undefined) return undefined;
        if (kernelForm(d) !== 'group') return KernelProgram.create(device, url, info.name, d.wgsl, this.#workgroupSize);
        const spec = (d as GroupKernel).wgsl!;
        return { program: await KernelProgram.createGroup(device, url, info.name, spec), spec };
      }),
    );
    const id = this.#nextModule++;
    this.#modules.set(id, { kernels, programs });
    return { id, url, kernels: kernels.map((k) => k.info) };
  }

  /**
   * Checks arguments at execute(), before the launch is queued: what no WGSL kernel can bind
   * (float64 NDArrays, pointers off a 32-bit word) and, given the kernel, everything `bindArgs`
   * checks against its declared `params`, plus allocations the GPU is already known to have
   * refused. For a group kernel KernelMap calls this twice, with the user's arguments and then with
   * the geometry in front: that second call checks the work-group against the GPU's limits. A
   * kernel without WGSL is left to fail at launch, where the other backend's kernels fail.
   * @throws UnsupportedError for a work-group kernel without WGSL; ArgumentError naming the argument
   *   and its declared type; OptionError for a work-group larger than the GPU runs (naming the limit
   *   and the value); OutOfMemoryError for an argument in an allocation the GPU could not create.
   */
  checkArgs(args: readonly LaunchArg[], kernel?: { readonly module: number; readonly kernel: number }): void {
    if (kernel !== undefined) {
      const loaded = this.#modules.get(kernel.module);
      const k = loaded?.kernels[kernel.kernel];
      const refused = k === undefined ? undefined : unsupportedForm(k);
      if (refused !== undefined) throw refused;
      const program = loaded?.programs[kernel.kernel];
      if (program instanceof KernelProgram || program === undefined) {
        checkGpuArgs(args);
        if (program !== undefined) bindArgs(program.name, program.signature, args, this.#gpu.device.limits);
      } else {
        const geometry = args.length === Object.keys(program.spec.params).length + 1 ? asGeometry(args[0]) : undefined;
        const user = geometry === undefined ? args : args.slice(1);
        checkGpuArgs(user);
        bindArgs(program.program.name, program.program.signature, user, this.#gpu.device.limits);
        if (geometry !== undefined) groupConstants(program.program.name, program.spec, geometry, this.#gpu.device.limits);
      }
    } else {
      checkGpuArgs(args);
    }
    for (const a of args) if (a.kind !== 'constant') this.#memory.checkCreated(a.buffer);
  }

  /**
   * Binds the arguments and submits the launch's dispatches (see gpuLaunch.ts); a group kernel's
   * with the pipeline for its work-group size.
   * @throws (rejects) UnsupportedError for a kernel without WGSL; ArgumentError for arguments that
   *   do not match its declared params; OptionError for a work-group larger than the GPU runs;
   *   OutOfMemoryError for an argument whose allocation the GPU could not create; ModuleLoadError
   *   when its pipeline cannot be built.
   */
  async launch(request: LaunchRequest): Promise<LaunchHandle> {
    this.#alive();
    // Queue order alone would order the two on the GPU, but a launch after a failed one must not
    // run at all, which only the host can tell here: so the host waits.
    if (request.after !== undefined && (await request.after.done).kind !== 'completed') {
      return { done: Promise.resolve({ kind: 'cancelled' }), cancel: () => {}, progress: () => ({ issued: 0, done: 0 }) };
    }
    const loaded = this.#modules.get(request.module);
    const k = loaded?.kernels[request.kernel];
    const refused = k === undefined ? undefined : unsupportedForm(k);
    if (refused !== undefined) throw refused;
    const program = loaded?.programs[request.kernel];
    if (program === undefined) {
      throw new UnsupportedError(
        `kernel '${request.kernelName}' has no WGSL body, so the webgpu backend cannot run it: give its defineKernel a wgsl: { params, body } (see WgslKernel in pxl/mu), or run it on a Context created with backend: 'cpu'`,
      );
    }
    const limits = this.#gpu.device.limits;
    let bound: BoundArgs;
    let compiled: Promise<CompiledKernel>;
    if (program instanceof KernelProgram) {
      bound = bindArgs(request.kernelName, program.signature, request.args, limits);
      compiled = program.compiled();
    } else {
      const geometry = asGeometry(request.args[0]);
      invariant(geometry !== undefined, `launch of group kernel '${request.kernelName}' without its geometry argument`);
      bound = bindArgs(request.kernelName, program.program.signature, request.args.slice(1), limits);
      writeRange(bound.uniform, program.program.signature, geometry);
      compiled = program.program.compiled(groupConstants(request.kernelName, program.spec, geometry, limits));
    }
    await this.#memory.created(bound.storage.map((s) => s.buffer));
    const kernel = await compiled;
    this.#alive();
    const env = { device: this.#gpu.device, memory: this.#memory, workgroupSize: this.#workgroupSize, closed: this.#closed, record: (r: BatchRecord) => this.#record(r) };
    let slot = this.#descriptors.get(request.mapToken);
    if (slot === undefined) this.#descriptors.set(request.mapToken, (slot = { busy: false }));
    return startLaunch(env, kernel, bound, request, slot, (t) => {
      this.#transfers.push(t);
      if (this.#transfers.length > TRANSFER_HISTORY) this.#transfers.shift();
    });
  }

  /**
   * What moved between host and GPU: explicit copies since creation, and per launch (the most
   * recent {@link TRANSFER_HISTORY}) the descriptor bytes it uploaded, the bytes it read back and
   * the device ranges it bound. A launch never copies array data; see docs/webgpu.md.
   * @example backend.transferStats().launches.at(-1)?.uploadedBytes // 0 when re-run unchanged
   */
  transferStats(): TransferStats {
    return { uploadedBytes: this.#memory.uploadedBytes, downloadedBytes: this.#memory.downloadedBytes, launches: [...this.#transfers] };
  }

  /**
   * Starts or stops recording. A GPU cannot time single batches, so a record is one dispatch (a
   * chunk of consecutive batches, `batch` its first): from submission to the queue reporting it
   * done. `core` is the dispatch's place in the submission window, so overlapping dispatches get
   * separate tracks.
   */
  setTracing(on: boolean): void {
    if (on) this.#trace ??= { records: [], dropped: 0 };
    else this.#trace = undefined;
  }

  drainTrace(): { records: BatchRecord[]; dropped: number } {
    const trace = this.#trace;
    if (trace === undefined) return { records: [], dropped: 0 };
    this.#trace = { records: [], dropped: 0 };
    return trace;
  }

  #record(r: BatchRecord): void {
    const trace = this.#trace;
    if (trace === undefined) return;
    if (trace.records.length < TRACE_CAPACITY) trace.records.push(r);
    else trace.dropped++;
  }

  describe(): Record<string, string | number> {
    const limits = this.#gpu.device.limits;
    return {
      backend: 'webgpu',
      device: `${this.#gpu.description} via ${this.#gpu.route}${this.#gpu.software ? ', a software renderer' : ''}`,
      adapter: this.#gpu.description,
      route: this.#gpu.route,
      software: this.#gpu.software ? 'yes' : 'no',
      workgroupSize: this.#workgroupSize,
      maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize,
      maxBufferSize: limits.maxBufferSize,
      maxStorageBuffersPerShaderStage: limits.maxStorageBuffersPerShaderStage,
      maxComputeInvocationsPerWorkgroup: limits.maxComputeInvocationsPerWorkgroup,
      maxComputeWorkgroupSizeX: limits.maxComputeWorkgroupSizeX,
      maxComputeWorkgroupSizeY: limits.maxComputeWorkgroupSizeY,
      maxComputeWorkgroupSizeZ: limits.maxComputeWorkgroupSizeZ,
      maxComputeWorkgroupStorageSize: limits.maxComputeWorkgroupStorageSize,
      uploadedBytes: this.#memory.uploadedBytes,
      downloadedBytes: this.#memory.downloadedBytes,
    };
  }

  async destroy(): Promise<void> {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#close(new StateError('the Context was destroyed while this launch was in flight'));
    this.#memory.destroy();
    this.#modules.clear();
    this.#gpu.device.destroy();
  }

  #alive(): void {
    if (this.#closedError !== undefined) throw this.#closedError;
  }
}

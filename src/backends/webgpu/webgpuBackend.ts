/// <reference types="@webgpu/types" />
import { StateError, UnsupportedError, type PxlError } from '../../core/errors.js';
import type { Topology } from '../../core/topology.js';
import type { Backend, BatchRecord, LaunchArg, LaunchHandle, LaunchRequest, ModuleInfo } from '../backend.js';
import { acquireGpuDevice, type GpuDevice } from './gpuDevice.js';
import { startLaunch } from './gpuLaunch.js';
import { GpuMemory } from './gpuMemory.js';
import { defaultGpuMemorySize, gpuShape } from './gpuTopology.js';
import { KernelProgram } from './kernelProgram.js';
import { bindArgs, checkGpuArgs } from './launchArgs.js';
import { loadKernels, type LoadedKernel } from './kernelLoader.js';

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

interface LoadedModule {
  readonly kernels: readonly LoadedKernel[];
  /** WGSL programs by kernel index; undefined for kernels without WGSL. */
  readonly programs: readonly (KernelProgram | undefined)[];
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

  async loadModule(url: string): Promise<ModuleInfo> {
    this.#alive();
    const kernels = await loadKernels(url);
    const programs = await Promise.all(
      kernels.map((k) => (k.definition.wgsl === undefined ? undefined : KernelProgram.create(this.#gpu.device, url, k.info.name, k.definition.wgsl, this.#workgroupSize))),
    );
    const id = this.#nextModule++;
    this.#modules.set(id, { kernels, programs });
    return { id, url, kernels: kernels.map((k) => k.info) };
  }

  checkArgs(args: readonly LaunchArg[]): void {
    checkGpuArgs(args);
  }

  async launch(request: LaunchRequest): Promise<LaunchHandle> {
    this.#alive();
    const program = this.#modules.get(request.module)?.programs[request.kernel];
    if (program === undefined) {
      throw new UnsupportedError(
        `kernel '${request.kernelName}' has no WGSL body, so the webgpu backend cannot run it: give its defineKernel a wgsl: { params, body } (see WgslKernel in pxl/mu), or run it on a Context created with backend: 'cpu'`,
      );
    }
    const bound = bindArgs(request.kernelName, program.signature, request.args, this.#gpu.device.limits, request.taskCount);
    const compiled = await program.compiled();
    this.#alive();
    const env = { device: this.#gpu.device, memory: this.#memory, workgroupSize: this.#workgroupSize, closed: this.#closed, record: (r: BatchRecord) => this.#record(r) };
    return startLaunch(env, compiled, bound, request);
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

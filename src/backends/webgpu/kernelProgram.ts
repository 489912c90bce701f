/// <reference types="@webgpu/types" />
import { ModuleLoadError, UnsupportedError } from '../../core/errors.js';
import type { WgslKernel } from '../../mu/kernel.js';
import { sourceOf, wgslProgram, type WgslProgram } from './wgslProgram.js';
import { ARGS_BINDING, CHUNK_BINDING, wgslSignature, type WgslSignature } from './wgslSignature.js';

/** What a launch binds: the pipeline, the layout of its one bind group, and its message ring's binding. */
export interface CompiledKernel {
  readonly pipeline: GPUComputePipeline;
  readonly layout: GPUBindGroupLayout;
  /** Binding of the message ring, when the kernel calls `message()`. */
  readonly messageBinding: number | undefined;
}

/** GPUShaderStage.COMPUTE, spelled out so no global has to be installed. */
const COMPUTE = 0x4;

/**
 * One WGSL kernel compiled for a device: its signature, generated module, bind group layout, and
 * its compute pipeline, built on first launch and kept. The shader module is checked when the
 * kernel module loads, so WGSL errors reject `createModule` with the kernel's own line numbers.
 */
export class KernelProgram {
  readonly name: string;
  readonly signature: WgslSignature;
  readonly program: WgslProgram;
  readonly #device: GPUDevice;
  readonly #module: GPUShaderModule;
  #compiled: Promise<CompiledKernel> | undefined;

  private constructor(device: GPUDevice, name: string, signature: WgslSignature, program: WgslProgram, module: GPUShaderModule) {
    this.#device = device;
    this.name = name;
    this.signature = signature;
    this.program = program;
    this.#module = module;
  }

  /**
   * Generates and checks a kernel's WGSL module.
   * @throws (rejects) ModuleLoadError quoting the compiler's errors at the kernel's own lines.
   */
  static async create(device: GPUDevice, url: string, name: string, spec: WgslKernel, workgroupSize: number): Promise<KernelProgram> {
    const signature = wgslSignature(spec);
    const program = wgslProgram(name, spec, signature, workgroupSize);
    device.pushErrorScope('validation');
    const module = device.createShaderModule({ label: `pxl ${name}`, code: program.code });
    const scope = device.popErrorScope();
    const info = await module.getCompilationInfo();
    await scope;
    const errors = info.messages.filter((m) => m.type === 'error');
    if (errors.length > 0) {
      const lines = errors.slice(0, 5).map((m) => `${sourceOf(program, m.lineNum)}:${m.linePos}: ${m.message}`);
      throw new ModuleLoadError(`kernel '${name}' in ${url}: its WGSL does not compile: ${lines.join('; ')}`);
    }
    return new KernelProgram(device, name, signature, program, module);
  }

  /**
   * The compute pipeline and its bind group layout, compiled on first use.
   * @throws (rejects) UnsupportedError when the kernel needs more storage bindings than the device has.
   */
  compiled(): Promise<CompiledKernel> {
    if (this.#compiled === undefined) {
      const max = this.#device.limits.maxStorageBuffersPerShaderStage;
      if (this.signature.storageCount > max) {
        return Promise.reject(new UnsupportedError(`kernel '${this.name}' needs ${this.signature.storageCount} storage bindings (its array parameters${this.signature.messageBinding === undefined ? '' : ', and one for message()'}), but this GPU binds at most ${max} per kernel: pass fewer arrays (pack several into one allocation)`));
      }
      const storage = this.signature.params.flatMap((p) => (p.kind === 'storage' ? [p] : []));
      const layout = this.#device.createBindGroupLayout({
        label: `pxl ${this.name}`,
        entries: [
          { binding: CHUNK_BINDING, visibility: COMPUTE, buffer: { type: 'uniform', hasDynamicOffset: true, minBindingSize: 16 } },
          { binding: ARGS_BINDING, visibility: COMPUTE, buffer: { type: 'uniform', minBindingSize: this.signature.uniformBytes } },
          ...storage.map((p) => ({ binding: p.binding, visibility: COMPUTE, buffer: { type: p.writable ? ('storage' as const) : ('read-only-storage' as const) } })),
          ...(this.signature.messageBinding === undefined ? [] : [{ binding: this.signature.messageBinding, visibility: COMPUTE, buffer: { type: 'storage' as const } }]),
        ],
      });
      const pipeline = this.#device.createComputePipelineAsync({
        label: `pxl ${this.name}`,
        layout: this.#device.createPipelineLayout({ bindGroupLayouts: [layout] }),
        compute: { module: this.#module, entryPoint: this.program.entryPoint },
      });
      this.#compiled = pipeline.then(
        (p) => ({ pipeline: p, layout, messageBinding: this.signature.messageBinding }),
        (err: unknown) => {
          throw new ModuleLoadError(`kernel '${this.name}': the GPU could not build its compute pipeline: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
        },
      );
      this.#compiled.catch(() => (this.#compiled = undefined));
    }
    return this.#compiled;
  }
}

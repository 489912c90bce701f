/// <reference types="@webgpu/types" />
import { ModuleLoadError, UnsupportedError } from '../../core/errors.js';
import type { WgslKernel } from '../../mu/kernel.js';
import { groupSignature, wgslGroupProgram, type GroupSignature, type GroupWgsl } from './wgslGroupProgram.js';
import { sourceOf, wgslProgram, type WgslProgram } from './wgslProgram.js';
import { ARGS_BINDING, CHUNK_BINDING, wgslSignature, type WgslSignature } from './wgslSignature.js';

/**
 * How a pipeline's dispatches map onto the launch: `'batch'`, one invocation per batch of tasks
 * (task and batch kernels); `'group'`, one workgroup per work-group of the range (group kernels).
 */
export type DispatchUnit = 'batch' | 'group';

/** What a launch binds: the pipeline, the layout of its one bind group, and its message ring's binding. */
export interface CompiledKernel {
  readonly pipeline: GPUComputePipeline;
  readonly layout: GPUBindGroupLayout;
  /** Binding of the message ring, when the kernel calls `message()`. */
  readonly messageBinding: number | undefined;
  readonly unit: DispatchUnit;
}

/** GPUShaderStage.COMPUTE, spelled out so no global has to be installed. */
const COMPUTE = 0x4;

/**
 * One WGSL kernel compiled for a device: its signature, generated module, bind group layout, and
 * its compute pipelines, built on first launch and kept: one for a task or batch kernel, one per
 * set of override constants for a group kernel (one per distinct work-group size). The shader
 * module is checked when the kernel module loads, so WGSL errors reject `createModule` with the
 * kernel's own line numbers.
 */
export class KernelProgram {
  readonly name: string;
  readonly signature: WgslSignature;
  readonly program: WgslProgram;
  readonly unit: DispatchUnit;
  readonly #device: GPUDevice;
  readonly #module: GPUShaderModule;
  #layout: GPUBindGroupLayout | undefined;
  readonly #pipelines = new Map<string, Promise<CompiledKernel>>();

  private constructor(device: GPUDevice, name: string, signature: WgslSignature, program: WgslProgram, module: GPUShaderModule, unit: DispatchUnit) {
    this.#device = device;
    this.name = name;
    this.signature = signature;
    this.program = program;
    this.#module = module;
    this.unit = unit;
  }

  /**
   * Generates and checks a task or batch kernel's WGSL module.
   * @throws (rejects) ModuleLoadError quoting the compiler's errors at the kernel's own lines.
   */
  static async create(device: GPUDevice, url: string, name: string, spec: WgslKernel, workgroupSize: number): Promise<KernelProgram> {
    const signature = wgslSignature(spec);
    const program = wgslProgram(name, spec, signature, workgroupSize);
    return new KernelProgram(device, name, signature, program, await checkModule(device, url, name, program), 'batch');
  }

  /**
   * Generates and checks a group kernel's WGSL module (see wgslGroupProgram.ts).
   * @throws (rejects) ModuleLoadError quoting the compiler's errors at the kernel's own lines.
   */
  static async createGroup(device: GPUDevice, url: string, name: string, spec: GroupWgsl): Promise<KernelProgram & { readonly signature: GroupSignature }> {
    const signature = groupSignature(spec);
    const program = wgslGroupProgram(name, spec, signature);
    const compiled = new KernelProgram(device, name, signature, program, await checkModule(device, url, name, program), 'group');
    return compiled as KernelProgram & { readonly signature: GroupSignature };
  }

  /**
   * The compute pipeline for these override constants and its bind group layout, compiled on first
   * use and kept.
   * @throws (rejects) UnsupportedError when the kernel needs more storage bindings than the device
   *   has; ModuleLoadError when the GPU cannot build the pipeline.
   */
  compiled(constants: Readonly<Record<string, number>> = {}): Promise<CompiledKernel> {
    const key = JSON.stringify(constants);
    let compiled = this.#pipelines.get(key);
    if (compiled === undefined) {
      const max = this.#device.limits.maxStorageBuffersPerShaderStage;
      if (this.signature.storageCount > max) {
        return Promise.reject(new UnsupportedError(`kernel '${this.name}' needs ${this.signature.storageCount} storage bindings (its array parameters${this.signature.messageBinding === undefined ? '' : ', and one for message()'}), but this GPU binds at most ${max} per kernel: pass fewer arrays (pack several into one allocation)`));
      }
      const layout = this.#bindGroupLayout();
      const pipeline = this.#device.createComputePipelineAsync({
        label: `pxl ${this.name}`,
        layout: this.#device.createPipelineLayout({ bindGroupLayouts: [layout] }),
        compute: { module: this.#module, entryPoint: this.program.entryPoint, constants: { ...constants } },
      });
      compiled = pipeline.then(
        (p) => ({ pipeline: p, layout, messageBinding: this.signature.messageBinding, unit: this.unit }),
        (err: unknown) => {
          throw new ModuleLoadError(`kernel '${this.name}': the GPU could not build its compute pipeline: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
        },
      );
      this.#pipelines.set(key, compiled);
      compiled.catch(() => this.#pipelines.delete(key));
    }
    return compiled;
  }

  #bindGroupLayout(): GPUBindGroupLayout {
    if (this.#layout === undefined) {
      const storage = this.signature.params.flatMap((p) => (p.kind === 'storage' ? [p] : []));
      this.#layout = this.#device.createBindGroupLayout({
        label: `pxl ${this.name}`,
        entries: [
          { binding: CHUNK_BINDING, visibility: COMPUTE, buffer: { type: 'uniform', hasDynamicOffset: true, minBindingSize: 16 } },
          { binding: ARGS_BINDING, visibility: COMPUTE, buffer: { type: 'uniform', minBindingSize: this.signature.uniformBytes } },
          ...storage.map((p) => ({ binding: p.binding, visibility: COMPUTE, buffer: { type: p.writable ? ('storage' as const) : ('read-only-storage' as const) } })),
          ...(this.signature.messageBinding === undefined ? [] : [{ binding: this.signature.messageBinding, visibility: COMPUTE, buffer: { type: 'storage' as const } }]),
        ],
      });
    }
    return this.#layout;
  }
}

/** Creates a generated module's shader module and rejects with the compiler's errors, if any. */
async function checkModule(device: GPUDevice, url: string, name: string, program: WgslProgram): Promise<GPUShaderModule> {
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ label: `pxl ${name}`, code: program.code });
  const scope = device.popErrorScope();
  const info = await module.getCompilationInfo();
  await scope;
  // Each error with the notes the compiler attaches to it (the uniformity analysis explains there
  // which call and which value made control flow non-uniform, usually at the kernel's own lines).
  const errors: string[] = [];
  for (const m of info.messages) {
    const at = `${sourceOf(program, m.lineNum)}:${m.linePos}: ${m.message}`;
    if (m.type === 'error') errors.push(at);
    else if (m.type === 'info' && errors.length > 0) errors[errors.length - 1] += ` (${at})`;
  }
  if (errors.length > 0) throw new ModuleLoadError(`kernel '${name}' in ${url}: its WGSL does not compile: ${errors.slice(0, 5).join('; ')}`);
  return module;
}

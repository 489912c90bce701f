import type { KernelInfo, ModuleInfo } from '../backends/backend.js';

/**
 * A kernel module loaded into every MU core by `Context.createModule`. Load it into a Job with
 * `job.load(module)`; its exports are the kernels `buildMap` can name.
 */
export class KernelModule {
  /** @internal */ readonly info: ModuleInfo;
  /** @internal */ readonly owner: object;

  /** @internal */
  constructor(owner: object, info: ModuleInfo) {
    this.owner = owner;
    this.info = info;
  }

  get url(): string {
    return this.info.url;
  }

  /** Names of the kernels this module exports, sorted. */
  get kernelNames(): readonly string[] {
    return this.info.kernels.map((k) => k.name);
  }

  /** @internal */
  kernel(name: string): { index: number; info: KernelInfo } | undefined {
    const index = this.info.kernels.findIndex((k) => k.name === name);
    return index < 0 ? undefined : { index, info: this.info.kernels[index]! };
  }
}

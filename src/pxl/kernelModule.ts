import type { KernelInfo, ModuleInfo } from '../backends/backend.js';
import { ArgumentError } from '../core/errors.js';

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

/**
 * @internal Refuses a launch of kernel `name` with `given` arguments when the backend reported how
 * many the kernel takes (`info.params`; CPU cores do) and `given` does not fit: fewer than it
 * declares, or more when its parameter list has no default or rest parameter.
 *
 * @throws ArgumentError naming the kernel, the count it takes and the count given.
 */
export function checkArgumentCount(name: string, info: KernelInfo, given: number): void {
  const params = info.params;
  if (params === undefined) return;
  const { count, exact } = params;
  if (given === count || (given > count && !exact)) return;
  const takes = `${exact ? '' : 'at least '}${count} argument${count === 1 ? '' : 's'}`;
  const local = info.form === 'group' ? ' after local (which the core passes first)' : '';
  throw new ArgumentError(
    `kernel '${name}' takes ${takes}${local}, got ${given}: pass one argument per parameter of the kernel, in order`,
    given > count ? count : undefined,
  );
}

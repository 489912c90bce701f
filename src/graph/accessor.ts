import type { Dims } from '../core/dims.js';
import type { DType } from '../core/dtype.js';
import type { Access, AccessMode } from './accessMode.js';
import type { GraphBuffer } from './buffer.js';
import type { AnyRangeMapper } from './rangeMapper.js';

/**
 * A declared access of a command group to a buffer: the buffer, a range mapper (which points each
 * chunk touches) and a mode. Made by `cg.read`, `cg.write` and `cg.readWrite`; pass it to
 * `cg.parallelFor` and the kernel receives the buffer there as an `NDView` (see
 * `defineChunkKernel`). Every accessor a command group declares counts for its dependencies,
 * whether or not it is passed to the kernel.
 *
 * `M` is the mode at the type level, so a helper can demand an accessor it may write through:
 * `(out: Accessor<'float32', 2, 'write' | 'read_write'>) => ...`. `K` is the kernel dimensionalities
 * its range mapper serves (see `ServedKernelDims`): `parallelFor` refuses, at compile time, an
 * accessor whose mapper does not serve the kernel's dimensionality.
 */
export class Accessor<T extends DType = DType, D extends Dims = Dims, M extends AccessMode = AccessMode, K extends Dims = Dims> {
  /** Type-level only (never set): the kernel dimensionalities the accessor's range mapper serves. */
  declare readonly kernelDims?: K;
  readonly buffer: GraphBuffer<T, D>;
  readonly mapper: AnyRangeMapper;
  readonly access: Access & { readonly mode: M };
  /** @internal The command group that declared it. */
  readonly group: object;

  /** @internal */
  constructor(group: object, buffer: GraphBuffer<T, D>, mapper: AnyRangeMapper, access: Access & { readonly mode: M }) {
    this.group = group;
    this.buffer = buffer;
    this.mapper = mapper;
    this.access = access;
  }

  get mode(): M {
    return this.access.mode;
  }
}

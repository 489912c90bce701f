import { describe, expectTypeOf, it } from 'vitest';
import type { Accessor, BufferId, CommandGroup, GraphBuffer, Queue, TaskId } from '../src/index.js';
import { access } from '../src/index.js';

// Type-level tests: `npm run typecheck` checks them; at run time they only assert that they exist.

function bufferTypes(q: Queue): void {
  expectTypeOf(q.buffer(Float32Array, [4, 4])).toEqualTypeOf<GraphBuffer<'float32', 2>>();
  expectTypeOf(q.buffer('int32', [8])).toEqualTypeOf<GraphBuffer<'int32', 1>>();
  expectTypeOf(q.buffer(BigInt64Array, [2, 2, 2])).toEqualTypeOf<GraphBuffer<'bigint64', 3>>();
  expectTypeOf(q.fence(q.buffer(Float64Array, [3]))).resolves.toEqualTypeOf<Float64Array<ArrayBufferLike>>();
  // @ts-expect-error a Uint8ClampedArray is not an element type of device memory
  q.buffer(Uint8ClampedArray, [4]);
}

function accessorTypes(cg: CommandGroup, b: GraphBuffer<'float32', 2>): void {
  const r = cg.read(b, access.neighborhood([1, 1]));
  const w = cg.write(b, access.oneToOne(), { noInit: true });
  const rw = cg.readWrite(b, access.all());
  expectTypeOf(r).toEqualTypeOf<Accessor<'float32', 2, 'read'>>();
  expectTypeOf(w).toEqualTypeOf<Accessor<'float32', 2, 'write'>>();
  expectTypeOf(rw.mode).toEqualTypeOf<'read_write'>();
  const needsWritable = (out: Accessor<'float32', 2, 'write' | 'read_write'>): Accessor => out;
  needsWritable(w);
  needsWritable(rw);
  // @ts-expect-error a read accessor cannot go where a writable one is required
  needsWritable(r);
  // @ts-expect-error a read cannot promise noInit
  cg.read(b, access.all(), { noInit: true });
}

function idTypes(t: TaskId, b: BufferId): void {
  // @ts-expect-error task ids and buffer ids are branded apart
  const asBuffer: BufferId = t;
  // @ts-expect-error
  const asTask: TaskId = b;
  void asBuffer;
  void asTask;
}

describe('task-graph types', () => {
  it('types buffers by element type and dimensionality, accessors by mode, ids by kind', () => {
    expectTypeOf(bufferTypes).toBeFunction();
    expectTypeOf(accessorTypes).toBeFunction();
    expectTypeOf(idTypes).toBeFunction();
  });
});

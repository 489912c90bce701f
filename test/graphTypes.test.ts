import { describe, expectTypeOf, it } from 'vitest';
import type { Accessor, BufferId, CommandGroup, GraphBuffer, Queue, TaskId } from '../src/index.js';
import { access, box, subrange, type Chunk, type Dims, type Range } from '../src/index.js';

// Type-level tests: `npm run typecheck` checks them; at run time they only assert that they exist.

function bufferTypes(q: Queue): void {
  expectTypeOf(q.buffer(Float32Array, [4, 4])).toEqualTypeOf<GraphBuffer<'float32', 2>>();
  expectTypeOf(q.buffer('int32', [8])).toEqualTypeOf<GraphBuffer<'int32', 1>>();
  expectTypeOf(q.buffer(BigInt64Array, [2, 2, 2])).toEqualTypeOf<GraphBuffer<'bigint64', 3>>();
  expectTypeOf(q.buffer(Float64Array, [])).toEqualTypeOf<GraphBuffer<'float64', 0>>();
  expectTypeOf(q.fence(q.buffer(Float64Array, [3]))).resolves.toEqualTypeOf<Float64Array<ArrayBufferLike>>();
  // @ts-expect-error a Uint8ClampedArray is not an element type of device memory
  q.buffer(Uint8ClampedArray, [4]);
}

function accessorTypes(cg: CommandGroup, b: GraphBuffer<'float32', 2>): void {
  const r = cg.read(b, access.neighborhood([1, 1]));
  const w = cg.write(b, access.oneToOne(), { noInit: true });
  const rw = cg.readWrite(b, access.all());
  // The fourth parameter: the kernel dimensionalities the accessor's range mapper serves.
  expectTypeOf(r).toEqualTypeOf<Accessor<'float32', 2, 'read', 2>>();
  expectTypeOf(w).toEqualTypeOf<Accessor<'float32', 2, 'write', 2>>();
  expectTypeOf(rw).toEqualTypeOf<Accessor<'float32', 2, 'read_write', Dims>>();
  expectTypeOf(rw.mode).toEqualTypeOf<'read_write'>();
  const needsWritable = (out: Accessor<'float32', 2, 'write' | 'read_write'>): Accessor => out;
  needsWritable(w);
  needsWritable(rw);
  // @ts-expect-error a read accessor cannot go where a writable one is required
  needsWritable(r);
  // @ts-expect-error a read cannot promise noInit
  cg.read(b, access.all(), { noInit: true });
}

/** Range mappers whose dimensionalities do not fit the kernel or buffer do not type-check. */
function dimensionTypes(cg: CommandGroup, scalar: GraphBuffer<'float32', 0>, b1: GraphBuffer<'float32', 1>, b2: GraphBuffer<'float32', 2>, b3: GraphBuffer<'float32', 3>): void {
  // Fits: a 2-D kernel, oneToOne and a 5-point neighbourhood over 2-D buffers, all() anywhere.
  cg.parallelFor([8, 8], 'k', cg.read(b2, access.neighborhood([1, 1])), cg.write(b2, access.oneToOne()), cg.read(b3, access.all()));
  // evenSplit serves a 1-D kernel over a buffer of any dimensionality; fixed(...) any kernel.
  cg.parallelFor([4], 'k', cg.write(b3, access.evenSplit()), cg.read(b2, access.fixed(box([0, 0], [2, 2]))));
  const rows = (c: Chunk<1>, r: Range<2>) => subrange([c.offset[0], 0], [c.range[0], r[1]]);
  cg.parallelFor([8], 'k', cg.read(b2, rows));

  // @ts-expect-error oneToOne() over a 2-D buffer serves a 2-D kernel, not a 1-D one
  cg.parallelFor([8], 'k', cg.read(b2, access.oneToOne()));
  // @ts-expect-error a 2-D neighbourhood serves a 2-D kernel, not a 3-D one
  cg.parallelFor([8, 8, 8], 'k', cg.read(b2, access.neighborhood([1, 1])));
  // @ts-expect-error evenSplit needs a 1-D kernel
  cg.parallelFor([8, 8], 'k', cg.write(b2, access.evenSplit()));
  // @ts-expect-error a user mapper of a 1-D kernel, not a 2-D one
  cg.parallelFor([8, 8], 'k', cg.read(b2, rows));
  // @ts-expect-error a 2-D neighbourhood serves no kernel over a 3-D buffer
  cg.read(b3, access.neighborhood([1, 1]));
  // @ts-expect-error a user mapper for a 2-D buffer, given a 1-D one
  cg.read(b1, rows);
  // @ts-expect-error a 2-D fixed part over a 1-D buffer
  cg.read(b1, access.fixed(box([0, 0], [2, 2])));
  // A 0-dimensional buffer: oneToOne() serves a 0-dimensional kernel, all() and fixed() any kernel.
  cg.parallelFor([], 'k', cg.readWrite(scalar, access.oneToOne()));
  cg.parallelFor([8, 8], 'k', cg.read(scalar, access.all()), cg.read(scalar, access.fixed(box([], []))));
  // @ts-expect-error oneToOne() over a 0-D buffer serves a 0-D kernel, not a 1-D one
  cg.parallelFor([8], 'k', cg.read(scalar, access.oneToOne()));
  // @ts-expect-error a 1-D neighbourhood serves no kernel over a 0-D buffer
  cg.read(scalar, access.neighborhood([1]));
  // A launch shape's dimensionality is its global size's.
  cg.parallelFor({ global: [8, 8], offset: [2, 2], local: [4, 4] }, 'k', cg.read(b2, access.oneToOne()));
  // @ts-expect-error oneToOne() over a 2-D buffer, but the launch shape's global size is 1-D
  cg.parallelFor({ global: [8], splitConstraint: [2] }, 'k', cg.read(b2, access.oneToOne()));
  // A range of unknown dimensionality is checked at run time only.
  const dynamic: number[] = [8];
  cg.parallelFor(dynamic, 'k', cg.read(b2, access.oneToOne()));
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
    expectTypeOf(dimensionTypes).toBeFunction();
  });
});

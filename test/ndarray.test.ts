import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { ArgumentError, createContext, NDArray, type Context, type DType, type TypedArrayOf } from '../src/index.js';
import type { NDView } from '../src/mu/index.js';

let ctx: Context;

beforeAll(async () => {
  ctx = await createContext({ topology: { coresPerCluster: 1 } });
});

afterAll(async () => {
  await ctx?.destroy();
});

describe('NDArray', () => {
  it('describes a typed, shaped view of a device allocation', () => {
    const ptr = ctx.memAlloc(3 * 4 * 8);
    const shape = [3, 4];
    const array = new NDArray(ptr, 'float64', shape);
    shape[0] = 99;
    expect(array.ptr).toBe(ptr);
    expect(array.dtype).toBe('float64');
    expect(array.shape).toEqual([3, 4]);
    expect(Object.isFrozen(array.shape)).toBe(true);
    expect(array.size).toBe(12);
    expect(array.byteLength).toBe(96);
    ctx.memFree(ptr);
  });

  it('fits any shape into a larger allocation, empty dimensions included', () => {
    const ptr = ctx.memAlloc(64);
    expect(new NDArray(ptr, 'int8', [2, 3, 4]).byteLength).toBe(24);
    expect(new NDArray(ptr, 'int32', [0, 5]).size).toBe(0);
    expect(new NDArray(ptr.add(8), 'bigint64', [7]).byteLength).toBe(56);
    ctx.memFree(ptr);
  });

  it.each<[string, (p: ReturnType<Context['memAlloc']>) => unknown, string]>([
    ['a pointer that is not a DevicePtr', () => new NDArray({} as never, 'float64', [1]), 'NDArray needs a DevicePtr from Context.memAlloc as its first argument'],
    ['an unknown dtype', (p) => new NDArray(p, 'complex' as DType, [1]), 'NDArray dtype must be one of float64, float32, int32, uint32, int16, uint16, int8, uint8, bigint64, biguint64, got complex'],
    ['an empty shape', (p) => new NDArray(p, 'float64', []), 'NDArray shape must be 1 to 16 non-negative integers, got []'],
    ['a negative dimension', (p) => new NDArray(p, 'float64', [2, -1]), 'NDArray shape must be 1 to 16 non-negative integers, got [2,-1]'],
    ['a fractional dimension', (p) => new NDArray(p, 'float64', [1.5]), 'NDArray shape must be 1 to 16 non-negative integers, got [1.5]'],
    ['seventeen dimensions', (p) => new NDArray(p, 'uint8', new Array(17).fill(1)), 'NDArray shape must be 1 to 16 non-negative integers, got [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]'],
    ['a pointer misaligned for the dtype', (p) => new NDArray(p.add(4), 'float64', [1]), 'NDArray of float64 needs a pointer aligned to 8 bytes, got byte offset 4'],
    ['a shape larger than the allocation', (p) => new NDArray(p, 'float64', [3, 4]), 'NDArray of shape [3, 4] float64 needs 96 bytes, but the pointer reaches only 64: allocate more or change the shape'],
    ['a shape that overruns from an offset', (p) => new NDArray(p.add(32), 'int32', [9]), 'NDArray of shape [9] int32 needs 36 bytes, but the pointer reaches only 32: allocate more or change the shape'],
  ])('rejects %s with an ArgumentError saying how to fix it', (_, make, message) => {
    const ptr = ctx.memAlloc(64);
    expect(() => make(ptr)).toThrow(new ArgumentError(message));
    ctx.memFree(ptr);
  });
});

describe('NDArray types', () => {
  it('infers the dtype parameter from the constructor argument', () => {
    const ptr = ctx.memAlloc(16);
    const f32 = new NDArray(ptr, 'float32', [4]);
    expectTypeOf(f32).toEqualTypeOf<NDArray<'float32'>>();
    expectTypeOf(f32.dtype).toEqualTypeOf<'float32'>();
    expectTypeOf(f32).toExtend<NDArray>();
    expectTypeOf<NDArray>().toEqualTypeOf<NDArray<DType>>();
    // @ts-expect-error: 'complex' is not a dtype
    expect(() => new NDArray(ptr, 'complex', [1])).toThrow(ArgumentError);
    ctx.memFree(ptr);
  });

  it('maps each dtype to its TypedArray class', () => {
    expectTypeOf<TypedArrayOf<'float64'>>().toEqualTypeOf<Float64Array<ArrayBufferLike>>();
    expectTypeOf<TypedArrayOf<'uint8'>>().toEqualTypeOf<Uint8Array<ArrayBufferLike>>();
    expectTypeOf<TypedArrayOf<'bigint64'>>().toEqualTypeOf<BigInt64Array<ArrayBufferLike>>();
    expectTypeOf<TypedArrayOf<'biguint64'>[number]>().toEqualTypeOf<bigint>();
    expectTypeOf<TypedArrayOf<'int16'>[number]>().toEqualTypeOf<number>();
  });

  it('types the elements a kernel reads from an NDView', () => {
    expectTypeOf<NDView<Float64Array>['data']>().toEqualTypeOf<Float64Array>();
    expectTypeOf<ReturnType<NDView<Float32Array>['get']>>().toEqualTypeOf<number>();
    expectTypeOf<ReturnType<NDView<BigInt64Array>['get']>>().toEqualTypeOf<bigint>();
    expectTypeOf<ReturnType<NDView<Int32Array>['toArray']>>().toEqualTypeOf<Int32Array>();
  });
});

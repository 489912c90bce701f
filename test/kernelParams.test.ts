/**
 * The argument count a core reports for each kernel at load (src/backends/cpu/kernelParams.ts):
 * exact for a plain parameter list, a lower bound wherever the source text leaves room for more.
 */
import { describe, expect, it } from 'vitest';
import { kernelParams, plainParameters } from '../src/backends/cpu/kernelParams.js';
import { defineChunkKernel, defineGroupKernel, defineKernel } from '../src/mu/index.js';

describe('plainParameters', () => {
  it.each<[string, Function]>([
    ['a function declaration', function f(a: number, b: number) {}],
    ['an arrow function', (a: number, b: number) => a + b],
    ['an arrow function with one bare parameter', (a: number) => a],
    ['an async arrow function with one bare parameter', async (a: number) => a],
    ['a generator', function* (local: unknown, a: number) {}],
    ['a method', { bind(a: number, b: number) { return a + b; } }.bind],
    ['destructured parameters', ({ a, b }: { a: number; b: number }, [c]: number[]) => a + b + c!],
  ])('is true for %s', (_, fn) => {
    expect(plainParameters(fn)).toBe(true);
  });

  it.each<[string, Function]>([
    ['a default parameter', (a: number, b = 1) => a + b],
    ['a rest parameter', (a: number, ...rest: number[]) => a + rest.length],
    ['a default inside a destructured parameter', ({ a = 1 }: { a?: number }) => a],
    ['a body that reads arguments', function (a: number) { return arguments.length; }],
    ['a bound function', ((a: number, b: number) => a + b).bind(null, 1)],
  ])('is false for %s, whose length is only the least count', (_, fn) => {
    expect(plainParameters(fn)).toBe(false);
  });
});

describe('kernelParams', () => {
  it('counts a task kernel, a batch kernel and a group kernel after local', () => {
    expect(kernelParams(defineKernel((a: number, b: number, c: number) => void (a + b + c)))).toEqual({ count: 3, exact: true });
    expect(kernelParams(defineKernel({ bind: (a: number, b: number) => () => void (a + b) }))).toEqual({ count: 2, exact: true });
    expect(kernelParams(defineGroupKernel({ run: function* (_local, a: number) {} }))).toEqual({ count: 1, exact: true });
  });

  it('gives a lower bound for a chunk kernel, whose bind takes the chunk table and the rest', () => {
    expect(kernelParams(defineChunkKernel((_c, a: number) => void a))).toEqual({ count: 1, exact: false });
  });

  it('reports nothing for a kernel with only a WGSL body, which cannot run on CPU cores', () => {
    expect(kernelParams(defineKernel({ wgsl: { params: { out: 'array<u32, read_write>' }, body: 'out[out_offset + task_idx()] = 7u;' } }))).toBeUndefined();
    expect(kernelParams(defineGroupKernel({ wgsl: { params: { out: 'array<u32, read_write>' }, body: 'out[out_offset + global_id(0u)] = 1u;' } }))).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import type { LaunchArg } from '../src/backends/backend.js';
import { chunkBatches } from '../src/backends/webgpu/gpuLaunch.js';
import { bindArgs } from '../src/backends/webgpu/launchArgs.js';
import { sourceOf, wgslProgram } from '../src/backends/webgpu/wgslProgram.js';
import { callsMessage, MESSAGE_CAPACITY, VIEW_BYTES, wgslSignature } from '../src/backends/webgpu/wgslSignature.js';
import { defineKernel, type WgslKernel } from '../src/mu/index.js';
import { ArgumentError } from '../src/index.js';

// Pure parts of the webgpu backend: no adapter needed.

describe('defineKernel with a WGSL body', () => {
  const wgsl: WgslKernel = { params: { out: 'array<u32, read_write>' }, body: 'out[out_offset] = 1u;' };

  it('keeps the WGSL next to a task, batch or no JavaScript body', () => {
    expect(defineKernel({ run: () => {}, wgsl }).wgsl).toEqual(wgsl);
    expect(defineKernel({ bind: () => () => {}, wgsl }).wgsl).toEqual(wgsl);
    expect(defineKernel({ wgsl }).wgsl).toEqual(wgsl);
  });

  it('gives a WGSL-only kernel a CPU body that says it runs on the GPU only', () => {
    const k = defineKernel({ wgsl });
    expect(() => k.run()).toThrow('this kernel has only a WGSL body, so it runs on the webgpu backend only');
    const b = defineKernel({ wgsl, form: 'batch' });
    expect(() => b.bind()).toThrow('this kernel has only a WGSL body');
  });

  it.each([
    [{ run: () => {}, bind: () => () => {} }, 'defineKernel takes run (task form) or bind (batch form), not both'],
    [{ wgsl: { params: {}, body: 1 } }, 'defineKernel: wgsl must be { params: { name: type, ... }, body: string, declarations?: string }'],
    [{ wgsl: { params: { pxl_x: 'f32' }, body: '' } }, "defineKernel: wgsl parameter 'pxl_x' must be a WGSL identifier (a letter, then letters, digits or _) that does not start with 'pxl_' and is not task_idx or task_count"],
    [{ wgsl: { params: { x: 'f64' }, body: '' } }, "defineKernel: wgsl parameter 'x' has type 'f64'; use f32, i32, u32, bool, array<T> or array<T, read_write> with T f32, i32 or u32, array<atomic<i32|u32>, read_write>, or an object of scalars"],
    [{ wgsl: { params: { x: 'array<atomic<u32>>' }, body: '' } }, "defineKernel: wgsl parameter 'x' has type 'array<atomic<u32>>' (atomics need read_write)"],
    [{ wgsl: { params: { s: { a: 'array<f32>' } }, body: '' } }, 'defineKernel: wgsl field s.a must be f32, i32, u32 or bool, got array<f32>'],
    [{ wgsl, form: 'rows' }, "defineKernel: form must be 'task' or 'batch', got rows"],
  ])('refuses a malformed spec: %o', (spec, message) => {
    expect(() => defineKernel(spec as never)).toThrow(message);
  });
});

describe('wgslSignature', () => {
  it('lays constants and storage views out on 16-byte boundaries and numbers storage bindings from 2', () => {
    const sig = wgslSignature({ params: { a: 'f32', x: 'array<f32>', s: { p: 'u32', q: 'bool', r: 'f32', t: 'i32', u: 'u32' }, y: 'array<atomic<u32>, read_write>' }, body: '' });
    expect(sig.params.map((p) => [p.name, p.kind, p.offset])).toEqual([
      ['a', 'scalar', 0],
      ['x', 'storage', 16],
      ['s', 'struct', 16 + VIEW_BYTES],
      ['y', 'storage', 16 + VIEW_BYTES + 32],
    ]);
    expect(sig.params.flatMap((p) => (p.kind === 'storage' ? [[p.binding, p.element, p.atomic, p.writable]] : []))).toEqual([
      [2, 'f32', false, false],
      [3, 'u32', true, true],
    ]);
    expect(sig.uniformBytes).toBe(16 + VIEW_BYTES + 32 + VIEW_BYTES);
    expect(sig.storageCount).toBe(2);
  });

  it('gives a kernel without parameters a 16-byte uniform', () => {
    expect(wgslSignature({ params: {}, body: '' })).toEqual({ params: [], uniformBytes: 16, storageCount: 0, messageBinding: undefined });
  });

  it('gives a kernel that calls message() one more storage binding, after its parameters', () => {
    const sig = wgslSignature({ params: { x: 'array<f32>', k: 'u32' }, body: 'message(k);' });
    expect(sig.messageBinding).toBe(3);
    expect(sig.storageCount).toBe(2);
    expect(wgslSignature({ params: {}, body: '', declarations: 'fn f() { message (1u); }' }).messageBinding).toBe(2);
  });

  it.each(['my_message(1u);', 'let message_count = 1u;', '// no messages'])('sees no message() call in %j', (body) => {
    expect(callsMessage(body)).toBe(false);
    expect(wgslSignature({ params: {}, body }).messageBinding).toBeUndefined();
  });
});

describe('wgslProgram', () => {
  const spec: WgslKernel = { params: { x: 'array<f32, read_write>', k: 'f32' }, declarations: 'fn twice(v: f32) -> f32 {\n  return 2.0 * v;\n}', body: 'let i = task_idx();\nx[x_offset] = twice(k);' };
  const program = wgslProgram('scale', spec, wgslSignature(spec), 64);
  const lines = program.code.split('\n');

  it("places the kernel's declarations and body where the line map says", () => {
    expect(lines[program.declarationsLine - 1]).toBe('fn twice(v: f32) -> f32 {');
    expect(lines[program.bodyLine - 1]).toBe('let i = task_idx();');
    expect(lines[program.bodyLine]).toBe('x[x_offset] = twice(k);');
  });

  it('maps compiler lines back to the body and the declarations', () => {
    expect(sourceOf(program, program.bodyLine + 1)).toBe('body line 2');
    expect(sourceOf(program, program.declarationsLine + 2)).toBe('declarations line 3');
    expect(sourceOf(program, 1)).toMatch(/^generated line 1 \(check that parameter names/);
  });

  it('binds constants as lets, storage as module-scope arrays, and loops over the batch per invocation', () => {
    expect(program.code).toContain('@group(0) @binding(2) var<storage, read_write> x: array<f32>;');
    expect(program.code).toContain('  let k: f32 = pxl_args.k;');
    expect(program.code).toContain('@compute @workgroup_size(64)');
    expect(program.code).toContain('for (var pxl_t = pxl_first; pxl_t < pxl_end; pxl_t++) {');
    expect(program.code).toContain('x_offset = pxl_args.x.base + pxl_t * pxl_args.x.stride;');
  });

  it('defines message() over a bounded ring only for a kernel that calls it', () => {
    expect(program.code).not.toContain('pxl_messages');
    const sending: WgslKernel = { params: { k: 'u32' }, body: 'message(k);' };
    const code = wgslProgram('send', sending, wgslSignature(sending), 64).code;
    expect(code).toContain('@group(0) @binding(2) var<storage, read_write> pxl_messages: array<atomic<u32>>;');
    expect(code).toContain(`fn message(value: u32) { let i = atomicAdd(&pxl_messages[0], 1u); if (i < ${MESSAGE_CAPACITY}u) {`);
  });
});

describe('bindArgs', () => {
  const limits = { minStorageBufferOffsetAlignment: 256, maxStorageBufferBindingSize: 1 << 20 };
  const sig = wgslSignature({ params: { x: 'array<f32>', y: 'array<f32, read_write>', k: 'f32' }, body: '' });
  const nd = (buffer: number, byteOffset: number, shape: number[], sliced = true): LaunchArg => ({ kind: 'ndarray', buffer, byteOffset, dtype: 'float32', shape, sliced });

  it('binds from the aligned offset below each array and tells WGSL where the array starts in it', () => {
    const bound = bindArgs('k', sig, [nd(1, 260, [4, 3]), nd(2, 0, [4, 3]), { kind: 'constant', value: 2 }], limits);
    expect(bound.storage.map((s) => [s.binding, s.buffer, s.offset, s.size, s.writable])).toEqual([
      [2, 1, 256, 4 + 48, false],
      [3, 2, 0, 48, true],
    ]);
    const u = new DataView(bound.uniform.buffer);
    const xView = sig.params[0]!.offset;
    // base (in elements past the binding offset), slice size, stride, ndim, shape
    expect([0, 4, 8, 12, 16].map((o) => u.getUint32(xView + o, true))).toEqual([1, 3, 3, 1, 3]);
    expect(u.getFloat32(sig.params[2]!.offset, true)).toBe(2);
  });

  it('refuses a writable array that overlaps another binding of the same buffer', () => {
    expect(() => bindArgs('k', sig, [nd(1, 0, [4, 3]), nd(1, 48, [4, 3]), { kind: 'constant', value: 2 }], limits)).toThrow(ArgumentError);
    // Far enough apart that the aligned ranges do not meet.
    expect(() => bindArgs('k', sig, [nd(1, 0, [4, 3]), nd(1, 256, [4, 3]), { kind: 'constant', value: 2 }], limits)).not.toThrow();
  });

  it('refuses an array larger than one storage binding', () => {
    expect(() => bindArgs('k', sig, [nd(1, 0, [1 << 18, 2]), nd(2, 0, [1 << 18, 1]), { kind: 'constant', value: 2 }], limits)).toThrow(
      new ArgumentError("argument 0 ('x', declared array<f32>) spans 2097152 bytes, but this GPU binds at most 1048576 bytes per storage buffer (maxStorageBufferBindingSize): split the work over smaller arrays", 0),
    );
  });
});

describe('chunkBatches', () => {
  it('keeps small launches in one dispatch and splits large ones into at most 8 whole-workgroup chunks', () => {
    expect(chunkBatches(1, 64)).toBe(1);
    expect(chunkBatches(1024, 64)).toBe(1024);
    expect(chunkBatches(1025, 64)).toBe(192);
    expect(Math.ceil(1_048_575 / chunkBatches(1_048_575, 64))).toBe(8);
    expect(chunkBatches(1_048_575, 64) % 64).toBe(0);
  });
});

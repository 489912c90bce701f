import { DTYPES } from '../../core/dtype.js';
import { kernelForm, type KernelDefinition } from '../../mu/kernel.js';
import { muState } from '../../mu/state.js';
import { NDView, PointerView } from '../../mu/views.js';
import type { DecodedArg } from './argsCodec.js';

/** Runs tasks [first, end) of a launch on this core. */
export type BatchRunner = (first: number, end: number) => void;

/**
 * Turns a kernel and its decoded arguments into the function a core calls per batch. Binding
 * happens once per (Map, argument version) on each core, so the per-batch path touches no
 * decoding, no allocation and no argument-count dispatch.
 */
export function bindKernel(kernel: KernelDefinition, args: readonly DecodedArg[], buffers: ReadonlyMap<number, SharedArrayBuffer>): BatchRunner {
  const sliced: NDView[] = [];
  const values = args.map((a) => {
    if (a.kind === 'constant') return a.value;
    const sab = buffers.get(a.buffer);
    if (sab === undefined) throw new Error(`device buffer ${a.buffer} is not allocated (was it freed?)`);
    if (a.kind === 'pointer') return new PointerView(sab, a.byteOffset, a.byteLength);
    const size = a.shape.reduce((p, d) => p * d, 1);
    const data = new (DTYPES[a.dtype] as unknown as new (b: SharedArrayBuffer, o: number, n: number) => Float64Array)(sab, a.byteOffset, size);
    const view = new NDView(data, a.sliced ? a.shape.slice(1) : a.shape);
    if (a.sliced) sliced.push(view);
    return view;
  });

  if (kernelForm(kernel) === 'batch') {
    const inner = (kernel as unknown as { bind: (...a: unknown[]) => BatchRunner }).bind(...values);
    if (typeof inner !== 'function') throw new TypeError('a batch kernel\'s bind() must return a function (firstTask, endTask) => void');
    return (first, end) => {
      muState.taskIdx = first;
      inner(first, end);
    };
  }
  const call = caller((kernel as unknown as { run: (...a: unknown[]) => void }).run, values);
  if (sliced.length === 0) {
    return (first, end) => {
      for (let t = first; t < end; t++) {
        muState.taskIdx = t;
        call();
      }
    };
  }
  return (first, end) => {
    for (let t = first; t < end; t++) {
      muState.taskIdx = t;
      for (let v = 0; v < sliced.length; v++) sliced[v]!.offset = t * sliced[v]!.size;
      call();
    }
  };
}

/** A zero-argument call of `fn` with `v` fixed, specialised by arity so no spread runs per task. */
function caller(fn: (...a: unknown[]) => void, v: readonly unknown[]): () => void {
  const [a, b, c, d, e, f, g, h, i] = v;
  switch (v.length) {
    case 0: return () => fn();
    case 1: return () => fn(a);
    case 2: return () => fn(a, b);
    case 3: return () => fn(a, b, c);
    case 4: return () => fn(a, b, c, d);
    case 5: return () => fn(a, b, c, d, e);
    case 6: return () => fn(a, b, c, d, e, f);
    case 7: return () => fn(a, b, c, d, e, f, g);
    case 8: return () => fn(a, b, c, d, e, f, g, h);
    default: return () => fn(a, b, c, d, e, f, g, h, i);
  }
}

import type { WgslKernel, WgslScalarType } from '../../mu/kernel.js';

/**
 * A WGSL kernel's parameters as the backend lays them out: constants and the per-argument figures
 * of storage parameters (offset, size, shape) live in one uniform struct, `PxlArgs`; each storage
 * parameter gets its own storage binding. The layout depends only on the declared types, so one
 * pipeline serves every launch of a kernel.
 *
 * Uniform layout (WGSL uniform address-space rules, every member 16-byte aligned):
 * - a scalar: 4 bytes (bool as u32 0/1);
 * - a struct of scalars: 4 bytes per field, in declaration order;
 * - a storage parameter: a `PxlView` of {@link VIEW_BYTES}: base, size, stride, ndim (u32 each),
 *   then the shape as 4 vec4<u32> (16 dimensions).
 */

/** Element types of WGSL storage arrays. */
export type StorageElement = 'f32' | 'i32' | 'u32';

/** One declared parameter and where it lives: in the uniform (scalars, structs) or in a storage binding. */
export type SignatureParam =
  | { readonly kind: 'scalar'; readonly name: string; readonly type: WgslScalarType; readonly offset: number }
  | {
      readonly kind: 'struct';
      readonly name: string;
      readonly fields: readonly { readonly name: string; readonly type: WgslScalarType }[];
      readonly offset: number;
    }
  | {
      readonly kind: 'storage';
      readonly name: string;
      readonly element: StorageElement;
      readonly atomic: boolean;
      readonly writable: boolean;
      /** Binding number in group 0. */
      readonly binding: number;
      /** Byte offset of the parameter's PxlView in the uniform. */
      readonly offset: number;
    };

/** A kernel's WGSL layout: its parameters, the PxlArgs uniform, and its storage bindings. */
export interface WgslSignature {
  readonly params: readonly SignatureParam[];
  /** Size of the PxlArgs uniform, a multiple of 16 and at least 16. */
  readonly uniformBytes: number;
  /** Storage bindings, the message ring included. */
  readonly storageCount: number;
  /**
   * Binding of the message ring (see {@link MESSAGE_CAPACITY}) when the kernel calls `message()`,
   * the storage binding after its parameters'; undefined when it never does.
   */
  readonly messageBinding: number | undefined;
}

/**
 * Messages one launch can hold: `message(value)` calls beyond it are dropped and counted, and the
 * host warns with the count. The ring is a `u32` counter then (task index, value) pairs.
 */
export const MESSAGE_CAPACITY = 4096;

/** Whether WGSL source calls `message(...)` (a call, not a longer name such as `my_message(`). */
export function callsMessage(code: string): boolean {
  return /(^|[^\w])message\s*\(/.test(code);
}

/** Bytes of one PxlView in the uniform. */
export const VIEW_BYTES = 80;
/** Dimensions a PxlView carries (NDArrays have at most 16). */
export const MAX_DIMS = 16;
/** Binding 0 is the per-dispatch PxlChunk uniform, binding 1 the PxlArgs uniform. */
export const CHUNK_BINDING = 0;
/** Binding of the PxlArgs uniform. */
export const ARGS_BINDING = 1;
/** Binding of the first storage parameter; the others follow in declaration order, then the message ring. */
export const FIRST_STORAGE_BINDING = 2;

const STORAGE_TYPE = /^array<(atomic<)?(f32|i32|u32)>?(, read_write)?>$/;

const roundUp16 = (n: number): number => Math.ceil(n / 16) * 16;

/**
 * The layout of a kernel's declared parameters (already validated by defineKernel).
 * @example wgslSignature({ params: { x: 'array<f32, read_write>', k: 'f32' }, body: '...' }).uniformBytes // 96
 */
export function wgslSignature(spec: WgslKernel): WgslSignature {
  const params: SignatureParam[] = [];
  let cursor = 0;
  let binding = FIRST_STORAGE_BINDING;
  for (const [name, type] of Object.entries(spec.params)) {
    const offset = roundUp16(cursor);
    if (typeof type === 'object') {
      const fields = Object.entries(type).map(([field, t]) => ({ name: field, type: t }));
      params.push({ kind: 'struct', name, fields, offset });
      cursor = offset + 4 * fields.length;
      continue;
    }
    const storage = STORAGE_TYPE.exec(type);
    if (storage === null) {
      params.push({ kind: 'scalar', name, type: type as WgslScalarType, offset });
      cursor = offset + 4;
    } else {
      params.push({ kind: 'storage', name, element: storage[2] as StorageElement, atomic: storage[1] !== undefined, writable: storage[3] !== undefined, binding: binding++, offset });
      cursor = offset + VIEW_BYTES;
    }
  }
  const messageBinding = callsMessage(spec.body) || callsMessage(spec.declarations ?? '') ? binding++ : undefined;
  return { params, uniformBytes: Math.max(16, roundUp16(cursor)), storageCount: binding - FIRST_STORAGE_BINDING, messageBinding };
}

/** The declared type as the user wrote it, for messages. */
export function typeText(p: SignatureParam): string {
  if (p.kind === 'scalar') return p.type;
  if (p.kind === 'struct') return `{ ${p.fields.map((f) => `${f.name}: ${f.type}`).join(', ')} }`;
  const element = p.atomic ? `atomic<${p.element}>` : p.element;
  return p.writable ? `array<${element}, read_write>` : `array<${element}>`;
}

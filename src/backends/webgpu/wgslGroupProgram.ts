import type { WgslKernel } from '../../mu/kernel.js';
import type { GroupKernel } from '../../mu/groupKernel.js';
import { assembleProgram, constantLets, ENTRY_POINT, storageParams, wgslPrelude, type WgslProgram } from './wgslProgram.js';
import { wgslSignature, type WgslSignature } from './wgslSignature.js';

/**
 * The WGSL module generated for a work-group kernel (`defineGroupKernel` with a `wgsl` body). One
 * WebGPU workgroup runs one work-group of the Map's range, one invocation per work-item, so
 * barriers, `var<workgroup>` memory and local ids are the hardware's own. The module has one
 * shader per kernel; what depends on the range is left to pipeline-overridable constants, set per
 * pipeline (see groupLaunch.ts):
 * - `@workgroup_size(pxl_l0, pxl_l1, pxl_l2)`, the work-group size;
 * - `pxl_len_<name>`, the length of local array `<name>`, so each array is a
 *   `var<workgroup> <name>: array<T, pxl_len_<name>>` of constant size in each pipeline.
 *
 * A dispatch covers consecutive work-groups (flat index, dimension 0 fastest) as a 2-D grid of
 * workgroups, the first from its PxlChunk: workgroup (x, y) runs group
 * `first_batch * batch_size + y * num_workgroups.x + x`, and workgroups past the chunk's last
 * group return at once (the whole workgroup together, so barriers stay in uniform control flow).
 * The range's global sizes and group counts travel in the PxlArgs uniform, after the parameters,
 * as `pxl_range`.
 */

/** The resolved WGSL spec of a group kernel, as `defineGroupKernel` stores it. */
export type GroupWgsl = NonNullable<GroupKernel['wgsl']>;

/** A group kernel's layout: a WgslSignature whose uniform ends with the range (32 bytes). */
export interface GroupSignature extends WgslSignature {
  /** Byte offset of `pxl_range` (global sizes, then group counts, as vec4<u32>) in PxlArgs. */
  readonly rangeOffset: number;
}

/** Bytes of `pxl_range` in the uniform. */
export const RANGE_BYTES = 32;

/** The override constant that sizes local array `name`. */
export function lengthConstant(name: string): string {
  return `pxl_len_${name}`;
}

/**
 * The layout of a group kernel's parameters: a task kernel's, plus the range at the end of the uniform.
 * @example groupSignature({ params: { x: 'array<f32>' }, body: '', local: {} }).rangeOffset // 80
 */
export function groupSignature(spec: WgslKernel): GroupSignature {
  const base = wgslSignature(spec);
  const rangeOffset = base.params.length === 0 ? 0 : base.uniformBytes;
  return { ...base, rangeOffset, uniformBytes: rangeOffset + RANGE_BYTES };
}

/**
 * Generates the WGSL module of one group kernel.
 * @example wgslGroupProgram('block_sum', spec, groupSignature(spec)).code
 */
export function wgslGroupProgram(kernelName: string, spec: GroupWgsl, signature: GroupSignature): WgslProgram {
  const storage = storageParams(signature);
  const head = [
    'struct PxlRange { global: vec4<u32>, groups: vec4<u32> }',
    ...wgslPrelude(kernelName, signature, ['  @align(16) pxl_range: PxlRange,']),
    'override pxl_l0: u32 = 1u;',
    'override pxl_l1: u32 = 1u;',
    'override pxl_l2: u32 = 1u;',
    ...Object.entries(spec.local).flatMap(([name, a]) => [`override ${lengthConstant(name)}: u32 = 1u;`, `var<workgroup> ${name}: array<${a.type}, ${lengthConstant(name)}>;`]),
    'var<private> pxl_local_id: vec3<u32>;',
    'var<private> pxl_group_id: vec3<u32>;',
    'fn local_size(d: u32) -> u32 { if (d > 2u) { return 1u; } return vec3<u32>(pxl_l0, pxl_l1, pxl_l2)[d]; }',
    'fn global_size(d: u32) -> u32 { if (d > 2u) { return 1u; } return pxl_args.pxl_range.global[d]; }',
    'fn num_groups(d: u32) -> u32 { if (d > 2u) { return 1u; } return pxl_args.pxl_range.groups[d]; }',
    'fn local_id(d: u32) -> u32 { if (d > 2u) { return 0u; } return pxl_local_id[d]; }',
    'fn group_id(d: u32) -> u32 { if (d > 2u) { return 0u; } return pxl_group_id[d]; }',
    'fn global_id(d: u32) -> u32 { if (d > 2u) { return 0u; } return pxl_group_id[d] * local_size(d) + pxl_local_id[d]; }',
    // mu.barrier() makes device-memory writes visible across it too, hence storageBarrier.
    'fn barrier() { storageBarrier(); workgroupBarrier(); }',
  ];
  // Offsets and sizes as lets read from the uniform: WGSL's uniformity analysis then knows them
  // uniform, so loops bounded by them may contain barrier(). The private variables of the same
  // names remain for helper functions in the declarations.
  const views = storage.flatMap((p) => [`  let ${p.name}_offset: u32 = pxl_args.${p.name}.base;`, `  let ${p.name}_size: u32 = pxl_args.${p.name}.size;`]);
  const tail = [
    '}',
    '@compute @workgroup_size(pxl_l0, pxl_l1, pxl_l2)',
    `fn ${ENTRY_POINT}(@builtin(workgroup_id) pxl_wid: vec3<u32>, @builtin(num_workgroups) pxl_nwg: vec3<u32>, @builtin(local_invocation_id) pxl_lid: vec3<u32>) {`,
    '  let pxl_end = min(pxl_chunk.end_batch * pxl_chunk.batch_size, pxl_chunk.task_count);',
    '  let pxl_flat = pxl_chunk.first_batch * pxl_chunk.batch_size + pxl_wid.y * pxl_nwg.x + pxl_wid.x;',
    '  if (pxl_flat >= pxl_end) { return; }',
    '  let pxl_n = pxl_args.pxl_range.groups;',
    '  pxl_task_idx = pxl_flat;',
    '  pxl_group_id = vec3<u32>(pxl_flat % pxl_n.x, (pxl_flat / pxl_n.x) % pxl_n.y, pxl_flat / (pxl_n.x * pxl_n.y));',
    '  pxl_local_id = pxl_lid;',
    ...storage.flatMap((p) => [`  ${p.name}_offset = pxl_args.${p.name}.base;`, `  ${p.name}_size = pxl_args.${p.name}.size;`]),
    '  pxl_group();',
    '}',
    '',
  ];
  return assembleProgram(spec, head, ['// ---- work-item function ----', 'fn pxl_group() {', ...constantLets(signature), ...views], tail);
}

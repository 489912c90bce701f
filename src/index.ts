/**
 * pxl: a parallel kernel-execution runtime. Write a data-parallel kernel once, run it on every CPU
 * core over shared memory.
 *
 * @packageDocumentation
 */
export * from './api.js';

// What needs files or other machines.
export { writeTrace } from './pxl/trace.js';
export { readPcfFile } from './pcf/pcfFileRead.js';
export { readPcfNpz } from './pcf/npz.js';
export { writePcfNpz } from './pcf/npzWriter.js';
export type { ResultFile, ToFile } from './pcf/operations.js';
export type { FileLayout } from './blocks/npyLayout.js';
// Several machines: the `cluster` option of the operations, and the worker they run on.
export { runBlocksOnCluster, runWorker } from './cluster/index.js';
export type { ClusterBlocksOptions, ClusterOpFactory, ClusterOpSetup, ClusterOptions, ClusterStatus, ClusterTlsOptions, WorkerOptions } from './cluster/index.js';
// What a kernel module's cluster operation implements.
export type { BlockLayout, BlockOp, BufferSlot } from './blocks/blockOp.js';
export type { Band, BlockInfo, BlockMode, BlockScheduler } from './blocks/blockScheduler.js';

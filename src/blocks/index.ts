/**
 * The generic pairwise block engine: a scheduler that cuts a pairwise matrix into blocks, triangle
 * skip modes, output containers with their block writers, offset data for variable-length inputs,
 * and the BlockOp policy an operation implements. Nothing here knows what the items are.
 */
export { BLOCK_MODES, BLOCK_SCHEDULER_DEFAULTS, BlockScheduler, subdivide } from './blockScheduler.js';
export { maxOutputElementsFor } from './outputBudget.js';
export type { Band, BlockInfo, BlockMode, BlockSchedulerOptions } from './blockScheduler.js';
export { TRIANGLE_SKIP_MODES, computesPair, pairsInBlock, pairsInBlocks } from './triangleSkip.js';
export type { TriangleSkipMode } from './triangleSkip.js';
export { FLOAT_DTYPES, allocFloatArray, floatDTypeOf } from './floatArray.js';
export type { FloatArray, FloatDType } from './floatArray.js';
export { DenseTensor } from './denseTensor.js';
export { DistanceMatrix, condensedIndex } from './distanceMatrix.js';
export { SymmetricMatrix } from './symmetricMatrix.js';
export { DenseWriter, DistanceMatrixWriter, SymmetricMatrixWriter } from './resultWriter.js';
export type { ResultWriter } from './resultWriter.js';
export { maxSubsetElements, offsetData, offsetDataFrom, subset } from './offsetData.js';
export type { ChannelArray, ChannelCtor, ChannelsOf, OffsetData } from './offsetData.js';
export type { BlockLayout, BlockOp, BufferSlot } from './blockOp.js';
export { DeviceStorage } from './deviceStorage.js';
export type { DeviceMemory, DeviceStorageSpec } from './deviceStorage.js';
export { runBlockPipeline } from './blockPipeline.js';
export { MultiDeviceBlockOp } from './multiDeviceBlockOp.js';
export type { DeviceSlot, MultiDeviceStorage } from './multiDeviceBlockOp.js';
export type { BlockPipelineOptions, BlockProgress } from './blockPipeline.js';
export { FILE_LAYOUTS, npyFileLayout, npyHeader } from './npyLayout.js';
export type { FileLayout, NpyFileLayout } from './npyLayout.js';
export { stageBlock, stagedElements } from './blockStaging.js';
export type { StagedRun } from './blockStaging.js';
export { NpyFileSink } from './npyFileSink.js';
export type { NpyFileSinkOptions } from './npyFileSink.js';
export { BlockJournal, hashParts, journalMismatch, readJournal } from './blockJournal.js';
export type { JournalContents, JournalHeader } from './blockJournal.js';
export { capacityProbe, checkDiskSpace, checkMemory, formatBytes } from './capacityCheck.js';
export type { WayOut } from './capacityCheck.js';
export { holdPartialFiles, partialPathsFor, processAlive, releasePartialFiles, removeHeldPartialFilesSync, removePartial, stalePartials } from './partialFiles.js';
export type { PartialPaths, StalePartial } from './partialFiles.js';

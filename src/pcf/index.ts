/**
 * Piecewise constant functions: the type and its validation, the flattened set layout, the CPU
 * integration kernels, single-pair distances, JSON and .npz input, .npz and .npy output and seeded random PCFs.
 */
export { FLOAT32_MAX, PCF_DTYPES, Pcf, allocPcfArray, integrationLimit, writeBreakpoints } from './pcf.js';
export type { PcfArray, PcfDtype, PcfFromOptions } from './pcf.js';
export { MAX_SET_BREAKPOINTS, flattenPcfTree, pcfAt, pcfSetFrom, pcfSetFromNested, pcfSize, pcfSubset } from './pcfSet.js';
export type { FlatPcfs, PcfData, PcfLike, PcfSet, PcfSetOptions } from './pcfSet.js';
export {
  L2_INNER,
  MAX_MULTIPLY_P,
  integratePair,
  integrateRow,
  l1Pair,
  l2InnerPair,
  l2Pair,
  lpIntPair,
  lpRealPair,
  pcfOp,
  widenPcfData,
} from './integrate.js';
export type { PcfOp, SkipRule } from './integrate.js';
export { l2InnerProduct, lpDistance, lpNorm, referenceCdist, referenceL2Kernel, referencePdist } from './distance.js';
export { parsePcfJson } from './io.js';
export { readPcfFile } from './pcfFileRead.js';
export type { ParsePcfOptions } from './io.js';
export { decodeNpy, encodeNpy, npyHeader, parseNpyHeader } from './npy.js';
export type { NpyArray, NpyData, NpyHeader } from './npy.js';
export { readPcfNpz } from './npz.js';
export type { ReadPcfNpzOptions } from './npz.js';
export { writePcfNpz } from './npzWriter.js';
export { RANDOM_TIME_SPAN, SeededRng, randomPcfs } from './random.js';
export type { RandomPcfsOptions } from './random.js';

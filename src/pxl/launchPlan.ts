import { checkInteger, checkOneOf, checkOptionsObject, describe } from '../core/validate.js';
import { OptionError } from '../core/errors.js';
import { coreIndex, type Topology } from '../core/topology.js';

/** Largest taskCount (and batchSize) a launch accepts: `(1 << 20) - 1`. */
export const MaxTaskCount = (1 << 20) - 1;

/** Side of the largest square of tasks one launch holds: 1023, as 1024^2 is one more than MaxTaskCount. */
export const MaxSquareSide = Math.floor(Math.sqrt(MaxTaskCount));

/** batchSize used when the Map does not set one. */
export const DefaultBatchSize = 16;

/** How batches are spread over the Job's Clusters: `'compact'` (default) or `'spread'`. */
export type LocalityMode = 'compact' | 'spread';

/**
 * PXL spelling of the locality modes, so callers can write `LocalityMode.SpreadMode`.
 * @example map.setLocalityMode(LocalityMode.SpreadMode);
 */
export const LocalityMode = { CompactMode: 'compact', SpreadMode: 'spread' } as const;

const localityModes: readonly LocalityMode[] = ['compact', 'spread'];
const SHAPE_KEYS: readonly (keyof LaunchShape)[] = ['taskCount', 'batchSize', 'locality', 'topology', 'subs'];
const TOPOLOGY_KEYS: readonly (keyof Topology)[] = ['subs', 'clustersPerSub', 'coresPerCluster'];

/** Everything that decides which core runs which batch of one launch. */
export interface LaunchShape {
  /** Kernel invocations, in [0, MaxTaskCount]; 0 gives an empty plan. */
  taskCount: number;
  /** Tasks per batch, in [1, MaxTaskCount]; see {@link DefaultBatchSize}. */
  batchSize: number;
  locality: LocalityMode;
  /** The whole device. */
  topology: Topology;
  /** The Sub ids the Job owns, in Job order (e.g. `[2, 0]`). */
  subs: readonly number[];
}

/** One core's share: batches `firstBatch + k * batchStride` for `k < batchCount`. */
export interface CorePlan {
  /** Global core index: (sub * clustersPerSub + cluster) * coresPerCluster + core in cluster. */
  core: number;
  firstBatch: number;
  batchStride: number;
  batchCount: number;
}

/** The batches of a launch and the cores that run them. */
export interface LaunchPlan {
  /** `ceil(taskCount / batchSize)`. */
  batchCount: number;
  /** Only cores with at least one batch, ordered by core index. */
  cores: CorePlan[];
}

/**
 * Assigns every batch of a launch to exactly one core of the Job. `compact` fills the Job's
 * Clusters Sub-major in Job order with contiguous balanced chunks; `spread` deals batches
 * round-robin over Clusters with the Sub varying fastest. Active cores are
 * `min(batchCount, cores in the Job)`. Costs O(clusters + active cores); no per-batch arrays.
 *
 * @throws {OptionError} when `shape` is not an object or has an unknown key, or taskCount,
 *   batchSize, locality, topology or subs is missing or out of range.
 * @example
 * planLaunch({ taskCount: 100, batchSize: 16, locality: 'compact', topology, subs: [0] });
 * // => { batchCount: 7, cores: [{ core: 0, firstBatch: 0, batchStride: 1, batchCount: 1 }, ...] }
 */
export function planLaunch(shape: LaunchShape): LaunchPlan {
  if (shape === null || typeof shape !== 'object') throw new OptionError(`planLaunch needs a LaunchShape { taskCount, batchSize, locality, topology, subs }, got ${describe(shape)}`);
  checkOptionsObject('planLaunch shape', shape, SHAPE_KEYS);
  const taskCount = checkInteger('taskCount', shape.taskCount, 0, MaxTaskCount);
  const batchSize = checkInteger('batchSize', shape.batchSize, 1, MaxTaskCount);
  const locality = checkOneOf('locality', shape.locality, localityModes);
  const topology = checkTopology(shape.topology);
  const subs = checkSubs(shape.subs, topology.subs);

  const batchCount = batchCountOf(taskCount, batchSize);
  const nSubs = subs.length;
  const perCluster = topology.coresPerCluster;
  const clusters = nSubs * topology.clustersPerSub;
  const cores: CorePlan[] = [];
  if (batchCount === 0) return { batchCount, cores };

  // Walk Subs in ascending id so the output is already in core order without a sort.
  const order = subs.map((sub, index) => ({ sub, index })).sort((a, b) => a.sub - b.sub);
  for (const { sub, index } of order) {
    for (let cluster = 0; cluster < topology.clustersPerSub; cluster++) {
      const position = locality === 'compact' ? index * topology.clustersPerSub + cluster : cluster * nSubs + index;
      if (position >= batchCount) continue;
      const base = coreIndex(topology, sub, cluster, 0);
      if (locality === 'compact') {
        const [start, count] = balancedChunk(batchCount, clusters, position);
        for (let c = 0; c < perCluster && c < count; c++) {
          const [first, n] = balancedChunk(count, perCluster, c);
          cores.push({ core: base + c, firstBatch: start + first, batchStride: 1, batchCount: n });
        }
      } else {
        const stride = clusters * perCluster;
        for (let c = 0; c < perCluster; c++) {
          const first = position + c * clusters;
          if (first >= batchCount) break;
          cores.push({ core: base + c, firstBatch: first, batchStride: stride, batchCount: Math.ceil((batchCount - first) / stride) });
        }
      }
    }
  }
  return { batchCount, cores };
}

/** Batches of a launch: `ceil(taskCount / batchSize)`, the last one possibly short. */
export function batchCountOf(taskCount: number, batchSize: number): number {
  return Math.ceil(taskCount / batchSize);
}

/**
 * The task range `[start, end)` of one batch; the last batch may be short.
 * @example batchTasks(6, 16, 100) // => [96, 100]
 */
export function batchTasks(batch: number, batchSize: number, taskCount: number): [start: number, end: number] {
  const start = batch * batchSize;
  return [start, Math.min(start + batchSize, taskCount)];
}

/** Part `k` of `total` items split into `parts` contiguous chunks, the first `total % parts` one larger. */
function balancedChunk(total: number, parts: number, k: number): [start: number, count: number] {
  const q = Math.floor(total / parts);
  const r = total % parts;
  return [k * q + Math.min(k, r), q + (k < r ? 1 : 0)];
}

function checkTopology(topology: unknown): Topology {
  if (topology === undefined) throw new OptionError('topology must be the device\'s Topology (ctx.topology), got undefined');
  const t = checkOptionsObject('topology', topology as Topology, TOPOLOGY_KEYS);
  for (const key of TOPOLOGY_KEYS) checkInteger(`topology.${key}`, t[key], 1, Number.MAX_SAFE_INTEGER);
  return t;
}

function checkSubs(subs: unknown, deviceSubs: number): readonly number[] {
  if (!Array.isArray(subs) || subs.length === 0) {
    throw new OptionError(`subs must list at least one Sub id, got ${describe(subs)}`);
  }
  const seen = new Set<number>();
  subs.forEach((sub: unknown, i) => {
    const id = checkInteger(`subs[${i}]`, sub, 0, deviceSubs - 1);
    if (seen.has(id)) throw new OptionError(`subs must be distinct, got Sub ${id} more than once`);
    seen.add(id);
  });
  return subs as readonly number[];
}

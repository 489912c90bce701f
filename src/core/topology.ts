/**
 * The device's shape in PXL terms: Subs hold Clusters, Clusters hold MU cores. Cores are numbered
 * globally Sub-major: core = (sub * clustersPerSub + cluster) * coresPerCluster + coreInCluster.
 */
export interface Topology {
  readonly subs: number;
  readonly clustersPerSub: number;
  readonly coresPerCluster: number;
}

export function coresPerSub(t: Topology): number {
  return t.clustersPerSub * t.coresPerCluster;
}

export function totalCores(t: Topology): number {
  return t.subs * coresPerSub(t);
}

/** Global index of a core from its (sub, cluster, core-in-cluster) coordinates. */
export function coreIndex(t: Topology, sub: number, cluster: number, coreInCluster: number): number {
  return (sub * t.clustersPerSub + cluster) * t.coresPerCluster + coreInCluster;
}

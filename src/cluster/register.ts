/**
 * Plugs the coordinator into the `cluster` option of pdist, cdist and l2Kernel. The NATS clients
 * load only when a call asks for a cluster, so importing pxl costs nothing more without one.
 */
import { setClusterRunner } from '../pcf/clusterHook.js';

setClusterRunner(async (request) => {
  const { runCoordinator } = await import('./coordinator.js');
  return runCoordinator(request);
});

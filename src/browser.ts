/**
 * pxl in a browser: the entry point of the ES module bundle `dist/browser/pxl.js` (the package's
 * `"browser"` export condition). The same API as in Node, less what needs files or other machines:
 * the `out` and `cluster` options are refused with UnsupportedError saying what to do instead, and
 * the functions of file paths and NATS (readPcfFile, readPcfNpz, writePcfNpz, writeTrace,
 * runWorker, runBlocksOnCluster) are not exported. PCFs come in as bytes or text (parsePcfNpz,
 * parsePcfJson) and results go out as bytes (encodeNpy).
 *
 * CPU kernels run on one Web Worker per core over SharedArrayBuffers when the page is cross-origin
 * isolated, and on the page's own thread otherwise (see browserCapabilities); the GPU backend runs
 * on `navigator.gpu`. docs/browser.md tells how to serve and use it.
 *
 * @packageDocumentation
 */
import * as errors from './core/errors.js';
import { UnsupportedError } from './core/errors.js';
import { setClusterRunner } from './pcf/clusterHook.js';

// The bundle is minified, which renames classes: the error classes get their own names back, as
// `error.name` (and so every message a console prints) reads them. Cheaper than keeping every name.
for (const [name, value] of Object.entries(errors)) {
  if (typeof value === 'function' && value.prototype instanceof Error) Object.defineProperty(value, 'name', { value: name });
}

// The cluster option needs NATS connections, which a page cannot open.
setClusterRunner(async (request) => {
  throw new UnsupportedError(`${request.fnName}: the cluster option runs blocks on pxl worker processes through a NATS server, which a browser page cannot reach; leave out cluster to compute on this page's cores or GPU`);
});

export { browserCapabilities } from './platform/browserCapabilities.js';
export type { BrowserCapabilities } from './platform/browserCapabilities.js';
export * from './api.js';

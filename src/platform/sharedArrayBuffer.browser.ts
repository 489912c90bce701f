/**
 * `SharedArrayBuffer` as the browser bundle sees it. A page that is not cross-origin isolated has no
 * such global, and code that names it (`x instanceof SharedArrayBuffer`, the `shared` option of
 * PCF sets) would throw a bare ReferenceError. The build injects this module wherever the code names
 * the global: on an isolated page (and in the workers) it is the real class; elsewhere it is a class
 * that nothing is an instance of, and constructing it throws UnsupportedError with the headers to
 * set.
 */
import { UnsupportedError } from '../core/errors.js';
import { ISOLATION_ADVICE } from './machine.browser.js';

class NoSharedMemory {
  constructor() {
    throw new UnsupportedError(`shared memory (SharedArrayBuffer) is not available: ${ISOLATION_ADVICE}; or leave out the shared option`);
  }
}

const real = (globalThis as { SharedArrayBuffer?: SharedArrayBufferConstructor }).SharedArrayBuffer;
const SharedArrayBufferOrRefusal = real ?? (NoSharedMemory as unknown as SharedArrayBufferConstructor);
export { SharedArrayBufferOrRefusal as SharedArrayBuffer };

/**
 * Garbage collection on an MU core, in a browser: pages cannot ask for a collection (there is no
 * `gc()` and no V8 flag to reach one), so this does nothing and the worker's heap is collected
 * whenever the browser decides. Same exports as garbage.ts, which Node uses.
 */

/** Does nothing: browsers offer no on-demand collection. */
export function collectGarbage(): void {}

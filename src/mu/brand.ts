/**
 * The brand every kernel definition carries (task, batch and group forms alike), in a file of its
 * own so that each form's module can use it without importing another form's module.
 */

/** @internal Brands kernel definitions; registered, so copies of this module agree on it. */
export const KERNEL = Symbol.for('pxl.kernel');

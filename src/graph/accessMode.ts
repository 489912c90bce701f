import { OptionError } from '../core/errors.js';
import { checkBoolean, checkOneOf, checkOptionsObject, describe } from '../core/validate.js';

/** How a kernel uses the buffer points its range mapper names. */
export type AccessMode = 'read' | 'write' | 'read_write';

/** Every access mode, in a fixed order. */
export const ACCESS_MODES: readonly AccessMode[] = Object.freeze(['read', 'write', 'read_write']);

/**
 * An access mode plus the `noInit` promise (SYCL's no_init, Celerity's discard modes): the kernel
 * overwrites every point it accesses before reading it, so the old contents need not be kept or
 * copied to where the kernel runs. Only writing modes can promise it.
 */
export interface Access {
  readonly mode: AccessMode;
  readonly noInit: boolean;
}

/** Options of {@link accessOf}. */
export interface AccessOptions {
  /** The kernel overwrites all it accesses before reading it; only for 'write' and 'read_write'. Default false. */
  noInit?: boolean;
}

const ACCESS_OPTIONS: readonly (keyof AccessOptions)[] = ['noInit'];

/**
 * Makes an {@link Access}.
 * @throws {OptionError} for an unknown mode, or `noInit` on a read ("noInit applies to 'write' and
 * 'read_write' accesses only; a 'read' access needs the buffer's contents").
 * @example accessOf('write', { noInit: true })
 */
export function accessOf(mode: 'read'): Access;
export function accessOf(mode: 'write' | 'read_write', options?: AccessOptions): Access;
export function accessOf(mode: AccessMode, options?: AccessOptions): Access {
  checkOneOf('access mode', mode, ACCESS_MODES);
  const noInit = checkBoolean('noInit', checkOptionsObject('access options', options, ACCESS_OPTIONS).noInit ?? false);
  if (noInit && mode === 'read') throw new OptionError("noInit applies to 'write' and 'read_write' accesses only; a 'read' access needs the buffer's contents");
  return Object.freeze({ mode, noInit });
}

/** Whether the access changes the buffer (write, read_write): the task becomes a producer of the region. */
export function isProducer(a: Access): boolean {
  checkAccess('isProducer', a);
  return a.mode !== 'read';
}

/**
 * Whether the access depends on the buffer's previous contents: every read, and a write without
 * `noInit` (the kernel may leave points untouched, so the old values must survive where it runs).
 */
export function isConsumer(a: Access): boolean {
  checkAccess('isConsumer', a);
  return a.mode === 'read' || !a.noInit;
}

/** Renders an access as `read`, `write`, `read_write (no_init)`. */
export function formatAccess(a: Access): string {
  return a.noInit ? `${a.mode} (no_init)` : a.mode;
}

/** Cheap enough for the task graph, which asks of every access of every task. */
function checkAccess(op: string, a: unknown): void {
  if (typeof (a as Partial<Access> | null)?.mode !== 'string') {
    throw new OptionError(`${op}: a must be an Access (from accessOf('read'), accessOf('write', { noInit: true }), ...), got ${describe(a)}`);
  }
}

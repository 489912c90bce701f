import type { Context } from '../pxl/context.js';

/**
 * Whether `ctx` was destroyed. Its figures go with it, so reading one throws; cleanup after a
 * call asks this first, since a destroyed Context has already released the call's memory and Jobs.
 */
export function isDestroyed(ctx: Context): boolean {
  try {
    ctx.getAttribute('subCount');
    return false;
  } catch {
    return true;
  }
}

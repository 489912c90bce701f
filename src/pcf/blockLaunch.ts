/**
 * The check after each block launch of a pairwise operation: a launch that did not run to the end
 * left its block's results unwritten, so the call must fail rather than return them.
 */
import { StateError } from '../core/errors.js';
import type { Context } from '../pxl/context.js';
import type { KernelMap } from '../pxl/kernelMap.js';
import { Result } from '../pxl/result.js';

/**
 * Throws unless the block's launch ran: its execute was accepted and the Map ended Idle (a failed
 * Map has already thrown from `synchronize`). When the Context was destroyed meanwhile, the
 * Context's own error is thrown, so every call on it fails alike.
 * @throws the Context's error once it is destroyed; StateError when the launch was refused or cancelled.
 */
export function checkLaunch(ctx: Context, map: KernelMap, accepted: Result): void {
  const status = map.getExecuteStatus();
  if (accepted === Result.Success && status === 'Idle') return;
  // Reading a figure of a destroyed Context throws its error.
  ctx.getAttribute('subCount');
  throw new StateError(`a block launch of '${map.kernelName}' did not run (${accepted === Result.Success ? `its Map ended ${status}` : 'its stream refused it'}), so its results were never written; no result was produced`);
}

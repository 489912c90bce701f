/**
 * Per-thread kernel state read by `getTaskIdx()` and friends. It lives on `globalThis` under a
 * registered symbol, so a kernel module that imports a different copy of `pxl/mu` (the package
 * export versus a relative path to the sources) still sees the values its core sets.
 */
export interface MuState {
  taskIdx: number;
  taskCount: number;
  send: (value: unknown) => void;
}

const KEY = Symbol.for('pxl.mu.state');

function outsideKernel(): never {
  throw new Error('mu.message() can only be called from a kernel running on an MU core');
}

export const muState: MuState = ((globalThis as Record<symbol, unknown>)[KEY] ??= {
  taskIdx: 0,
  taskCount: 0,
  send: outsideKernel,
}) as MuState;

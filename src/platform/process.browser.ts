/**
 * The few things pxl's layers above read from Node's `process`, for a browser page: no
 * environment variables (so no `PXL_TRACE`), warnings on the console, and `/` as the directory
 * that relative module paths resolve against (in a page, pass kernel modules as URLs instead).
 * The browser build injects this wherever the code names the global `process`.
 */
export const process = {
  env: {} as Record<string, string | undefined>,
  pid: 0,
  cwd: (): string => '/',
  emitWarning: (message: string, type?: string): void => {
    console.warn(type === undefined ? message : `${type}: ${message}`);
  },
};

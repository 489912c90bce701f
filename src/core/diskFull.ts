/**
 * A full disk, as the file system reports it, told apart from other write errors so that each
 * writer can say what to change (free space, or write elsewhere). No imports: the CLI's earliest
 * paths (closedPipe.ts) use it too.
 */

/** Whether `error` is a file system's "no space left" (ENOSPC) or "quota exceeded" (EDQUOT). */
export function isDiskFull(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

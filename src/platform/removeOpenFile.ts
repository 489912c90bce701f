/**
 * Removing files without waiting for the file system to free their blocks: the names go at once,
 * and the last descriptors to the files, whose closing frees the blocks, are closed by a
 * short-lived helper process instead of this one.
 *
 * Why: a run given up removes its partial result and journal, and the kernel frees a file's blocks
 * when its last name and descriptor are gone, in the call that drops them (or in the exit of the
 * process that held them, which its parent then waits for). On the development machine (ext4
 * mounted with online discard, on a virtual disk) a partial square file of N = 20,000, 1.6 GB of
 * it written in 4,000 to 8,000 extents by the write tiles, took 1.3 to 1.5 s to remove, which made
 * Ctrl-C take 1.5 to 1.65 s where a second is the goal; and while another process kept the disk
 * busy, closing even a small removed file waited up to 10 s for its discard. Handed to a helper,
 * the removal took 3 ms and the command's exit 0.06 to 0.17 s. A helper that cannot be started
 * costs only the wait.
 */
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';

/** An open file to remove: its name, its descriptor, and how to close it. */
export interface OpenFile {
  readonly path: string;
  readonly fd: number;
  close(): Promise<void>;
}

/**
 * Removes each file's name, then closes it while a helper process holds its descriptor; the helper
 * frees the blocks as it exits, so this resolves once the names are gone and the descriptors
 * closed here.
 *
 * @example await removeOpenFiles([{ path: temp, fd: handle.fd, close: () => handle.close() }]);
 */
export async function removeOpenFiles(files: readonly OpenFile[]): Promise<void> {
  for (const { path } of files) await rm(path, { force: true });
  const letGo = holdOpen(files.map((f) => f.fd));
  try {
    for (const file of files) await file.close();
  } finally {
    letGo?.();
  }
}

/**
 * For a process about to exit whose files' names are already removed: starts a helper holding
 * `fds`, so that the exit, which closes them, does not wait for their blocks to be freed. The
 * helper lets go when this process is gone.
 */
export function holdOpenPastExit(fds: readonly number[]): void {
  if (fds.length > 0) holdOpen(fds);
}

/**
 * Starts a helper that holds descriptors `fds` until told to let go (the returned function), or
 * until this process exits: `cat` reading a pipe from this process, which ends it. The descriptors
 * are the helper's once `spawn` returns (it forks and execs before it does); undefined when no
 * helper starts.
 */
function holdOpen(fds: readonly number[]): (() => void) | undefined {
  try {
    // Detached: its exit, which frees the blocks, is nobody's wait; a second Ctrl-C in the terminal does not reach it.
    const helper = spawn('cat', [], { stdio: ['pipe', 'ignore', 'ignore', ...fds], detached: true });
    helper.on('error', () => {});
    if (helper.pid === undefined) return undefined;
    helper.stdin?.on('error', () => {});
    helper.unref();
    (helper.stdin as { unref?: () => void } | null)?.unref?.();
    return () => {
      helper.stdin?.end();
    };
  } catch {
    return undefined;
  }
}

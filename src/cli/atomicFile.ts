/**
 * Atomic output: a command's result goes to a temporary file beside OUTPUT, which is flushed and
 * then renamed over OUTPUT. A rename within one directory is atomic, so OUTPUT is either untouched
 * or complete, never partial; on any error or cancellation the temporary file is removed.
 */
import { constants } from 'node:fs';
import { access, open, rename, rm, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { holdPartialFiles, partialPathsFor, releasePartialFiles, removePartial, stalePartials } from '../blocks/partialFiles.js';
import { isDiskFull } from '../core/diskFull.js';
import { CancelledError, InputFormatError } from '../core/errors.js';

/** Where an output is written, handed to the producer of its contents. */
export interface FileSink {
  /** Appends text (UTF-8) or bytes. Rejects with CancelledError once the signal has aborted. */
  write(chunk: string | Uint8Array): Promise<void>;
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** For a full disk, what to change; else nothing. */
function spaceAdvice(error: unknown, path: string): string {
  if (!isDiskFull(error)) return '';
  return `; free space in ${dirname(path)}, or write the file to another disk`;
}

function cancelled(signal: AbortSignal): CancelledError {
  return new CancelledError('writing the output was cancelled; the output file was not changed', { cause: signal.reason });
}

/**
 * Checks up front, before any expensive work, that `path` can be written: its directory exists and
 * is writable and `path` is not a directory.
 *
 * @throws (rejects) InputFormatError naming `path` and what is wrong.
 */
export async function checkWritable(path: string): Promise<void> {
  const dir = dirname(path);
  try {
    await access(dir, constants.W_OK);
  } catch (error) {
    const code = (error as { code?: unknown } | undefined)?.code;
    const advice = code === 'ENOENT' ? `; create it first (mkdir -p ${dir}), or name a file in a directory that exists` : '; name a file in a directory you may write to';
    throw new InputFormatError(`cannot write to directory ${dir}: ${reason(error)}${advice}`, path, { cause: error });
  }
  if (!(await stat(dir)).isDirectory()) throw new InputFormatError(`cannot write to directory ${dir}: it is a file, not a directory`, path);
  const existing = await stat(path).catch(() => undefined);
  if (existing?.isDirectory() === true) throw new InputFormatError('is a directory; name a file to write', path);
}

/**
 * Writes `path` atomically with the contents `produce` sends to its sink. The temporary file is
 * `.<name>.<pid>.<random>.tmp` in the same directory; those a dead process left for `path` are
 * removed first, and this one is removed even when a second Ctrl-C ends the process.
 *
 * @param signal checked between chunks and before the rename; when it aborts, nothing is renamed.
 * @throws (rejects) InputFormatError naming `path` when the file cannot be written; CancelledError
 *   when `signal` aborts; whatever `produce` rejects with. In every case the temporary file is gone
 *   and `path` is as it was.
 */
export async function writeFileAtomic(path: string, produce: (sink: FileSink) => Promise<void>, signal?: AbortSignal): Promise<void> {
  for (const stale of await stalePartials(path)) await removePartial(stale);
  const temp = partialPathsFor(path).temp;
  // Held from before it exists: a file named with this process's pid and not held is stale.
  holdPartialFiles(temp);
  let handle: FileHandle;
  try {
    handle = await open(temp, 'wx');
  } catch (error) {
    releasePartialFiles(temp);
    throw new InputFormatError(`cannot create a temporary file in ${dirname(path)}: ${reason(error)}`, path, { cause: error });
  }
  let isOpen = true;
  try {
    const sink: FileSink = {
      write: async (chunk) => {
        if (signal?.aborted === true) throw cancelled(signal);
        try {
          // writeFile on a handle appends from the current position and loops until all is written.
          await handle.writeFile(chunk);
        } catch (error) {
          throw new InputFormatError(`cannot write the file: ${reason(error)}${spaceAdvice(error, path)}`, path, { cause: error });
        }
      },
    };
    await produce(sink);
    try {
      await handle.sync();
      isOpen = false;
      await handle.close();
    } catch (error) {
      throw new InputFormatError(`cannot write the file: ${reason(error)}${spaceAdvice(error, path)}`, path, { cause: error });
    }
    if (signal?.aborted === true) throw cancelled(signal);
    try {
      await rename(temp, path);
    } catch (error) {
      throw new InputFormatError(`cannot move the finished file into place: ${reason(error)}`, path, { cause: error });
    }
  } catch (error) {
    if (isOpen) await handle.close().catch(() => undefined);
    await rm(temp, { force: true });
    throw error;
  } finally {
    releasePartialFiles(temp);
  }
}

/**
 * Partial files: a result being written lives in `.<name>.<pid>.<hex>.tmp` beside its target
 * `<name>`, with its journal in `.<name>.<pid>.<hex>.journal`, until it is complete and renamed into
 * place. The pid says which process owns them: files of a process that is no longer alive are
 * stale, to be resumed or removed by the next run for the same target. A pid is not unique over
 * time: in a container pxl is pid 1 run after run, and after a reboot (a power loss) an old pid
 * may name a live process that never saw the files. So files named with this process's own pid
 * are its own only while it holds them, and files last written before this boot are stale
 * whatever process now has their pid.
 *
 * This module also keeps the partial files the current process holds, so that a second Ctrl-C,
 * which must end the process at once, can still remove them synchronously on the way out.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import { uptime } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { holdOpenPastExit } from '../platform/removeOpenFile.js';

/** The files of one partial result. */
export interface PartialPaths {
  /** The data file, renamed over the target when complete. */
  readonly temp: string;
  /** The journal of finished blocks beside it. */
  readonly journal: string;
  /** The process that created them. */
  readonly pid: number;
}

/**
 * Fresh partial paths for `target`, owned by this process.
 *
 * @example partialPathsFor('/data/out.npy').temp // '/data/.out.npy.4242.1f2e3d4c5b6a.tmp'
 */
export function partialPathsFor(target: string): PartialPaths {
  return pathsOf(target, process.pid, randomBytes(6).toString('hex'));
}

function pathsOf(target: string, pid: number, hex: string): PartialPaths {
  const stem = join(dirname(target), `.${basename(target)}.${pid}.${hex}`);
  return { temp: `${stem}.tmp`, journal: `${stem}.journal`, pid };
}

/** Whether process `pid` is alive: signal 0 checks without sending; EPERM means alive but not ours. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A stale partial result: what a dead process left for the same target. */
export interface StalePartial extends PartialPaths {
  /** Which of the two files exist. */
  readonly hasTemp: boolean;
  readonly hasJournal: boolean;
}

/**
 * The partial files of `target` whose owner is no longer alive, the temp file and journal of one
 * owner paired, in the directory's order.
 *
 * @param alive liveness test, replaceable for tests. Default {@link processAlive}.
 */
export async function stalePartials(target: string, alive: (pid: number) => boolean = processAlive): Promise<StalePartial[]> {
  const dir = dirname(target);
  const pattern = new RegExp(`^\\.${escapeRegExp(basename(target))}\\.(\\d+)\\.([0-9a-f]+)\\.(tmp|journal)$`);
  const found = new Map<string, { pid: number; hex: string; temp: boolean; journal: boolean }>();
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const m = pattern.exec(name);
    if (m === null) continue;
    const pid = Number(m[1]);
    if (pid === process.pid ? held.has(resolve(dir, name)) : alive(pid) && !(await beforeBoot(join(dir, name)))) continue;
    const key = `${m[1]}.${m[2]}`;
    const entry = found.get(key) ?? { pid, hex: m[2]!, temp: false, journal: false };
    if (m[3] === 'tmp') entry.temp = true;
    else entry.journal = true;
    found.set(key, entry);
  }
  return [...found.values()].map((e) => ({ ...pathsOf(target, e.pid, e.hex), hasTemp: e.temp, hasJournal: e.journal }));
}

/**
 * Whether `path` was last written before this machine booted (a second of slack for the clock),
 * so that no process alive now can be writing it. False when it cannot be read.
 */
async function beforeBoot(path: string): Promise<boolean> {
  const written = await stat(path).then((s) => s.mtimeMs, () => Infinity);
  return written < Date.now() - uptime() * 1000 - 1000;
}

/** Removes both files of a partial result; missing files are fine. */
export async function removePartial(paths: PartialPaths): Promise<void> {
  await rm(paths.temp, { force: true });
  await rm(paths.journal, { force: true });
}

/** Partial files this process must remove if forced to end, with the descriptor each is open as, if any. */
const held = new Map<string, number | undefined>();

/** Records files this process must remove if it is forced to end before it can clean up. */
export function holdPartialFiles(...paths: string[]): void {
  for (const p of paths) if (!held.has(resolve(p))) held.set(resolve(p), undefined);
}

/** Records a held partial file's open descriptor (see {@link removeHeldPartialFilesSync}). */
export function partialFileOpenAs(path: string, fd: number): void {
  held.set(resolve(path), fd);
}

/** Forgets files this process no longer needs to remove (renamed into place, or removed). */
export function releasePartialFiles(...paths: string[]): void {
  for (const p of paths) held.delete(resolve(p));
}

/**
 * Removes every partial file this process holds, synchronously: for a process that must exit now
 * (a second Ctrl-C) and cannot wait for the asynchronous cleanup. Files still open are handed to a
 * helper process first (removeOpenFile.ts), so the exit does not wait for the file system to free
 * their blocks. Returns the paths removed.
 */
export function removeHeldPartialFilesSync(): string[] {
  const removed = [...held.keys()];
  for (const p of removed) rmSync(p, { force: true });
  holdOpenPastExit([...held.values()].filter((fd) => fd !== undefined));
  held.clear();
  return removed;
}

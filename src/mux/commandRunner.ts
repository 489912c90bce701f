import type { LaunchHandle } from '../backends/backend.js';
import { StateError } from '../core/errors.js';
import type { Context } from '../pxl/context.js';
import type { TraceTrack } from '../pxl/trace.js';
import type { Command } from './command.js';
import type { CommandGraph } from './commandOrder.js';

/** The first command that failed (by index), and why; the commands that depend on it did not run. */
export interface CommandFailure {
  readonly index: number;
  readonly command: Command;
  readonly error: unknown;
}

type Progress = 'waiting' | 'running' | 'done';

/**
 * Runs a command buffer's commands as their dependencies allow (see commandOrder.ts): a command
 * starts once every command it depends on is done, so independent ones overlap. A kernel launch
 * whose only unfinished dependency is another launch already handed to the backend starts at once,
 * ordered after it by the backend: a chain of dependent launches reaches the cores back to back,
 * with no host round trip between them.
 *
 * After a failure no further command starts; the ones running finish. Resolves (never rejects)
 * once nothing runs, with the failure of the lowest-indexed command that failed, if any.
 */
export function runCommands(ctx: Context, commands: readonly Command[], graph: CommandGraph, track: TraceTrack): Promise<CommandFailure | undefined> {
  const n = commands.length;
  const { before: dependencies, after: dependents } = graph;
  const progress: Progress[] = new Array<Progress>(n).fill('waiting');
  const handles: (LaunchHandle | undefined)[] = new Array<LaunchHandle | undefined>(n);
  let running = 0;
  let failure: CommandFailure | undefined;
  /** Whether `failure` is only a launch that did not run because the one it followed failed. */
  let onlyCancelled = false;

  return new Promise((resolve) => {
    const settleIfIdle = (): void => {
      if (running > 0) return;
      if (failure === undefined && progress.some((p) => p !== 'done')) return;
      resolve(failure);
    };

    const fail = (index: number, error: unknown): void => {
      const cancelled = error instanceof NotRun;
      const better = failure === undefined || (onlyCancelled && !cancelled) || (onlyCancelled === cancelled && index < failure.index);
      if (!better) return;
      failure = { index, command: commands[index]!, error };
      onlyCancelled = cancelled;
    };

    /** Starts command `i` if its dependencies allow; returns without effect otherwise. */
    const tryStart = (i: number): void => {
      if (failure !== undefined || progress[i] !== 'waiting') return;
      let open = 0;
      let after: LaunchHandle | undefined;
      for (const b of dependencies[i]!) {
        if (progress[b] === 'done') continue;
        open++;
        after = handles[b];
      }
      const chained = open === 1 && after !== undefined && commands[i]!.kind === 'launch';
      if (open > 0 && !chained) return;
      progress[i] = 'running';
      running++;
      void execute(i, chained ? after : undefined).then(
        () => {
          progress[i] = 'done';
          running--;
          for (const d of dependents[i]!) tryStart(d);
          settleIfIdle();
        },
        (error: unknown) => {
          running--;
          fail(i, error);
          settleIfIdle();
        },
      );
    };

    const execute = async (i: number, after: LaunchHandle | undefined): Promise<void> => {
      const c = commands[i]!;
      if (c.kind !== 'launch') return runMemoryCommand(ctx, c);
      const handle = await c.map.launchNow(c.args, after, track);
      handles[i] = handle;
      for (const d of dependents[i]!) tryStart(d);
      const outcome = await handle.done;
      if (outcome.kind === 'failed') throw outcome.error;
      // Cancelled: it was ordered after a launch that failed, whose failure is reported instead.
      if (outcome.kind === 'cancelled') throw new NotRun(`launch of '${c.kernel}' did not run: the launch it was ordered after did not complete`);
    };

    for (let i = 0; i < n; i++) if (dependencies[i]!.length === 0) tryStart(i);
    settleIfIdle();
  });
}

/** A launch the backend skipped because the launch before it failed. */
class NotRun extends StateError {}

async function runMemoryCommand(ctx: Context, c: Exclude<Command, { kind: 'launch' }>): Promise<void> {
  switch (c.kind) {
    case 'write':
      return ctx.copyToDevice(c.dst.add(c.offset), c.data);
    case 'read':
      return ctx.copyFromDevice(c.dst, c.src.add(c.offset));
    case 'copy': {
      const tmp = new Uint8Array(c.size);
      await ctx.copyFromDevice(tmp, c.src.add(c.srcOffset));
      return ctx.copyToDevice(c.dst.add(c.dstOffset), tmp);
    }
    case 'fill': {
      const bytes = new Uint8Array(c.size);
      for (let at = 0; at < c.size; at += c.pattern.byteLength) bytes.set(c.pattern, at);
      return ctx.copyToDevice(c.dst.add(c.offset), bytes);
    }
    case 'callback':
      return c.fn();
  }
}

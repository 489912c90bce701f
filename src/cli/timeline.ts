/**
 * Where one pairwise command's time and memory go, stage by stage. With the environment variable
 * `PXL_TIMELINE` set to anything but the empty string, each stage the command reaches prints one
 * line on standard error as it is reached:
 *
 *     pxl timeline: 412.3 ms input read, rss 88.1 MiB, peak 90.5 MiB
 *
 * The time counts from the start of the process (Node's `performance.timeOrigin`), so the first
 * stage includes Node's own start and the loading of pxl's modules; rss is the process's resident
 * memory then, peak its largest so far. bench/cli.mjs runs one command with it to split the
 * command's cost. Unset, nothing is measured or printed.
 */
import { performance } from 'node:perf_hooks';
import type { CliStream } from './terminal.js';

/** The stages of a pairwise command, marked in this order (some only on some paths). */
export type Stage =
  | 'command started'
  | 'options checked'
  | 'devices opening'
  | 'input read'
  | 'devices ready'
  | 'first block done'
  | 'computed'
  | 'devices closed'
  | 'written';

/** Marks stages of one command; {@link Timeline.on} is false when nothing is recorded. */
export interface Timeline {
  readonly on: boolean;
  mark(stage: Stage): void;
}

const OFF: Timeline = { on: false, mark: () => undefined };

/**
 * The timeline of one command, printing on `stderr`: a no-op unless `PXL_TIMELINE` is set.
 *
 * @example const timeline = commandTimeline(env.io.stderr); timeline.mark('input read');
 */
export function commandTimeline(stderr: CliStream, env: NodeJS.ProcessEnv = process.env): Timeline {
  if ((env.PXL_TIMELINE ?? '') === '') return OFF;
  return {
    on: true,
    mark(stage) {
      const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
      // maxRSS is in KiB.
      const line = `pxl timeline: ${performance.now().toFixed(1)} ms ${stage}, rss ${mib(process.memoryUsage.rss())} MiB, peak ${mib(process.resourceUsage().maxRSS * 1024)} MiB`;
      stderr.write(`${line}\n`);
    },
  };
}

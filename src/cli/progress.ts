/**
 * What a command tells the user while and after it runs: a progress bar over the pairs (with the
 * blocks done, and the live workers of a cluster run), drawn on stderr only when stderr is a
 * terminal, and a one-line summary at the end. `--quiet` silences both.
 */
import cliProgress from 'cli-progress';
import type { BlockProgress } from '../blocks/blockPipeline.js';
import type { ClusterStatus } from '../pcf/clusterHook.js';
import type { CliIo } from './terminal.js';

/**
 * A progress bar that appears at the first progress report (when the total is known) and is
 * erased by {@link ProgressBar.stop}. Inert unless enabled and stderr is a terminal.
 */
export class ProgressBar {
  readonly #label: string;
  readonly #io: CliIo;
  readonly #enabled: boolean;
  #bar: cliProgress.SingleBar | undefined;
  /** What the bar says about a cluster run's workers; empty for a local run. */
  #workers = '';
  #away = '';
  #blocks = '';

  /**
   * @param label shown before the bar, e.g. the command name.
   * @param enabled false for `--quiet`.
   */
  constructor(label: string, io: CliIo, enabled: boolean) {
    this.#label = label;
    this.#io = io;
    this.#enabled = enabled && io.stderr.isTTY === true;
  }

  /** The progress callback to pass to a pairwise operation; undefined when no bar is drawn. */
  get onProgress(): ((progress: BlockProgress) => void) | undefined {
    return this.#enabled ? (progress) => this.#update(progress) : undefined;
  }

  /**
   * Takes a cluster run's status into the bar: the live workers (or that the run waits for one).
   * Returns false when no bar is drawn (yet: it appears with the first block), so the caller
   * reports the status another way, and for the end of the run (the bar is erased then).
   */
  clusterStatus(status: ClusterStatus): boolean {
    // The payload goes into the format as it is, so it carries its own separator.
    if (status.kind === 'workers') this.#workers = status.workers.length === 0 ? ' | no live worker' : ` | ${status.workers.length} live worker${status.workers.length === 1 ? '' : 's'} (${status.workers.join(', ')})`;
    else if (status.kind === 'waiting') this.#workers = ` | waiting for a worker (pxl worker --nats ${status.url})`;
    else if (status.kind === 'server') this.#away = status.connected ? '' : ' | NATS server lost, waiting for it';
    else {
      // The run is over: the bar goes, so the caller's line about the shares stands on its own.
      this.stop();
      return false;
    }
    if (!this.#enabled || this.#bar === undefined) return false;
    this.#bar.update({ blocks: this.#blocks, workers: this.#workers + this.#away });
    return true;
  }

  #update(progress: BlockProgress): void {
    this.#blocks = `${progress.blocksDone}/${progress.blocksTotal} blocks`;
    if (this.#bar === undefined) {
      this.#bar = new cliProgress.SingleBar({
        // The bar only needs write(), isTTY and columns; an injected stream provides them.
        stream: this.#io.stderr as unknown as NodeJS.WritableStream,
        format: `${this.#label} [{bar}] {percentage}% | {value}/{total} pairs | {blocks}{workers} | ETA {eta_formatted}`,
        hideCursor: true,
        clearOnComplete: true,
        // Ctrl-C is the CLI's to handle (it cancels and cleans up); the bar is stopped in finally.
        gracefulExit: false,
      }, cliProgress.Presets.shades_classic);
      this.#bar.start(progress.pairsTotal, 0, { blocks: this.#blocks, workers: this.#workers + this.#away });
    }
    this.#bar.update(progress.pairsDone, { blocks: this.#blocks, workers: this.#workers + this.#away });
  }

  /** Erases the bar and stops its redraw timer. Safe to call more than once. */
  stop(): void {
    this.#bar?.stop();
    this.#bar = undefined;
  }
}

/** What the summary line reports. */
export interface Summary {
  /** The command, e.g. `'pdist'`. */
  readonly command: string;
  /** The inputs, e.g. `'4000 PCFs'` or `'20 x 30 PCFs'`. */
  readonly inputs: string;
  /** Pairs computed. */
  readonly pairs: number;
  /** Seconds the computation took. */
  readonly seconds: number;
  /** The file written. */
  readonly output: string;
}

/** `1234567` -> `'1.23 M'`, `512` -> `'512'`: a decimal prefix and two decimals above 1000. */
export function formatCount(value: number): string {
  const prefixes: Array<[number, string]> = [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
  for (const [scale, prefix] of prefixes) {
    if (value >= scale) return `${(value / scale).toFixed(2)} ${prefix}`;
  }
  return value.toFixed(0);
}

/**
 * The summary line, e.g.
 * `pdist: 4000 PCFs, 7998000 pairs in 3.91 s (2.05 M pairs/s) -> out.npy`.
 */
export function formatSummary(s: Summary): string {
  // A timer can read 0 for a tiny input; a microsecond floor keeps the rate finite.
  const rate = s.pairs / Math.max(s.seconds, 1e-6);
  return `${s.command}: ${s.inputs}, ${s.pairs} ${s.pairs === 1 ? 'pair' : 'pairs'} in ${s.seconds.toFixed(2)} s (${formatCount(rate)} pairs/s) -> ${s.output}`;
}

/**
 * The blocks each worker of a cluster run delivered, with its share, e.g.
 * `blocks per worker: a 40 (51%), b 38 (49%)`.
 */
export function formatShares(shares: readonly { readonly worker: string; readonly blocks: number }[]): string {
  const total = shares.reduce((n, s) => n + s.blocks, 0);
  if (total === 0) return 'blocks per worker: none (every block was resumed)';
  return `blocks per worker: ${shares.map((s) => `${s.worker} ${s.blocks} (${Math.round((100 * s.blocks) / total)}%)`).join(', ')}`;
}

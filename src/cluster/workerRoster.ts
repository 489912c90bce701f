/**
 * The coordinator's view of the workers: who sent a heartbeat lately, in the order they were first
 * seen (that order numbers them as the `device` of progress reports), and how many blocks each
 * delivered.
 */
import { HEARTBEAT_MS, WORKER_LIVE_MS } from './protocol.js';

/** What a worker's heartbeat says. */
export interface Heartbeat {
  readonly id: string;
  readonly devices: number;
}

export class WorkerRoster {
  readonly #lastSeen = new Map<string, number>();
  readonly #order: string[] = [];
  readonly #blocks = new Map<string, number>();
  #live: readonly string[] = [];

  /** Notes a heartbeat at time `now` (ms). */
  heard(id: string, now: number): void {
    if (!this.#lastSeen.has(id) && !this.#order.includes(id)) this.#order.push(id);
    this.#lastSeen.set(id, now);
  }

  /** The number of worker `id` (first seen first), counting it in if it is new. */
  deviceOf(id: string): number {
    if (!this.#order.includes(id)) this.#order.push(id);
    return this.#order.indexOf(id);
  }

  /** Counts a block delivered by `id`, counting the worker in if it is new (a run can end before its first heartbeat is heard). */
  delivered(id: string): void {
    if (!this.#order.includes(id)) this.#order.push(id);
    this.#blocks.set(id, (this.#blocks.get(id) ?? 0) + 1);
  }

  /**
   * Recomputes the live workers at `now`; returns them when the set changed since the last call,
   * else undefined.
   */
  refresh(now: number): readonly string[] | undefined {
    const live = this.#order.filter((id) => now - (this.#lastSeen.get(id) ?? -Infinity) <= WORKER_LIVE_MS);
    if (live.length === this.#live.length && live.every((id, k) => id === this.#live[k])) return undefined;
    this.#live = live;
    return live;
  }

  /** Workers alive at the last {@link refresh}. */
  get live(): readonly string[] {
    return this.#live;
  }

  /** Blocks delivered by each worker, in the order workers were first seen. */
  get shares(): ReadonlyMap<string, number> {
    return new Map(this.#order.filter((id) => this.#blocks.has(id)).map((id) => [id, this.#blocks.get(id)!]));
  }
}

/** How often the coordinator looks at the roster. */
export const ROSTER_CHECK_MS = HEARTBEAT_MS;

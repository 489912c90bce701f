import { checkInteger } from '../core/validate.js';

/** In-flight operations a stream holds by default before `execute()` waits for room. */
export const DefaultStreamLimit = 64;

/** One operation on a stream: started when every earlier one on the stream has finished. */
export type StreamOp = () => Promise<void>;

/**
 * An asynchronous work queue. Operations on one stream run one after another in enqueue order;
 * operations on different streams may run at the same time. A stream holds at most `limit`
 * operations (waiting or running); `enqueue` resolves `false` only if the stream is destroyed
 * while the caller waits for room.
 */
let nextTrackId = 1;

/**
 * @internal A fresh track id for execution traces: streams and command buffers draw from one
 * sequence, so their tracks never collide.
 */
export function newTrackId(): number {
  return nextTrackId++;
}

export class Stream {
  readonly limit: number;
  /** Unique per process; the stream's track in execution traces. */
  readonly id = newTrackId();
  /** What traces call this stream. */
  readonly label: string;
  /** @internal */ readonly owner: object;
  /** @internal True for a Job's default stream, which lives and ends with its Job. */
  readonly isDefault: boolean;
  readonly #queue: StreamOp[] = [];
  readonly #waitingForRoom: ((accepted: boolean) => void)[] = [];
  #held = 0;
  #running = false;
  #destroyed = false;

  /** @internal */
  constructor(owner: object, limit = DefaultStreamLimit, label?: string, isDefault = false) {
    this.owner = owner;
    this.isDefault = isDefault;
    this.label = label ?? `stream ${this.id}`;
    this.limit = checkInteger('stream limit', limit, 1, 1 << 20);
  }

  /** Operations waiting or running on the stream. */
  get inFlight(): number {
    return this.#held;
  }

  get destroyed(): boolean {
    return this.#destroyed;
  }

  /**
   * @internal Resolves true once the stream has accepted `op`, false if it was destroyed first.
   * Callers that find the stream full wait first-come first-served, and a caller arriving while
   * others wait queues behind them even if a slot is free at that moment: the slot an operation
   * frees is handed to the oldest waiter (`#held` stays the same), so executes keep their call
   * order on the stream however the event loop interleaves the wake-ups.
   *
   * `signal` withdraws a caller still waiting for room: it resolves false and takes no slot.
   */
  async enqueue(op: StreamOp, signal?: AbortSignal): Promise<boolean> {
    if (this.#destroyed || aborted(signal)) return false;
    if (this.#held < this.limit && this.#waitingForRoom.length === 0) {
      this.#held++;
    } else {
      if (!(await this.#waitForRoom(signal))) return false;
      // The slot is ours; give it back if the stream was destroyed, or the caller withdrew, before
      // this continuation ran.
      if (this.#destroyed || aborted(signal)) {
        this.#release();
        return false;
      }
    }
    this.#queue.push(op);
    if (!this.#running) void this.#pump();
    return true;
  }

  /**
   * @internal Takes back an operation that was accepted and has not started, freeing its room at
   * once (a cancelled execute). False when `op` is not waiting here (running, finished, unknown).
   */
  withdraw(op: StreamOp): boolean {
    const i = this.#queue.indexOf(op);
    if (i < 0) return false;
    this.#queue.splice(i, 1);
    this.#release();
    return true;
  }

  /** @internal Refuses new work and fails every execute still waiting for room. Queued work drains. */
  destroy(): void {
    this.#destroyed = true;
    for (const w of this.#waitingForRoom.splice(0)) w(false);
  }

  #waitForRoom(signal: AbortSignal | undefined): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const withdraw = (): void => {
        const i = this.#waitingForRoom.indexOf(waiter);
        if (i < 0) return; // already handed a slot: the caller's continuation gives it back
        this.#waitingForRoom.splice(i, 1);
        resolve(false);
      };
      const waiter = (accepted: boolean): void => {
        signal?.removeEventListener('abort', withdraw);
        resolve(accepted);
      };
      this.#waitingForRoom.push(waiter);
      signal?.addEventListener('abort', withdraw, { once: true });
    });
  }

  /** Frees one slot: to the oldest waiter if there is one, else back to the stream. */
  #release(): void {
    const next = this.#waitingForRoom.shift();
    if (next !== undefined) next(true);
    else this.#held--;
  }

  async #pump(): Promise<void> {
    this.#running = true;
    for (let op = this.#queue.shift(); op !== undefined; op = this.#queue.shift()) {
      try {
        await op();
      } finally {
        this.#release();
      }
    }
    this.#running = false;
  }
}

/** Read through a call: an abort may come while the caller awaits, which narrowing cannot see. */
function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/**
 * A BlockOp over devices of different kinds: each member op runs its own devices (say one op for
 * the Jobs of a CPU Context and one for a GPU), and the pipeline sees them as one numbered list.
 * Every device still pulls blocks from the pipeline's one shared queue, so a fast device simply
 * takes more blocks, as masspcf spreads blocks over several GPUs.
 */
import { OptionError } from '../core/errors.js';
import type { BlockLayout, BlockOp, BufferSlot } from './blockOp.js';
import type { BlockInfo, BlockScheduler } from './blockScheduler.js';
import type { FloatArray } from './floatArray.js';

/** One device of a {@link MultiDeviceBlockOp}: the member op that runs it, and its number in that op. */
export interface DeviceSlot {
  // Each member keeps its own storage type; the composite only hands it back to the same op.
  readonly op: BlockOp<unknown>;
  /** The device number `op.initStorage` receives for this device. */
  readonly device: number;
}

/** Storage of one device: the member op that runs it and that op's own storage. */
export interface MultiDeviceStorage {
  readonly op: BlockOp<unknown>;
  readonly storage: unknown;
}

/**
 * Pipeline device `d` is `slots[d]`: its member op's device `slots[d].device`. One op may serve
 * several slots (all the Jobs of one Context), and slots of different ops may interleave in
 * whatever order the caller listed its devices.
 *
 * Output buffers of different members may differ in element type only if the result writer takes
 * both (float32 and float64 buffers write into either result dtype).
 *
 * @example
 * const op = new MultiDeviceBlockOp([{ op: cpuOp, device: 0 }, { op: gpuOp, device: 0 }, { op: cpuOp, device: 1 }]);
 * await runBlockPipeline(op, scheduler, writer, { skip, devices: op.devices });
 */
export class MultiDeviceBlockOp implements BlockOp<MultiDeviceStorage> {
  readonly #slots: readonly DeviceSlot[];

  /** @throws OptionError when there is no slot, a device number is not an integer >= 0, or two slots are the same device of one op. */
  constructor(slots: readonly DeviceSlot[]) {
    if (slots.length === 0) throw new OptionError('a multi-device BlockOp needs at least one device');
    slots.forEach((s, d) => {
      if (!Number.isInteger(s.device) || s.device < 0) throw new OptionError(`device ${d}: its number in its op must be an integer >= 0, got ${String(s.device)}`);
      const twin = slots.findIndex((o) => o.op === s.op && o.device === s.device);
      if (twin !== d) throw new OptionError(`devices ${twin} and ${d} are the same device (${s.device}) of one op; each device needs its own storage`);
    });
    this.#slots = [...slots];
  }

  /** Number of devices, to pass as the pipeline's `devices`. */
  get devices(): number {
    return this.#slots.length;
  }

  /** The member op of pipeline device `device`. @throws OptionError for a device that is not one of them. */
  opOf(device: number): BlockOp<unknown> {
    return this.#slot(device).op;
  }

  async initStorage(device: number, scheduler: BlockScheduler): Promise<MultiDeviceStorage> {
    const slot = this.#slot(device);
    return { op: slot.op, storage: await slot.op.initStorage(slot.device, scheduler) };
  }

  outputBuffer(storage: MultiDeviceStorage, slot: BufferSlot): FloatArray {
    return storage.op.outputBuffer(storage.storage, slot);
  }

  execBlock(storage: MultiDeviceStorage, block: BlockInfo, slot: BufferSlot): Promise<void> {
    return storage.op.execBlock(storage.storage, block, slot);
  }

  outputLayout(storage: MultiDeviceStorage): BlockLayout {
    return storage.op.outputLayout?.(storage.storage) ?? 'rows';
  }

  batchElements(storage: MultiDeviceStorage): number {
    return storage.op.batchElements?.(storage.storage) ?? 0;
  }

  async disposeStorage(storage: MultiDeviceStorage): Promise<void> {
    await storage.op.disposeStorage?.(storage.storage);
  }

  #slot(device: number): DeviceSlot {
    const slot = Number.isInteger(device) ? this.#slots[device] : undefined;
    if (slot === undefined) throw new OptionError(`device ${device} is not one of the ${this.#slots.length} devices`);
    return slot;
  }
}

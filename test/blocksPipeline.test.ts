import { describe, expect, it } from 'vitest';
import {
  BlockScheduler,
  DenseTensor,
  DenseWriter,
  DistanceMatrix,
  DistanceMatrixWriter,
  MultiDeviceBlockOp,
  runBlockPipeline,
  type BlockInfo,
  type BlockOp,
  type BufferSlot,
} from '../src/blocks/index.js';
import { CancelledError, LogicError, OptionError } from '../src/core/errors.js';

interface Storage {
  device: number;
  out: [Float64Array, Float64Array];
}

/** A host-only BlockOp computing f(i, j) = i * 1000 + j + 1, recording what happened in which order. */
function recordingOp(options: { skipDiagAndAbove: boolean; failAt?: number; gate?: Promise<void>; columns?: boolean }) {
  const events: string[] = [];
  const disposed: number[] = [];
  const byDevice = new Map<number, number[]>();
  const op: BlockOp<Storage> = {
    initStorage: (device, s) => ({ device, out: [new Float64Array(s.maxBlockElements), new Float64Array(s.maxBlockElements)] }),
    outputBuffer: (storage, slot) => storage.out[slot],
    async execBlock(storage: Storage, block: BlockInfo, slot: BufferSlot) {
      events.push(`exec ${block.index}`);
      byDevice.set(storage.device, [...(byDevice.get(storage.device) ?? []), block.index]);
      if (options.gate !== undefined) await options.gate;
      await new Promise((r) => setImmediate(r));
      if (block.index === options.failAt) throw new Error(`block ${block.index} failed`);
      const out = storage.out[slot];
      for (let r = 0; r < block.rowCount; r++) {
        for (let c = 0; c < block.colCount; c++) {
          const i = block.rowFirst + r;
          const j = block.colFirst + c;
          if (!options.skipDiagAndAbove || i > j) out[options.columns === true ? c * block.rowCount + r : r * block.colCount + c] = i * 1000 + j + 1;
        }
      }
    },
    ...(options.columns === true && { outputLayout: () => 'columns' as const }),
    disposeStorage: (storage) => {
      disposed.push(storage.device);
    },
  };
  return { op, events, disposed, byDevice };
}

function tracingWriter<W extends { write(b: BlockInfo, buf: Float64Array): void }>(inner: W, events: string[]) {
  return { write: (b: BlockInfo, buf: Float64Array) => { events.push(`scatter ${b.index}`); inner.write(b, buf); } };
}

describe('runBlockPipeline', () => {
  it('fills a distance matrix exactly as a direct computation would', async () => {
    const n = 23;
    const scheduler = new BlockScheduler({ nRows: n, nCols: n, mode: 'lowerTriangle', maxOutputElements: 40, nSplitsHint: 1 });
    const { op } = recordingOp({ skipDiagAndAbove: true });
    const m = new DistanceMatrix(n);
    await runBlockPipeline(op, scheduler, new DistanceMatrixWriter(m), { skip: 'lowerTriangleSkipDiag' });
    for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) expect(m.get(i, j)).toBe(i * 1000 + j + 1);
  });

  it('launches block N+1 before it scatters block N on one device', async () => {
    const scheduler = new BlockScheduler({ nRows: 6, nCols: 9, mode: 'full', maxOutputElements: 9 });
    const { op, events } = recordingOp({ skipDiagAndAbove: false });
    const t = new DenseTensor([6, 9]);
    await runBlockPipeline(op, scheduler, tracingWriter(new DenseWriter(t), events), { skip: 'none' });
    const blocks = scheduler.blocks.length;
    expect(blocks).toBe(6);
    const expected = ['exec 0'];
    for (let b = 1; b < blocks; b++) expected.push(`exec ${b}`, `scatter ${b - 1}`);
    expected.push(`scatter ${blocks - 1}`);
    expect(events).toEqual(expected);
    expect(t.get(5, 8)).toBe(5009);
  });

  it('spreads blocks over several devices and disposes every storage', async () => {
    const scheduler = new BlockScheduler({ nRows: 30, nCols: 30, mode: 'full', maxOutputElements: 25 });
    const { op, disposed, byDevice } = recordingOp({ skipDiagAndAbove: false });
    const t = new DenseTensor([30, 30]);
    await runBlockPipeline(op, scheduler, new DenseWriter(t), { skip: 'none', devices: 3 });
    expect(disposed.sort()).toEqual([0, 1, 2]);
    expect([...byDevice.values()].every((list) => list.length > 0)).toBe(true);
    expect([...byDevice.values()].flat().sort((a, b) => a - b)).toEqual(scheduler.blocks.map((b) => b.index).sort((a, b) => a - b));
    expect(t.get(29, 0)).toBe(29001);
  });

  it('reports progress after every block up to the total pair count', async () => {
    const n = 10;
    const scheduler = new BlockScheduler({ nRows: n, nCols: n, mode: 'lowerTriangle', maxOutputElements: 9 });
    const { op } = recordingOp({ skipDiagAndAbove: true });
    const seen: number[] = [];
    await runBlockPipeline(op, scheduler, new DistanceMatrixWriter(new DistanceMatrix(n)), {
      skip: 'lowerTriangleSkipDiag',
      onProgress: (p) => {
        seen.push(p.pairsDone);
        expect(p.blocksTotal).toBe(scheduler.blocks.length);
        expect(p.pairsTotal).toBe((n * (n - 1)) / 2);
      },
    });
    expect(seen).toHaveLength(scheduler.blocks.length);
    expect(seen.at(-1)).toBe((n * (n - 1)) / 2);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
  });

  it('rejects with CancelledError when the signal aborts, starts no more blocks, and disposes storage', async () => {
    const scheduler = new BlockScheduler({ nRows: 20, nCols: 20, mode: 'full', maxOutputElements: 4 });
    const controller = new AbortController();
    const { op, events, disposed } = recordingOp({ skipDiagAndAbove: false });
    const run = runBlockPipeline(op, scheduler, new DenseWriter(new DenseTensor([20, 20])), {
      skip: 'none',
      signal: controller.signal,
      onProgress: (p) => {
        if (p.blocksDone === 3) controller.abort();
      },
    });
    await expect(run).rejects.toBeInstanceOf(CancelledError);
    expect(events.filter((e) => e.startsWith('exec')).length).toBeLessThan(scheduler.blocks.length);
    expect(disposed).toEqual([0]);
  });

  it("hands column-major blocks to the writer's writeColumns, across devices of both layouts", async () => {
    const n = 31;
    const scheduler = new BlockScheduler({ nRows: n, nCols: n, mode: 'lowerTriangle', maxOutputElements: 50 });
    const rows = recordingOp({ skipDiagAndAbove: true });
    const columns = recordingOp({ skipDiagAndAbove: true, columns: true });
    const op = new MultiDeviceBlockOp([{ op: rows.op as BlockOp<unknown>, device: 0 }, { op: columns.op as BlockOp<unknown>, device: 0 }]);
    const m = new DistanceMatrix(n);
    await runBlockPipeline(op, scheduler, new DistanceMatrixWriter(m), { skip: 'lowerTriangleSkipDiag', devices: 2 });
    expect(columns.byDevice.get(0)?.length).toBeGreaterThan(0);
    for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) expect(m.get(i, j)).toBe(i * 1000 + j + 1);
  });

  it('runs neighbouring blocks as one launch on a device with batchElements, in either layout, and scatters each block', async () => {
    const n = 40;
    for (const columns of [true, false]) {
      const scheduler = new BlockScheduler({ nRows: n, nCols: n, mode: 'lowerTriangle', maxOutputElements: 25 });
      // Column-major batches run along a row band (the queue's order); row-major ones down a column
      // band, so hand the blocks over in column-major grid order for those.
      const blocks = columns ? scheduler.blocks : [...scheduler.blocks].sort((x, y) => x.colFirst - y.colFirst || x.rowFirst - y.rowFirst);
      const base = recordingOp({ skipDiagAndAbove: true, columns });
      const launched: BlockInfo[] = [];
      const op: BlockOp<Storage> = {
        ...base.op,
        initStorage: (device) => ({ device, out: [new Float64Array(100), new Float64Array(100)] }),
        batchElements: () => 100,
        execBlock(storage, block, slot) {
          launched.push(block);
          return base.op.execBlock(storage, block, slot);
        },
      };
      const m = new DistanceMatrix(n);
      const progress: number[] = [];
      await runBlockPipeline(op, scheduler, new DistanceMatrixWriter(m), { skip: 'lowerTriangleSkipDiag', blocks, onProgress: (e) => progress.push(e.blocksDone) });
      for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) expect(m.get(i, j)).toBe(i * 1000 + j + 1);
      // Every block was scattered and counted once; launches of up to four 5 x 5 blocks.
      expect(progress).toEqual(scheduler.blocks.map((_, k) => k + 1));
      expect(launched.length).toBeLessThan(scheduler.blocks.length);
      expect(Math.max(...launched.map((b) => b.rowCount * b.colCount))).toBe(100);
    }
  });

  it('rejects column-major blocks for a writer that takes rows only, and disposes storage', async () => {
    const scheduler = new BlockScheduler({ nRows: 6, nCols: 6, mode: 'full', maxOutputElements: 9 });
    const { op, disposed } = recordingOp({ skipDiagAndAbove: false, columns: true });
    await expect(runBlockPipeline(op, scheduler, new DenseWriter(new DenseTensor([6, 6])), { skip: 'none' })).rejects.toThrow(
      new LogicError('device 0 computed block 0 column-major, but the result writer takes rows only; make the op for a writer with writeColumns'),
    );
    expect(disposed).toEqual([0]);
  });

  it('rejects with the first block error and disposes storage', async () => {
    const scheduler = new BlockScheduler({ nRows: 12, nCols: 12, mode: 'full', maxOutputElements: 9 });
    const { op, disposed } = recordingOp({ skipDiagAndAbove: false, failAt: 2 });
    await expect(runBlockPipeline(op, scheduler, new DenseWriter(new DenseTensor([12, 12])), { skip: 'none', devices: 2 })).rejects.toThrow('block 2 failed');
    expect(disposed.sort()).toEqual([0, 1]);
  });

  it('rejects with a launch that fails while the block before it is still being written, never leaving it unhandled', async () => {
    const scheduler = new BlockScheduler({ nRows: 6, nCols: 9, mode: 'full', maxOutputElements: 9 });
    const { op, disposed } = recordingOp({ skipDiagAndAbove: false, failAt: 1 });
    // A file sink's write takes turns of the event loop; block 1's launch fails during block 0's.
    const slowWriter = {
      async write() {
        for (let k = 0; k < 5; k++) await new Promise((r) => setTimeout(r, 1));
      },
    };
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      await expect(runBlockPipeline(op, scheduler, slowWriter, { skip: 'none' })).rejects.toThrow('block 1 failed');
      await new Promise((r) => setTimeout(r, 20));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
    expect(disposed).toEqual([0]);
  });
});

describe('MultiDeviceBlockOp', () => {
  it('runs each pipeline device on its own op and device number, in the order listed', async () => {
    const n = 40;
    const scheduler = new BlockScheduler({ nRows: n, nCols: n, mode: 'lowerTriangle', maxOutputElements: 30 });
    const first = recordingOp({ skipDiagAndAbove: true });
    const second = recordingOp({ skipDiagAndAbove: true });
    const op = new MultiDeviceBlockOp([
      { op: first.op, device: 0 },
      { op: second.op, device: 0 },
      { op: first.op, device: 1 },
    ]);
    expect(op.devices).toBe(3);
    expect(op.opOf(1)).toBe(second.op);
    const perDevice = new Map<number, number[]>();
    const m = new DistanceMatrix(n);
    await runBlockPipeline(op, scheduler, new DistanceMatrixWriter(m), {
      skip: 'lowerTriangleSkipDiag',
      devices: op.devices,
      onProgress: (p) => perDevice.set(p.device, [...(perDevice.get(p.device) ?? []), p.blocksDone]),
    });
    for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) expect(m.get(i, j)).toBe(i * 1000 + j + 1);
    // Pipeline devices 0 and 2 are the first op's devices 0 and 1; device 1 is the second op's 0.
    expect([...first.byDevice.keys()].sort()).toEqual([0, 1]);
    expect([...second.byDevice.keys()]).toEqual([0]);
    expect(first.byDevice.get(0)!.length).toBe(perDevice.get(0)!.length);
    expect(first.byDevice.get(1)!.length).toBe(perDevice.get(2)!.length);
    expect(second.byDevice.get(0)!.length).toBe(perDevice.get(1)!.length);
    expect(first.disposed.sort()).toEqual([0, 1]);
    expect(second.disposed).toEqual([0]);
  });

  it('refuses an empty device list and one device listed twice', () => {
    const { op } = recordingOp({ skipDiagAndAbove: false });
    expect(() => new MultiDeviceBlockOp([])).toThrow(new OptionError('a multi-device BlockOp needs at least one device'));
    expect(() => new MultiDeviceBlockOp([{ op: op, device: 0 }, { op: op, device: 0 }])).toThrow(
      new OptionError('devices 0 and 1 are the same device (0) of one op; each device needs its own storage'),
    );
    expect(() => new MultiDeviceBlockOp([{ op: op, device: 0 }]).opOf(1)).toThrow(new OptionError('device 1 is not one of the 1 devices'));
  });
});

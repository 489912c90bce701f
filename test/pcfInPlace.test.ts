import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext, pdist, pcfSetFrom, randomPcfs, type Context, type PcfSet } from '../src/index.js';
import { uploadPcfSet } from '../src/pcf/devicePcfSet.js';

/**
 * A set in shared memory (made or read with `shared: true`, as the CLI reads its inputs) is read
 * by the CPU cores where it lies: the process holds it once, not once more for the cores.
 */

let ctx: Context;
beforeAll(async () => {
  ctx = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } });
});
afterAll(async () => {
  await ctx.destroy();
});

const copy = (set: PcfSet) => ({ times: Array.from(set.times), values: Array.from(set.values), offsets: Array.from(set.offsets) });

describe('a PCF set in shared memory on the CPU cores', () => {
  it('is read in place, not copied: only the offsets take device memory, and freeing gives the set back untouched', async () => {
    const set = randomPcfs({ n: 300, points: 12, seed: 1, shared: true });
    const before = copy(set);
    const free = ctx.availableMemSize;
    const device = await uploadPcfSet(ctx, set, 'float64', ctx, true);
    expect(device.adopted).toHaveLength(2);
    expect(device.pointers).toHaveLength(1);
    // The cores' view of the times is the set's own memory.
    const times = ctx.hostView(device.times.ptr, 'float64', set.times.length);
    expect(times.buffer).toBe(set.times.buffer);
    expect(ctx.availableMemSize).toBe(free - set.times.buffer.byteLength - set.values.buffer.byteLength - device.pointers[0]!.byteLength);
    for (const ptr of device.pointers) ctx.memFree(ptr);
    for (const ptr of device.adopted) ctx.memFree(ptr);
    expect(ctx.availableMemSize).toBe(free);
    expect(copy(set)).toEqual(before);
  });

  it('is copied as before when it is not shared, of another dtype, empty, or not asked to be read in place', async () => {
    const cases: [string, PcfSet, 'float32' | 'float64', boolean][] = [
      ['not shared', randomPcfs({ n: 50, points: 5, seed: 2 }), 'float64', true],
      ['float64 set to float32', randomPcfs({ n: 50, points: 5, seed: 3, shared: true }), 'float32', true],
      ['empty', pcfSetFrom([], { shared: true }), 'float64', true],
      ['not in place', randomPcfs({ n: 50, points: 5, seed: 4, shared: true }), 'float64', false],
    ];
    for (const [name, set, dtype, inPlace] of cases) {
      const device = await uploadPcfSet(ctx, set, dtype, ctx, inPlace);
      expect(device.adopted, name).toEqual([]);
      expect(device.pointers, name).toHaveLength(3);
      for (const ptr of device.pointers) ctx.memFree(ptr);
    }
  });

  it('gives pdist results bit for bit equal to those of a set that is not shared, and gives its memory back after the call', async () => {
    for (const dtype of ['float64', 'float32'] as const) {
      const plain = randomPcfs({ n: 400, points: 15, seed: 5, dtype });
      const shared = randomPcfs({ n: 400, points: 15, seed: 5, dtype, shared: true });
      // The first call fills the Context's pool of block buffers, which later calls reuse.
      const a = await pdist(plain, { devices: [ctx] });
      const free = ctx.availableMemSize;
      const b = await pdist(shared, { devices: [ctx] });
      expect(Buffer.from(b.condensed.buffer).equals(Buffer.from(a.condensed.buffer)), dtype).toBe(true);
      expect(ctx.availableMemSize, dtype).toBe(free);
    }
  });
});

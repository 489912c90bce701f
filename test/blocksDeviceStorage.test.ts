import { describe, expect, it } from 'vitest';
import { DeviceStorage } from '../src/blocks/deviceStorage.js';
import { OutOfMemoryError } from '../src/index.js';

/** A device memory that records what is allocated and freed, failing the allocation numbered `failAt`. */
function recordingMemory(failAt = Infinity) {
  const live = new Set<number>();
  let next = 0;
  return {
    live,
    memAlloc(bytes: number): number {
      if (next === failAt) throw new OutOfMemoryError(bytes, 0);
      live.add(next);
      return next++;
    },
    memFree(ptr: number): void {
      expect(live.delete(ptr)).toBe(true);
    },
  };
}

describe('DeviceStorage', () => {
  it('allocates two result buffers with a host array each and frees both on dispose', () => {
    const memory = recordingMemory();
    const storage = DeviceStorage.allocate(memory, { bytes: 32, host: (ptr) => new Float64Array(4).fill(ptr), build: (size) => `launch ${size}` });
    expect(storage.out).toEqual([0, 1]);
    expect([...storage.outputBuffer(0)]).toEqual([0, 0, 0, 0]);
    expect([...storage.outputBuffer(1)]).toEqual([1, 1, 1, 1]);
    storage.dispose();
    expect(memory.live.size).toBe(0);
  });

  it('builds a launch once per block size and reuses it', () => {
    const built: number[] = [];
    const storage = DeviceStorage.allocate(recordingMemory(), { bytes: 8, host: () => new Float32Array(2), build: (size) => (built.push(size), { size }) });
    const a = storage.launch(16);
    expect(storage.launch(16)).toBe(a);
    storage.launch(8);
    expect(built).toEqual([16, 8]);
  });

  it('frees what it allocated when the second allocation or a host array fails', () => {
    const memory = recordingMemory(1);
    expect(() => DeviceStorage.allocate(memory, { bytes: 8, host: () => new Float32Array(2), build: () => 0 })).toThrow(OutOfMemoryError);
    expect(memory.live.size).toBe(0);
    const other = recordingMemory();
    expect(() =>
      DeviceStorage.allocate(other, {
        bytes: 8,
        host: () => {
          throw new RangeError('no view');
        },
        build: () => 0,
      }),
    ).toThrow('no view');
    expect(other.live.size).toBe(0);
  });
});

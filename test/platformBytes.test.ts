/**
 * Input as bytes, for pages (and Node): parsePcfNpz against readPcfNpz on the same file, its
 * refusals; and the browser twins of the platform seam that Node can run: file paths refused with
 * what to do instead, machine figures from `navigator`.
 */
import { mkdtemp, readFile, rm, writeFile as writeNodeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { zipSync } from 'fflate';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ArgumentError, InputFormatError, OptionError, parsePcfNpz, readPcfNpz, randomPcfs, UnsupportedError, writePcfNpz } from '../src/index.js';
import { open, writeFile } from '../src/platform/files.browser.js';
import { availableCores, isolationAdvice, sharedMemoryAvailable, totalMemory } from '../src/platform/machine.browser.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pxl-bytes-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('parsePcfNpz', () => {
  it('reads the bytes of an .npz file to the same set as readPcfNpz reads the file, in either dtype', async () => {
    const set = randomPcfs({ n: 50, points: 9, seed: 4 });
    const file = join(dir, 'set.npz');
    const chunks: Uint8Array[] = [];
    await writePcfNpz(set, async (chunk) => {
      chunks.push(chunk.slice());
    });
    await writeNodeFile(file, Buffer.concat(chunks));
    const bytes = new Uint8Array(await readFile(file));
    for (const dtype of ['float64', 'float32'] as const) {
      const fromBytes = parsePcfNpz(bytes, { dtype });
      const fromFile = await readPcfNpz(file, { dtype });
      expect(fromBytes.dtype).toBe(dtype);
      expect(fromBytes.count).toBe(50);
      expect([...fromBytes.offsets]).toEqual([...fromFile.offsets]);
      expect([...fromBytes.times]).toEqual([...fromFile.times]);
      expect([...fromBytes.values]).toEqual([...fromFile.values]);
    }
  });

  it('reads a deflated archive from a view into a larger buffer', () => {
    const npy = (descr: string, data: Float64Array | BigInt64Array): Uint8Array => {
      const header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${data.length},), }`.padEnd(117, ' ') + '\n';
      const out = new Uint8Array(10 + header.length + data.byteLength);
      out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, header.length & 0xff, header.length >> 8]);
      out.set(new TextEncoder().encode(header), 10);
      out.set(new Uint8Array(data.buffer), 10 + header.length);
      return out;
    };
    const zip = zipSync(
      { 'offsets.npy': npy('<i8', new BigInt64Array([0n, 2n, 3n])), 'times.npy': npy('<f8', new Float64Array([0, 2, 0])), 'values.npy': npy('<f8', new Float64Array([10, 5, 7])) },
      { level: 6 },
    );
    const padded = new Uint8Array(zip.length + 16);
    padded.set(zip, 8);
    const set = parsePcfNpz(padded.subarray(8, 8 + zip.length));
    expect(set.count).toBe(2);
    expect([...set.times]).toEqual([0, 2, 0]);
    expect([...set.values]).toEqual([10, 5, 7]);
  });

  it('refuses bytes that are not an .npz, naming them as options.file says', () => {
    expect(() => parsePcfNpz(new Uint8Array([1, 2, 3]))).toThrow(new InputFormatError('not an .npz file (a zip archive, as np.savez writes); the extension .npz says it should be one', 'the .npz bytes'));
    expect(() => parsePcfNpz(new Uint8Array(0), { file: 'dropped.npz' })).toThrow(/^dropped\.npz: not an \.npz file/);
    const empty = zipSync({ 'other.npy': new Uint8Array(4) });
    expect(() => parsePcfNpz(empty, { file: 'x.npz' })).toThrow("x.npz: has no array 'offsets', 'times', 'values'; PCFs in .npz are three arrays: np.savez(file, offsets=..., times=..., values=...)");
  });

  it('refuses what is not a Uint8Array, and bad options, saying what to pass', () => {
    expect(() => parsePcfNpz(new ArrayBuffer(4) as unknown as Uint8Array)).toThrow(new ArgumentError('parsePcfNpz: bytes must be a Uint8Array of an .npz file, got an ArrayBuffer; wrap it: parsePcfNpz(new Uint8Array(buffer))'));
    expect(() => parsePcfNpz('pcfs.npz' as unknown as Uint8Array)).toThrow(ArgumentError);
    expect(() => parsePcfNpz(new Uint8Array(4), { dtype: 'int8' as 'float32' })).toThrow(new OptionError("dtype must be one of 'float64', 'float32', got 'int8'"));
    expect(() => parsePcfNpz(new Uint8Array(4), { file: 3 as unknown as string })).toThrow(OptionError);
  });
});

describe('the browser twins of the platform seam', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('refuses file paths with UnsupportedError saying what to use instead', async () => {
    await expect(open('pcfs.npz', 'r')).rejects.toThrow(new UnsupportedError('cannot open pcfs.npz: a browser page has no file paths; fetch the bytes (or take them from a file picker) and use parsePcfNpz(bytes) or parsePcfJson(text)'));
    await expect(writeFile('trace.json', '{}')).rejects.toThrow(UnsupportedError);
  });

  it('takes cores and memory from navigator, and shared memory only on a cross-origin isolated page with Atomics.waitAsync', () => {
    vi.stubGlobal('navigator', { hardwareConcurrency: 6, deviceMemory: 8 });
    vi.stubGlobal('crossOriginIsolated', false);
    expect(availableCores()).toBe(6);
    expect(totalMemory()).toBe(8 * 2 ** 30);
    expect(sharedMemoryAvailable()).toBe(false);
    expect(isolationAdvice()).toContain('Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp');
    vi.stubGlobal('crossOriginIsolated', true);
    expect(sharedMemoryAvailable()).toBe(true);
    expect(isolationAdvice()).toBeUndefined();
    const waitAsync = Atomics.waitAsync;
    try {
      (Atomics as { waitAsync?: unknown }).waitAsync = undefined;
      expect(sharedMemoryAvailable()).toBe(false);
      expect(isolationAdvice()).toBe("this browser has no Atomics.waitAsync, which pxl's page thread needs to await its workers without blocking, so pxl runs kernels on the page's own thread (one core)");
    } finally {
      (Atomics as { waitAsync?: unknown }).waitAsync = waitAsync;
    }
    vi.stubGlobal('navigator', {});
    expect(availableCores()).toBe(1);
    expect(totalMemory()).toBe(4 * 2 ** 30);
  });
});

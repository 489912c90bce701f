import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { zipSync } from 'fflate';
import { InputFormatError, PcfError } from '../src/core/errors.js';
import { run } from '../src/cli/main.js';
import { readPcfFile } from '../src/pcf/pcfFileRead.js';
import { npyHeader } from '../src/pcf/npy.js';
import { writePcfNpz } from '../src/pcf/npzWriter.js';
import { pdist } from '../src/pcf/operations.js';
import { randomPcfs } from '../src/pcf/random.js';
import type { PcfSet } from '../src/pcf/pcfSet.js';

let dir: string;
const at = (name: string): string => join(dir, name);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pxl-npz-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function hasNumpy(): boolean {
  try {
    execFileSync('python3', ['-c', 'import numpy'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function npy(descr: string, data: ArrayBufferView & { length: number }): Uint8Array {
  const head = npyHeader(descr, [data.length]);
  const out = new Uint8Array(head.length + data.byteLength);
  out.set(head);
  out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), head.length);
  return out;
}

/** An .npz as np.savez lays it out: stored .npy members named after the keywords. */
function npz(members: Record<string, Uint8Array>, level: 0 | 6 = 0): Uint8Array {
  return zipSync(Object.fromEntries(Object.entries(members).map(([k, v]) => [`${k}.npy`, [v, { level }]])));
}

const offsets64 = (values: number[]): BigInt64Array => BigInt64Array.from(values.map(BigInt));

async function writeSet(path: string, set: PcfSet): Promise<void> {
  const handle = await open(path, 'w');
  try {
    await writePcfNpz(set, async (chunk) => {
      await handle.write(chunk);
    });
  } finally {
    await handle.close();
  }
}

async function formatError(path: string): Promise<string> {
  try {
    await readPcfFile(path);
  } catch (err) {
    expect(err).toBeInstanceOf(InputFormatError);
    return (err as Error).message;
  }
  throw new Error('expected an InputFormatError');
}

describe('.npz input', () => {
  it('reads offsets, times and values, stored or deflated, float64 or float32, into either dtype', async () => {
    const times = [0, 1.5, 0, 0, 2];
    const values = [1, 0.25, 2, 3, -1];
    const offsets = offsets64([0, 2, 3, 5]);
    for (const [name, level, Ctor] of [['s64', 0, Float64Array], ['c32', 6, Float32Array]] as const) {
      const descr = Ctor === Float64Array ? '<f8' : '<f4';
      await writeFile(at(`${name}.npz`), npz({ offsets: npy('<i8', offsets), times: npy(descr, Ctor.from(times)), values: npy(descr, Ctor.from(values)) }, level));
      for (const dtype of ['float64', 'float32'] as const) {
        const set = await readPcfFile(at(`${name}.npz`), { dtype });
        expect(set.dtype).toBe(dtype);
        expect(set.shape).toEqual([3]);
        expect([...set.offsets]).toEqual([0, 2, 3, 5]);
        expect([...set.times]).toEqual(times);
        expect([...set.values]).toEqual(values);
      }
    }
  });

  it('round-trips what writePcfNpz writes, bit for bit, and ignores other arrays', async () => {
    const set = randomPcfs({ n: 40, points: 7, seed: 3 });
    await writeSet(at('r.npz'), set);
    const back = await readPcfFile(at('r.npz'));
    expect(back.offsets).toEqual(set.offsets);
    expect(back.times).toEqual(set.times);
    expect(back.values).toEqual(set.values);
    // Values whose bytes hold the zip record signatures a streaming reader could take for the end
    // of a member (data descriptor, central directory) still read back whole.
    const words = new Uint32Array([0x08074b50, 0x3ff00000, 0x02014b50, 0x40000000, 0x04034b50, 0x40100000]);
    const tricky = new Float64Array(words.buffer);
    const trickySet: PcfSet = { dtype: 'float64', count: 1, shape: [1], times: new Float64Array([0, 1, 2]), values: tricky, offsets: new Uint32Array([0, 3]) };
    await writeSet(at('tricky.npz'), trickySet);
    expect((await readPcfFile(at('tricky.npz'))).values).toEqual(tricky);
    await writeFile(at('extra.npz'), npz({ labels: npy('<f8', new Float64Array(3)), offsets: npy('<i8', offsets64([0, 1])), times: npy('<f8', new Float64Array([0])), values: npy('<f8', new Float64Array([4])) }));
    expect([...(await readPcfFile(at('extra.npz'))).values]).toEqual([4]);
  });

  it('round-trips with NumPy when python3 has numpy: np.load reads ours, and we read np.savez and np.savez_compressed', async (ctx) => {
    // Users without NumPy still get every other .npz test; CI installs python3-numpy, so there it always runs.
    if (!hasNumpy() && (process.env.CI ?? '') === '') ctx.skip('python3 with numpy is not installed (apt-get install python3-numpy)');
    const set = randomPcfs({ n: 25, points: 4, seed: 9 });
    await writeSet(at('ours.npz'), set);
    const script = `
import numpy as np, sys
z = np.load(sys.argv[1])
assert z['offsets'].dtype == np.int64 and z['times'].dtype == np.float64, (z['offsets'].dtype, z['times'].dtype)
np.savez(sys.argv[2], offsets=z['offsets'], times=z['times'], values=z['values'])
np.savez_compressed(sys.argv[3], offsets=z['offsets'], times=z['times'].astype(np.float32), values=z['values'].astype(np.float32))
print(z['offsets'][-1], repr(float(z['values'][5])))
`;
    const out = execFileSync('python3', ['-c', script, at('ours.npz'), at('np.npz'), at('npc.npz')], { encoding: 'utf8' });
    expect(out.trim()).toBe(`${set.offsets[25]} ${String(set.values[5])}`);
    const plain = await readPcfFile(at('np.npz'));
    expect(plain.times).toEqual(set.times);
    expect(plain.values).toEqual(set.values);
    const compressed = await readPcfFile(at('npc.npz'), { dtype: 'float32' });
    expect(compressed.times).toEqual(Float32Array.from(set.times));
  });

  it('refuses a bad layout or PCF with a message naming the file and the PCF', async () => {
    const f8 = (xs: number[]): Uint8Array => npy('<f8', Float64Array.from(xs));
    const cases: Array<[string, Record<string, Uint8Array>, string]> = [
      ['missing', { offsets: npy('<i8', offsets64([0, 1])), times: f8([0]) }, "has no array 'values'; PCFs in .npz are three arrays: np.savez(file, offsets=..., times=..., values=...)"],
      ['ragged', { offsets: npy('<i8', offsets64([0, 2])), times: f8([0, 1]), values: f8([1]) }, 'times has 2 entries but values has 1; there is one of each per breakpoint'],
      ['start', { offsets: npy('<i8', offsets64([1, 2])), times: f8([0, 1]), values: f8([1, 2]) }, 'offsets[0] must be 0, got 1'],
      ['decrease', { offsets: npy('<i8', offsets64([0, 2, 1, 2])), times: f8([0, 1]), values: f8([1, 2]) }, 'offsets must not decrease, but offsets[2] = 1 < offsets[1] = 2 (PCF 1 would have a negative size)'],
      ['end', { offsets: npy('<i8', offsets64([0, 1])), times: f8([0, 1]), values: f8([1, 2]) }, 'offsets must end at the breakpoint count 2 (the length of times and values), but offsets[1] = 1'],
      ['past', { offsets: npy('<i8', offsets64([0, 3])), times: f8([0, 1]), values: f8([1, 2]) }, 'offsets[1] = 3 is past the end of times (2 breakpoints)'],
      // 2^62 as a double prints as 4611686018427388000, which is not what the file holds.
      ['huge', { offsets: npy('<i8', BigInt64Array.from([0n, 2n ** 62n])), times: f8([0, 1]), values: f8([1, 2]) }, 'offsets[1] = more than 9007199254740991 is past the end of times (2 breakpoints)'],
      ['t0', { offsets: npy('<i8', offsets64([0, 1, 3])), times: f8([0, 0.5, 1]), values: f8([1, 2, 3]) }, 'PCF 1: the first breakpoint must be at time 0, got 0.5'],
      ['order', { offsets: npy('<i8', offsets64([0, 3])), times: f8([0, 2, 1]), values: f8([1, 2, 3]) }, 'PCF 0: breakpoint 2 has time 1, not after the time 2 of breakpoint 1 (times must strictly increase)'],
      ['nan', { offsets: npy('<i8', offsets64([0, 1, 2])), times: f8([0, 0]), values: f8([1, NaN]) }, 'PCF 1: breakpoint 0 has a non-finite value (NaN)'],
      ['dtype', { offsets: npy('<f8', new Float64Array([0, 1])), times: f8([0]), values: f8([1]) }, "offsets has dtype '<f8'; it must be little-endian int64 ('<i8'; '<i4', '<u4', '<u8' are read too)"],
    ];
    for (const [name, members, message] of cases) {
      await writeFile(at(`${name}.npz`), npz(members));
      expect(await formatError(at(`${name}.npz`))).toBe(`${at(`${name}.npz`)}: ${message}`);
    }
    await writeFile(at('text.npz'), '{"pcfs": []}');
    expect(await formatError(at('text.npz'))).toBe(`${at('text.npz')}: not an .npz file (a zip archive, as np.savez writes); the extension .npz says it should be one`);
    await expect(readPcfFile(at('t0.npz'))).rejects.toSatisfy((err: InputFormatError) => err.cause instanceof PcfError && err.cause.pcfIndex === 1);
    await writeFile(at('big.npz'), npz({ offsets: npy('<i8', offsets64([0, 1])), times: f8([0]), values: f8([1e300]) }));
    await expect(readPcfFile(at('big.npz'), { dtype: 'float32' })).rejects.toThrow(new InputFormatError('PCF 0: breakpoint 0 has value beyond the float32 range; read it as float64 (--dtype float64; dtype: \'float64\')', at('big.npz')));
  });

  it('says so when float64 times that differ in the file round to one float32', async () => {
    const f8 = (xs: number[]): Uint8Array => npy('<f8', Float64Array.from(xs));
    // PCF 1's times 1 + 2^-30 and 1 + 2^-29 are both 1 in float32; PCF 0 ends above PCF 1's start.
    await writeFile(at('close.npz'), npz({ offsets: npy('<i8', offsets64([0, 2, 5])), times: f8([0, 3, 0, 1 + 2 ** -30, 1 + 2 ** -29]), values: f8([1, 0, 1, 2, 0]) }));
    expect((await readPcfFile(at('close.npz'))).count).toBe(2);
    await expect(readPcfFile(at('close.npz'), { dtype: 'float32' })).rejects.toThrow(new InputFormatError(
      "PCF 1: breakpoint 2 has time 1, not after the time 1 of breakpoint 1 (times must strictly increase); the file's float64 times 1.0000000009313226 and 1.0000000018626451 of breakpoints 1 and 2 round to the same float32: read it as float64 (--dtype float64; dtype: 'float64')",
      at('close.npz'),
    ));
  });
});

describe('the CLI with .npz', () => {
  const pxl = async (args: string[]): Promise<{ code: number; stderr: string }> => {
    let stderr = '';
    const sink = { isTTY: false, columns: 80, write: (s: string): boolean => ((stderr += s), true) };
    const code = await run(args, { stdout: { isTTY: false, columns: 80, write: () => true }, stderr: sink, interceptSigint: false });
    return { code, stderr };
  };

  it('random-pcfs writes .npz, and pdist reads it to the same result as the .json of the same PCFs', async () => {
    expect((await pxl(['random-pcfs', '--n', '30', '--points', '5', '--seed', '4', '-o', at('in.npz'), '-q'])).code).toBe(0);
    expect((await pxl(['random-pcfs', '--n', '30', '--points', '5', '--seed', '4', '-o', at('in.json'), '-q'])).code).toBe(0);
    const fromNpz = await readPcfFile(at('in.npz'));
    expect(fromNpz.values).toEqual(randomPcfs({ n: 30, points: 5, seed: 4 }).values);
    expect((await pxl(['pdist', at('in.npz'), '-o', at('a.json'), '-q'])).code).toBe(0);
    expect((await pxl(['pdist', at('in.json'), '-o', at('b.json'), '-q'])).code).toBe(0);
    expect(await readFile(at('a.json'), 'utf8')).toBe(await readFile(at('b.json'), 'utf8'));
    const expected = await pdist(fromNpz);
    expect(JSON.parse(await readFile(at('a.json'), 'utf8'))[0][1]).toBe(expected.get(0, 1));
    expect((await pxl(['cdist', at('in.npz'), at('in.json'), '-o', at('c.npy'), '-q'])).code).toBe(0);
    expect((await pxl(['l2-kernel', at('in.npz'), '-o', at('k.npy'), '-q'])).code).toBe(0);
  });

  it('refuses an input whose extension names no PCF format, offering standard input (a pipe such as <(zcat f.json.gz) has no extension)', async () => {
    await writeFile(at('in.txt'), '[]');
    const r = await pxl(['pdist', at('in.txt'), '-o', at('d.npy')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`pxl: cannot read ${at('in.txt')}: the input format is chosen by the file extension, which must be .json or .npz (got extension '.txt'); or give - and pipe the file into standard input, whose format is told by its first bytes\n`);
  });
});

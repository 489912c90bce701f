/**
 * Bad input at the public API: each row is a call with a bad argument, and the exact typed error
 * (class and message) the user sees. Every check runs before any work starts, and async calls
 * reject rather than throw.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ArgumentError,
  cdist,
  createContext,
  InputFormatError,
  NDArray,
  OptionError,
  parsePcfJson,
  Pcf,
  PcfError,
  pcfSetFrom,
  pdist,
  l2Kernel,
  randomPcfs,
  readPcfFile,
  encodeNpy,
  decodeNpy,
  lpDistance,
  type Context,
  type Job,
} from '../src/index.js';
import { nearest } from '../src/core/validate.js';

const X: [number, number][][] = [[[0, 1], [2, 0]], [[0, 3], [1, 0]]];
const MEM = 4096;

let ctx: Context;
let job: Job;

beforeAll(async () => {
  ctx = await createContext({ topology: { coresPerCluster: 1 } });
  job = ctx.createJob(1);
  job.load(await ctx.createModule(new URL('./fixtures/kernels.ts', import.meta.url)));
});

afterAll(async () => {
  await ctx?.destroy();
});

const PCF_INPUT = '(each an array of [t, v] pairs)';

describe('pairwise calls refuse bad input before any work, by rejecting', () => {
  it.each<[string, () => Promise<unknown>, Error]>([
    ['pdist(null)', () => pdist(null as never), new ArgumentError(`pdist: X must be a PcfSet or an array of PCFs ${PCF_INPUT}, got null`)],
    ['pdist(5)', () => pdist(5 as never), new ArgumentError(`pdist: X must be a PcfSet or an array of PCFs ${PCF_INPUT}, got 5`)],
    ['pdist({ pcfs })', () => pdist({ pcfs: X } as never), new ArgumentError(`pdist: X must be a PcfSet or an array of PCFs ${PCF_INPUT}, got an object with a "pcfs" array; pass that array itself (X.pcfs), or parse the document with parsePcfJson`)],
    ["pdist('pcfs.json')", () => pdist('pcfs.json' as never), new ArgumentError(`pdist: X must be a PcfSet or an array of PCFs ${PCF_INPUT}, got 'pcfs.json'; to read a JSON file of PCFs, pass await readPcfFile('pcfs.json')`)],
    ['cdist(x) without y', () => cdist(X, undefined as never), new ArgumentError(`cdist: Y must be a PcfSet or an array of PCFs ${PCF_INPUT}, got undefined; cdist compares every PCF of X with every PCF of Y (for the pairs within one collection, use pdist)`)],
    ['l2Kernel of a PcfSet with a wrong offsets array', () => l2Kernel({ ...pcfSetFrom(X), offsets: new Uint32Array(1) }), new ArgumentError('l2Kernel X is not a valid PcfSet: offsets must be a Uint32Array of count + 1 = 3 entries, got a Uint32Array of length 1; build one with pcfSetFrom')],
    ['a PCF with no breakpoints', () => pdist([[[0, 1]], []]), new PcfError(1, 'has no breakpoints; a PCF starts with a breakpoint at time 0')],
    ['a breakpoint [t, v, extra]', () => pdist([[[0, 1, 5]]] as never), new PcfError(0, 'breakpoint 0 is not a [t, v] pair of numbers (got an array of length 3); each breakpoint has exactly two entries, time and value')],
    ['options null', () => pdist(X, null as never), new OptionError('pdist options must be an object of options (or left out), got null')],
    ['options of the wrong type', () => cdist(X, X, 2 as never), new OptionError('cdist options must be an object of options (or left out), got 2')],
    ['an unknown option, naming the nearest', () => pdist(X, { q: 2 } as never), new OptionError("pdist options has no option 'q'; did you mean 'p'? Valid options: 'p', 'dtype', 'context', 'jobs', 'signal', 'onProgress', 'nSplitsHint', 'maxOutputElements', 'minBlockSide', 'device', 'devices'")],
    ['p on l2Kernel', () => l2Kernel(X, { p: 2 } as never), new OptionError("l2Kernel options has no option 'p'. Valid options: 'dtype', 'context', 'jobs', 'signal', 'onProgress', 'nSplitsHint', 'maxOutputElements', 'minBlockSide', 'device', 'devices'")],
    ["p with op 'l2Inner'", () => cdist(X, X, { op: 'l2Inner', p: 2 }), new OptionError("p is the exponent of op 'distance'; leave it out with op 'l2Inner', which has no exponent")],
    ['onProgress: 5', () => pdist(X, { onProgress: 5 } as never), new OptionError('onProgress must be a function, got 5')],
    ["signal: 'x'", () => pdist(X, { signal: 'x' } as never), new OptionError("signal must be an AbortSignal (for example new AbortController().signal), got 'x'")],
    ["context: 'cpu'", () => pdist(X, { context: 'cpu' } as never), new OptionError("context must be a Context from createContext(), got 'cpu'")],
    ['jobs: a Job, not an array', () => pdist(X, { jobs: job } as never), new OptionError('jobs must be an array of Jobs (from context.createJob()), got a Job')],
    ['nSplitsHint: 0', () => pdist(X, { nSplitsHint: 0 }), new OptionError('nSplitsHint must be an integer in [1, 9007199254740991], got 0')],
    ["dtype: 'float16'", () => pdist(X, { dtype: 'float16' } as never), new OptionError("dtype must be one of 'float64', 'float32', got 'float16'")],
    ['p: Infinity', () => pdist(X, { p: Infinity }), new OptionError('p must be a number >= 1, got Infinity')],
  ])('%s', async (_, call, error) => {
    await expect(call()).rejects.toThrow(error);
    await expect(call()).rejects.toBeInstanceOf(error.constructor);
  });

  it('never throws synchronously', () => {
    expect(() => void pdist(null as never).catch(() => undefined)).not.toThrow();
    expect(() => void cdist(5 as never, 5 as never, null as never).catch(() => undefined)).not.toThrow();
  });
});

describe('createContext refuses bad options by rejecting', () => {
  it.each<[string, unknown, string]>([
    ['null', null, 'createContext options must be an object of options (or left out), got null'],
    ['a number', 5, 'createContext options must be an object of options (or left out), got 5'],
    ['an unknown option, naming the one that does it', { threads: 4 }, "createContext options has no option 'threads'; did you mean 'topology'? Valid options: 'backend', 'topology', 'memorySize', 'coreHeapLimitMB', 'trace'"],
    ['a misspelt option', { memorySise: 10 }, "createContext options has no option 'memorySise'; did you mean 'memorySize'? Valid options: 'backend', 'topology', 'memorySize', 'coreHeapLimitMB', 'trace'"],
    ['an unknown topology key', { topology: { cores: 2 } }, "topology has no option 'cores'; did you mean 'coresPerCluster'? Valid options: 'subs', 'clustersPerSub', 'coresPerCluster'"],
    ["trace: 'yes'", { trace: 'yes' }, "trace must be true or false, got 'yes'"],
  ])('%s', async (_, options, message) => {
    await expect(createContext(options as never)).rejects.toThrow(new OptionError(message));
  });

  it('refuses more memory than the machine has', async () => {
    await expect(createContext({ memorySize: 1e15 })).rejects.toThrow(/^memorySize 1000000000000000 is more than this machine's \d+ bytes of memory; pass at most \d+ \(default: half of it\)$/);
    await expect(createContext({ memorySize: 1e15 })).rejects.toBeInstanceOf(OptionError);
  });
});

describe('device memory, NDArray and buildMap refuse bad input', () => {
  it.each<[string, (c: Context) => unknown, Error]>([
    ["hostView(p, 'float16')", (c) => c.hostView(c.memAlloc(MEM), 'float16' as never), new OptionError("hostView dtype must be one of 'float64', 'float32', 'int32', 'uint32', 'int16', 'uint16', 'int8', 'uint8', 'bigint64', 'biguint64', got 'float16'")],
    ['hostView reading past the end', (c) => c.hostView(c.memAlloc(MEM), 'float64', 513), new ArgumentError('hostView: 513 float64 elements (4104 bytes) reach past the end of the allocation, which has 4096 bytes from the pointer; pass a length of at most 512')],
    ['hostView that would leave bytes off', (c) => c.hostView(c.memAlloc(12), 'float64'), new ArgumentError('hostView: the 12 bytes from the pointer to the end of its allocation are not a whole number of float64 elements (8 bytes each); pass a length (at most 1) to view only the first elements')],
    ['NDArray reaching past the end', (c) => new NDArray(c.memAlloc(MEM), 'float64', [513]), new ArgumentError('NDArray of shape [513] float64 needs 4104 bytes, but the pointer reaches only 4096: allocate more or change the shape')],
    ['NDArray on a freed pointer', (c) => { const p = c.memAlloc(MEM); c.memFree(p); return new NDArray(p, 'float64', [1]); }, new ArgumentError('NDArray: the device pointer was freed with memFree; allocate a new one')],
    ['NDArray with a shape that is not an array', (c) => new NDArray(c.memAlloc(MEM), 'float64', 5 as never), new ArgumentError('NDArray shape must be an array of 1 to 16 non-negative integers, got 5')],
    ['buildMap(name, 0)', () => job.buildMap('count_tasks', 0), new OptionError('taskCount must be an integer in [1, 1048575], got 0')],
    ["buildMap(name, '4')", () => job.buildMap('count_tasks', '4' as never), new OptionError("buildMap: taskCount must be an integer in [1, 1048575] or an ND-range { global, local }, got '4'")],
    ['buildMap(5, 4)', () => job.buildMap(5 as never, 4), new OptionError('buildMap: name must be the name of a kernel of a loaded module (a non-empty string), got 5')],
  ])('%s', (_, call, error) => {
    expect(() => call(ctx)).toThrow(error);
    expect(() => call(ctx)).toThrow(error.constructor as new () => Error);
  });

  it('a hostView with a length in range views exactly that many elements', () => {
    const ptr = ctx.memAlloc(12);
    expect(ctx.hostView(ptr, 'float64', 1).length).toBe(1);
    expect(ctx.hostView(ptr, 'int32').length).toBe(3);
    ctx.memFree(ptr);
  });
});

describe('PCF values, files and arrays refuse bad input', () => {
  it.each<[string, () => unknown, Error]>([
    ['Pcf.from(null)', () => Pcf.from(null as never), new PcfError(0, 'expected an array of [t, v] pairs, got null')],
    ['Pcf.from with an unknown option', () => Pcf.from([[0, 1]], { dtyp: 'float32' } as never), new OptionError("Pcf.from options has no option 'dtyp'; did you mean 'dtype'? Valid options: 'dtype', 'index'")],
    ['pcfSetFrom(5)', () => pcfSetFrom(5 as never), new ArgumentError('pcfSetFrom: pcfs must be an array of PCFs (each a Pcf or an array of [t, v] pairs), got 5')],
    ['parsePcfJson of bytes', () => parsePcfJson(new Uint8Array(2) as never), new ArgumentError('parsePcfJson: text must be a string of JSON, got a Uint8Array; decode it first (new TextDecoder().decode(bytes)) or use readPcfFile')],
    ['parsePcfJson of [[]]', () => parsePcfJson('[[]]'), new InputFormatError('PCF 0: has no breakpoints; a PCF starts with a breakpoint at time 0')],
    ['randomPcfs() without options', () => randomPcfs(undefined as never), new OptionError('randomPcfs options must be an object such as { n: 100, points: 10 }, got undefined')],
    ['randomPcfs({ count })', () => randomPcfs({ count: 3, points: 2 } as never), new OptionError("randomPcfs options has no option 'count'; did you mean 'n'? Valid options: 'n', 'points', 'seed', 'dtype', 'shared'")],
    ['randomPcfs beyond a PcfSet', () => randomPcfs({ n: 40_000_000, points: 100 }), new OptionError('n * points must be at most 2147483647 (the most breakpoints a PCF set holds), got 40000000 * 100 = 4000000000; lower n or points')],
    ['encodeNpy of a plain array', () => encodeNpy([1, 2] as never, [2]), new ArgumentError('encodeNpy: data must be a Float64Array or a Float32Array, got an array of length 2')],
    ['decodeNpy of a string', () => decodeNpy('x.npy' as never), new ArgumentError("decodeNpy: bytes must be a Uint8Array (or a Node Buffer) of an .npy file, got 'x.npy'")],
  ])('%s', (_, call, error) => {
    expect(call).toThrow(error);
    expect(call).toThrow(error.constructor as new () => Error);
  });

  it('readPcfFile rejects a path that is not a string', async () => {
    await expect(readPcfFile(5 as never)).rejects.toThrow(new ArgumentError('readPcfFile: path must be a file name, got 5'));
  });
});

describe('large p: no overflow to Infinity, no wrong zeros', () => {
  // Reference: for f = 10 on [0, 1) and g = 0, (integral of |f - g|^p)^(1/p) = (1 * 10^p)^(1/p) = 10 for every p.
  it.each([2, 17, 400, 1000, 1e6])('lpDistance is 10 for a difference of 10 on a unit interval, p = %s', (p) => {
    expect(lpDistance(Pcf.from([[0, 10], [1, 0]]), Pcf.from([[0, 0]]), p)).toBeCloseTo(10, 10);
  });

  // 0.4^1000 underflows to 0: the plain sum is 0, yet the distance is 0.4 * 3^(1/1000).
  it('is not 0 for differences below 1 at p = 1000', () => {
    expect(lpDistance(Pcf.from([[0, 0.4], [3, 0]]), Pcf.from([[0, 0]]), 1000)).toBeCloseTo(0.4 * Math.pow(3, 1 / 1000), 14);
  });

  // The last values differ by 2 over [t, largest double): the sum of squares overflows, the distance does not.
  it('is finite for p = 2 when the last values differ', () => {
    expect(lpDistance(Pcf.from([[0, 2]]), Pcf.from([[0, 0]]), 2) / 1e154).toBeCloseTo((2 * Math.sqrt(Number.MAX_VALUE)) / 1e154, 12);
  });

  it('pdist on 40 random PCFs with p = 1000 has every off-diagonal entry positive', async () => {
    const d = await pdist(randomPcfs({ n: 40, points: 10, seed: 5 }), { p: 1000 });
    expect(Array.from(d.condensed).filter((x) => !(x > 0 && x < 1))).toEqual([]);
  });
});

describe('nearest option name', () => {
  it('names a close option and nothing for an unrelated word', () => {
    expect(nearest('memSize', ['memorySize', 'trace'])).toBe('memorySize');
    expect(nearest('signa', ['signal', 'p'])).toBe('signal');
    expect(nearest('zzzzzzzz', ['signal', 'p'])).toBeUndefined();
  });
});

/**
 * Bad input at the public API: each row is a call with a bad argument, and the exact typed error
 * (class and message) the user sees. Every check runs before any work starts, and async calls
 * reject rather than throw.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ArgumentError,
  CommandBuffer,
  CommandQueue,
  dispatch,
  Fence,
  NoSubAvailableError,
  planLaunch,
  Semaphore,
  StateError,
  writeTrace,
  cdist,
  createContext,
  InputFormatError,
  NDArray,
  OptionError,
  parsePcfJson,
  Pcf,
  PcfError,
  pcfSetFrom,
  pcfSetFromNested,
  pdist,
  l2Kernel,
  randomPcfs,
  readPcfFile,
  encodeNpy,
  decodeNpy,
  lpDistance,
  lpNorm,
  l2InnerProduct,
  pcfAt,
  integrationLimit,
  condensedIndex,
  readPcfNpz,
  writePcfNpz,
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
const ONE_PER_PARAMETER = 'pass one argument per parameter of the kernel, in order';

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
    ['nested arrays of PCFs', () => pdist([[[[0, 1], [1, 0]], [[0, 2], [1, 0]]], [[[0, 3], [1, 0]]]] as never), new PcfError(0, 'breakpoint 0 is not a [t, v] pair of numbers (got an array of length 2); it holds [t, v] pairs itself, so this looks like nested arrays of PCFs: pass pcfSetFromNested(array) for a set with a shape, or flatten it into one list of PCFs')],
    ['options null', () => pdist(X, null as never), new OptionError('pdist options must be an object of options (or left out), got null')],
    ['options of the wrong type', () => cdist(X, X, 2 as never), new OptionError('cdist options must be an object of options (or left out), got 2')],
    ['an unknown option, naming the nearest', () => pdist(X, { q: 2 } as never), new OptionError("pdist options has no option 'q'; did you mean 'p'? Valid options: 'p', 'layout', 'dtype', 'context', 'jobs', 'signal', 'onProgress', 'nSplitsHint', 'maxOutputElements', 'minBlockSide', 'device', 'devices', 'out', 'resume', 'memory', 'cluster'")],
    ['p on l2Kernel', () => l2Kernel(X, { p: 2 } as never), new OptionError("l2Kernel options has no option 'p'. Valid options: 'layout', 'dtype', 'context', 'jobs', 'signal', 'onProgress', 'nSplitsHint', 'maxOutputElements', 'minBlockSide', 'device', 'devices', 'out', 'resume', 'memory', 'cluster'")],
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

describe('Context, Job and Map methods refuse bad input before any work', () => {
  const FN = (name: string, got: string): OptionError => new OptionError(`${name}: callback must be a function, got ${got}`);
  const STREAM = "setStream: stream must be a Stream from ctx.createStream(), or left out for the Job's default stream, got";
  it.each<[string, (c: Context) => unknown, Error]>([
    ['createJob(0)', (c) => c.createJob(0), new OptionError('numSub must be an integer in [1, 1], got 0')],
    ['createJob() with every Sub taken', (c) => c.createJob(), new NoSubAvailableError('createJob: no Sub is free (all 1 belong to Jobs); destroy a Job with ctx.destroyJob(job), or free Subs with job.subFree(), first')],
    ['destroyJob(5)', (c) => c.destroyJob(5 as never), new ArgumentError('destroyJob: job must be a Job from ctx.createJob(), got 5')],
    ["createStream('4')", (c) => c.createStream('4' as never), new OptionError("stream limit must be an integer in [1, 1048576], got '4'")],
    ['destroyStream(null)', (c) => c.destroyStream(null as never), new ArgumentError('destroyStream: stream must be a Stream from ctx.createStream(), got null')],
    ["getAttribute('cores')", (c) => c.getAttribute('cores' as never), new OptionError("attribute must be one of 'backend', 'device', 'subCount', 'clustersPerSub', 'coresPerCluster', 'coresPerSub', 'coreCount', 'memorySize', 'availableMemSize', 'availableSubCount', 'maxTaskCount', got 'cores'")],
    ['memFree(null)', (c) => c.memFree(null as never), new ArgumentError('memFree: ptr must be a DevicePtr from ctx.memAlloc(), got null')],
    ['job.load(5)', () => job.load(5 as never), new ArgumentError('load: module must be a KernelModule from await ctx.createModule(url), got 5')],
    ['job.load of a module not awaited', () => job.load(Promise.resolve() as never), new ArgumentError('load: module must be a KernelModule from await ctx.createModule(url), got a Promise; await it first')],
    ['map.setStream(5)', () => job.buildMap('count_tasks', 4).setStream(5 as never), new ArgumentError(`${STREAM} 5`)],
    ['map.setStream(null)', () => job.buildMap('count_tasks', 4).setStream(null as never), new ArgumentError(`${STREAM} null`)],
    ['map.setCompletionCallback(5)', () => job.buildMap('count_tasks', 4).setCompletionCallback(5 as never), FN('setCompletionCallback', '5')],
    ["map.setMessageCallback('log')", () => job.buildMap('count_tasks', 4).setMessageCallback('log' as never), FN('setMessageCallback', "'log'")],
    ['map.setErrorCallback(null)', () => job.buildMap('count_tasks', 4).setErrorCallback(null as never), FN('setErrorCallback', 'null')],
    ['planLaunch(null)', () => planLaunch(null as never), new OptionError('planLaunch needs a LaunchShape { taskCount, batchSize, locality, topology, subs }, got null')],
    ['planLaunch without a topology', () => planLaunch({ taskCount: 4, batchSize: 1, locality: 'compact', subs: [0] } as never), new OptionError("topology must be the device's Topology (ctx.topology), got undefined")],
    ['planLaunch with an unknown key', (c) => planLaunch({ taskCount: 4, batchSize: 1, locality: 'compact', subs: [0], topology: c.topology, tasks: 4 } as never), new OptionError("planLaunch shape has no option 'tasks'. Valid options: 'taskCount', 'batchSize', 'locality', 'topology', 'subs'")],
  ])('%s', (_, call, error) => {
    expect(() => call(ctx)).toThrow(error);
    expect(() => call(ctx)).toThrow(error.constructor as new () => Error);
  });

  it('destroyJob refuses a Job of another Context and leaves it running', async () => {
    const other = await createContext({ topology: { coresPerCluster: 1 } });
    try {
      const foreign = other.createJob();
      expect(() => ctx.destroyJob(foreign)).toThrow(new StateError("destroyJob: the Job belongs to another Context; destroy it with that Context's destroyJob()"));
      expect(foreign.subCount).toBe(1);
    } finally {
      await other.destroy();
    }
  });

  const TRACE = join(tmpdir(), 'pxl-badInput-trace.json');
  it.each<[string, (c: Context) => Promise<unknown>, Error]>([
    ['createModule(5)', (c) => c.createModule(5 as never), new ArgumentError("createModule: url must be a URL (new URL('./kernels.js', import.meta.url)) or a file path, got 5")],
    ['copyToDevice(null, bytes)', (c) => c.copyToDevice(null as never, new Uint8Array(4)), new ArgumentError('copyToDevice: dst must be a DevicePtr from ctx.memAlloc(), got null')],
    ['copyFromDevice(array, ptr)', (c) => c.copyFromDevice([0, 0] as never, c.memAlloc(MEM)), new ArgumentError('copyFromDevice: dst must be host memory (a TypedArray, DataView, ArrayBuffer or SharedArrayBuffer), got an array of length 2')],
    ['writeTrace(5, trace)', () => writeTrace(5 as never, { traceEvents: [], displayTimeUnit: 'ms', otherData: {} }), new ArgumentError('writeTrace: path must be a file name, got 5')],
    ['writeTrace(path, null)', () => writeTrace(TRACE, null as never), new ArgumentError('writeTrace: trace must be a trace from ctx.stopTrace() (an object with a traceEvents array), got null')],
    ['map.execute() with fewer arguments than the kernel takes', () => job.buildMap('count_tasks', 4).execute(), new ArgumentError(`kernel 'count_tasks' takes 1 argument, got 0: ${ONE_PER_PARAMETER}`)],
    ['map.execute() with more arguments than the kernel takes', (c) => job.buildMap('count_tasks', 4).execute(c.memAlloc(MEM), 5), new ArgumentError(`kernel 'count_tasks' takes 1 argument, got 2: ${ONE_PER_PARAMETER}`, 1)],
  ])('%s rejects', async (_, call, error) => {
    await expect(call(ctx)).rejects.toThrow(error);
    await expect(call(ctx)).rejects.toBeInstanceOf(error.constructor);
  });
});

describe('command buffers, dispatch, fences and command queues refuse bad input before any work', () => {
  const finalized = (): CommandBuffer => new CommandBuffer(ctx).callback(() => undefined).finalize();
  const DISPATCH = "Valid options: 'wait', 'signal', 'fence', 'callback'";
  it.each<[string, () => unknown, Error]>([
    ['new CommandBuffer(null)', () => new CommandBuffer(null as never), new ArgumentError('CommandBuffer: context must be a Context from createContext(), got null')],
    ['new CommandBuffer(ctx, 5)', () => new CommandBuffer(ctx, 5 as never), new ArgumentError('CommandBuffer: job must be a Job from ctx.createJob() (or left out for a CommandBuffer without kernel launches), got 5')],
    ['launch(5, range)', () => new CommandBuffer(ctx, job).launch(5 as never, { global: [4] }), new ArgumentError("launch: kernel must be the name of a kernel of the Job's modules (a non-empty string), got 5")],
    ['launch(name, 4)', () => new CommandBuffer(ctx, job).launch('count_tasks', 4 as never), new OptionError('launch: the range must be an ND-range object { global: [sizes], local?: [sizes] }, got 4')],
    ['launch(name, { glob })', () => new CommandBuffer(ctx, job).launch('count_tasks', { global: [4], glob: [4] } as never), new OptionError("launch range has no option 'glob'; did you mean 'global'? Valid options: 'global', 'local'")],
    ['launch with an argument a kernel cannot take', () => new CommandBuffer(ctx, job).launch('count_tasks', { global: [4] }, 'str' as never), new ArgumentError("argument 0 is 'str', which cannot be passed to a kernel: constants may be numbers, bigints, booleans, or plain objects of those, device pointers, or NDArrays", 0)],
    ['launch with fewer arguments than the kernel takes', () => new CommandBuffer(ctx, job).launch('mark_thread', { global: [4] }, ctx.memAlloc(MEM)), new ArgumentError(`kernel 'mark_thread' takes 2 arguments, got 1: ${ONE_PER_PARAMETER}`)],
    ['callback(5)', () => new CommandBuffer(ctx).callback(5 as never), new ArgumentError('callback: fn must be a function to run as a command, got 5')],
    ['write of a plain array', () => new CommandBuffer(ctx).write(ctx.memAlloc(MEM), 0, [1, 2] as never), new ArgumentError('write: host memory must be a TypedArray or DataView, got an array of length 2')],
    ['write to a number', () => new CommandBuffer(ctx).write(5 as never, 0, new Uint8Array(4)), new ArgumentError('write: the device pointer must be a DevicePtr from ctx.memAlloc(), got 5')],
    ["read at offset '4'", () => new CommandBuffer(ctx).read(ctx.memAlloc(MEM), '4' as never, new Uint8Array(4)), new ArgumentError("read: offset must be an integer ≥ 0, got '4'")],
    ['dispatch(null)', () => dispatch(null as never), new ArgumentError('dispatch: buffer must be a CommandBuffer (new CommandBuffer(ctx, job)), got null')],
    ['dispatch options null', () => dispatch(finalized(), null as never), new OptionError('dispatch options must be an object of options (or left out), got null')],
    ['dispatch option fences', () => dispatch(finalized(), { fences: new Fence() } as never), new OptionError(`dispatch options has no option 'fences'; did you mean 'fence'? ${DISPATCH}`)],
    ['dispatch callback 5', () => dispatch(finalized(), { callback: 5 } as never), new OptionError('dispatch callback must be a function, got 5')],
    ['dispatch wait of one Semaphore', () => dispatch(finalized(), { wait: new Semaphore() } as never), new ArgumentError('dispatch: wait must be an array of Semaphores, got a Semaphore; wrap one in [ ]')],
    ['dispatch signal entry null', () => dispatch(finalized(), { signal: [null] } as never), new ArgumentError('dispatch: signal[0] must be a Semaphore (new Semaphore()), got null')],
    ['dispatch fence 5', () => dispatch(finalized(), { fence: 5 } as never), new ArgumentError('dispatch: fence must be a Fence (new Fence()), got 5')],
    ['new CommandQueue(5)', () => new CommandQueue(5 as never), new ArgumentError('CommandQueue: context must be a Context from createContext(), got 5')],
    ['CommandQueue options null', () => new CommandQueue(ctx, job, null as never), new OptionError('CommandQueue options must be an object of options (or left out), got null')],
    ['CommandQueue option batch', () => new CommandQueue(ctx, job, { batch: 2 } as never), new OptionError("CommandQueue options has no option 'batch'; did you mean 'maxBatch'? Valid options: 'maxBatch'")],
    ['enqueueRead option block', () => new CommandQueue(ctx).enqueueRead(ctx.memAlloc(MEM), 0, new Uint8Array(4), { block: true } as never), new OptionError("enqueueRead options has no option 'block'; did you mean 'blocking'? Valid options: 'blocking'")],
    ["enqueueRead blocking 'yes'", () => new CommandQueue(ctx).enqueueRead(ctx.memAlloc(MEM), 0, new Uint8Array(4), { blocking: 'yes' } as never), new OptionError("blocking must be true or false, got 'yes'")],
    ['enqueueCallback(5)', () => new CommandQueue(ctx).enqueueCallback(5 as never), new ArgumentError('enqueueCallback: fn must be a function to run as a command, got 5')],
    ['enqueueLaunch(5, range)', () => new CommandQueue(ctx, job).enqueueLaunch(5 as never, { global: [4] }), new ArgumentError("enqueueLaunch: kernel must be the name of a kernel of the Job's modules (a non-empty string), got 5")],
  ])('%s', (_, call, error) => {
    expect(call).toThrow(error);
    expect(call).toThrow(error.constructor as new () => Error);
  });

  it('fences reject a bad timeout, and a wait given a timeout it would ignore', async () => {
    await expect(new Fence().tryWait('10' as never)).rejects.toThrow(new OptionError("timeoutMs must be a finite number >= 0, got '10'"));
    await expect((new Fence().wait as (ms: number) => Promise<void>)(5)).rejects.toThrow(new OptionError('Fence.wait takes no arguments, got 1; to wait at most timeoutMs milliseconds, call tryWait(timeoutMs)'));
  });

  it('a blocking read with an unknown option rejects instead of throwing', async () => {
    const read = new CommandQueue(ctx).enqueueRead(ctx.memAlloc(MEM), 0, new Uint8Array(4), { blocking: true, block: true } as never);
    await expect(read).rejects.toThrow(new OptionError("enqueueRead options has no option 'block'; did you mean 'blocking'? Valid options: 'blocking'"));
  });

  it('a refused dispatch leaves the buffer undispatched, and a refused enqueue records nothing', async () => {
    const cb = finalized();
    expect(() => dispatch(cb, { callback: 'log' } as never)).toThrow(OptionError);
    expect(cb.state).toBe('finalized');
    const fence = new Fence();
    dispatch(cb, { fence });
    await fence.wait();
    const q = new CommandQueue(ctx);
    expect(() => q.enqueueRead(ctx.memAlloc(MEM), 0, new Uint8Array(4), { blocking: 1 } as never)).toThrow(OptionError);
    expect(q.queued).toBe(0);
  });
});

describe('PCF values, files and arrays refuse bad input', () => {
  it.each<[string, () => unknown, Error]>([
    ['Pcf.from(null)', () => Pcf.from(null as never), new PcfError(0, 'expected an array of [t, v] pairs, got null')],
    ['Pcf.from with an unknown option', () => Pcf.from([[0, 1]], { dtyp: 'float32' } as never), new OptionError("Pcf.from options has no option 'dtyp'; did you mean 'dtype'? Valid options: 'dtype', 'index'")],
    ['lpDistance(null, f)', () => lpDistance(null as never, Pcf.from([[0, 1]])), new ArgumentError('lpDistance: f must be a Pcf (Pcf.from([[t, v], ...]), or pcfAt(set, i)), got null')],
    ['lpNorm of an array', () => lpNorm([[0, 1]] as never), new ArgumentError('lpNorm: f must be a Pcf (Pcf.from([[t, v], ...]), or pcfAt(set, i)), got an array of length 1')],
    ['l2InnerProduct(f, 5)', () => l2InnerProduct(Pcf.from([[0, 1]]), 5 as never), new ArgumentError('l2InnerProduct: g must be a Pcf (Pcf.from([[t, v], ...]), or pcfAt(set, i)), got 5')],
    ['pcfAt(null, 0)', () => pcfAt(null as never, 0), new ArgumentError('pcfAt: set must be a PcfSet (from pcfSetFrom), got null')],
    ['pcfSetFrom(5)', () => pcfSetFrom(5 as never), new ArgumentError('pcfSetFrom: pcfs must be an array of PCFs (each a Pcf or an array of [t, v] pairs), got 5')],
    ['parsePcfJson of bytes', () => parsePcfJson(new Uint8Array(2) as never), new ArgumentError('parsePcfJson: text must be a string of JSON, got a Uint8Array; decode it first (new TextDecoder().decode(bytes)) or use readPcfFile')],
    ['parsePcfJson of [[]]', () => parsePcfJson('[[]]'), new InputFormatError('PCF 0: has no breakpoints; a PCF starts with a breakpoint at time 0')],
    ['randomPcfs() without options', () => randomPcfs(undefined as never), new OptionError('randomPcfs options must be an object such as { n: 100, points: 10 }, got undefined')],
    ['randomPcfs({ count })', () => randomPcfs({ count: 3, points: 2 } as never), new OptionError("randomPcfs options has no option 'count'; did you mean 'n'? Valid options: 'n', 'points', 'seed', 'dtype', 'shared'")],
    ['randomPcfs beyond a PcfSet', () => randomPcfs({ n: 40_000_000, points: 100 }), new OptionError('n * points must be at most 2147483647 (the most breakpoints a PCF set holds), got 40000000 * 100 = 4000000000; lower n or points')],
    ['encodeNpy of a plain array', () => encodeNpy([1, 2] as never, [2]), new ArgumentError('encodeNpy: data must be a Float64Array or a Float32Array, got an array of length 2')],
    ['decodeNpy of a string', () => decodeNpy('x.npy' as never), new ArgumentError("decodeNpy: bytes must be a Uint8Array (or a Node Buffer) of an .npy file, got 'x.npy'")],
    ['pcfSetFrom with a misspelt option', () => pcfSetFrom(X, { dtyp: 1 } as never), new OptionError("pcfSetFrom options has no option 'dtyp'; did you mean 'dtype'? Valid options: 'dtype', 'shape', 'shared'")],
    ['pcfSetFrom(X, null)', () => pcfSetFrom(X, null as never), new OptionError("pcfSetFrom: the second argument must be a dtype ('float64' or 'float32') or an options object { dtype, shape, shared }, got null")],
    ['pcfSetFrom with the dtype twice', () => pcfSetFrom(X, 'float32', { dtype: 'float64' } as never), new OptionError("pcfSetFrom: dtype is given twice, as the second argument ('float32') and in the options ('float64'); give it once")],
    ['pcfSetFrom with options twice', () => pcfSetFrom(X, {} as never, {}), new OptionError('pcfSetFrom: options are given twice, as the second argument and as the third; pass one options object (the third argument follows only a dtype string)')],
    ["pcfSetFrom(X, { dtype: 'float16' })", () => pcfSetFrom(X, { dtype: 'float16' } as never), new OptionError("dtype must be one of 'float64', 'float32', got 'float16'")],
    ["pcfSetFromNested with a misspelt option", () => pcfSetFromNested([X], { shard: true } as never), new OptionError("pcfSetFromNested options has no option 'shard'; did you mean 'shared'? Valid options: 'dtype', 'shared'")],
    ["integrationLimit('x')", () => integrationLimit('x' as never), new OptionError("integrationLimit: dtype must be one of 'float64', 'float32', got 'x'")],
    ['condensedIndex(3, 1, 1)', () => condensedIndex(3, 1, 1), new ArgumentError('condensedIndex: i and j are both 1; the diagonal (i, i) is not stored in the condensed order (its entry is always 0), so pass i != j')],
    ['condensedIndex(3, 0, 3)', () => condensedIndex(3, 0, 3), new OptionError('condensedIndex: j must be an integer in [0, 2], got 3')],
    ['condensedIndex(3, -1, 2)', () => condensedIndex(3, -1, 2), new OptionError('condensedIndex: i must be an integer in [0, 2], got -1')],
    ['condensedIndex(3, 0.5, 2)', () => condensedIndex(3, 0.5, 2), new OptionError('condensedIndex: i must be an integer in [0, 2], got 0.5')],
    ['condensedIndex(1, 0, 0)', () => condensedIndex(1, 0, 0), new OptionError('condensedIndex: n must be an integer in [2, 9007199254740991], got 1')],
    ['new Semaphore(5)', () => new (Semaphore as new (count: number) => Semaphore)(5), new ArgumentError('new Semaphore() takes no arguments, got 1 (5); a Semaphore is binary and one-shot, with no count: a dispatch that lists it in signal signals it once, and a dispatch that lists it in wait starts once it is signalled (use one Semaphore per dependency)')],
  ])('%s', (_, call, error) => {
    expect(call).toThrow(error);
    expect(call).toThrow(error.constructor as new () => Error);
  });

  it('readPcfFile rejects a path that is not a string', async () => {
    await expect(readPcfFile(5 as never)).rejects.toThrow(new ArgumentError('readPcfFile: path must be a file name, got 5'));
  });

  const write = async (): Promise<void> => undefined;
  it.each<[string, () => Promise<unknown>, Error]>([
    ['readPcfNpz(null)', () => readPcfNpz(null as never), new ArgumentError('readPcfNpz: path must be a file name, got null')],
    ['readPcfNpz options null', () => readPcfNpz('x.npz', null as never), new OptionError('readPcfNpz options must be an object of options (or left out), got null')],
    ['readPcfNpz with a misspelt option', () => readPcfNpz('x.npz', { dtyp: 'float32' } as never), new OptionError("readPcfNpz options has no option 'dtyp'; did you mean 'dtype'? Valid options: 'dtype', 'shared'")],
    ["readPcfNpz dtype 'float16'", () => readPcfNpz('x.npz', { dtype: 'float16' } as never), new OptionError("dtype must be one of 'float64', 'float32', got 'float16'")],
    ["readPcfNpz shared 'yes'", () => readPcfNpz('x.npz', { shared: 'yes' } as never), new OptionError("shared must be true or false, got 'yes'")],
    ['writePcfNpz(null, write)', () => writePcfNpz(null as never, write), new ArgumentError('writePcfNpz: set must be a PcfSet (from pcfSetFrom or readPcfFile), got null')],
    ['writePcfNpz of an array of PCFs', () => writePcfNpz(X as never, write), new ArgumentError('writePcfNpz: set must be a PcfSet (from pcfSetFrom or readPcfFile), got an array of length 2')],
    ['writePcfNpz of a malformed set', () => writePcfNpz({ ...pcfSetFrom(X), offsets: new Uint32Array(1) }, write), new ArgumentError('writePcfNpz set is not a valid PcfSet: offsets must be a Uint32Array of count + 1 = 3 entries, got a Uint32Array of length 1; build one with pcfSetFrom')],
    ['writePcfNpz(set, null)', () => writePcfNpz(pcfSetFrom(X), null as never), new OptionError('writePcfNpz: write must be a function, got null')],
  ])('%s rejects', async (_, call, error) => {
    await expect(call()).rejects.toThrow(error);
    await expect(call()).rejects.toBeInstanceOf(error.constructor);
  });

  it('pcfSetFrom takes a dtype as the second argument or in an options object', () => {
    expect(pcfSetFrom(X, 'float32').dtype).toBe('float32');
    expect(pcfSetFrom(X, { dtype: 'float32', shape: [1, 2] })).toMatchObject({ dtype: 'float32', shape: [1, 2] });
    expect(pcfSetFrom(X, 'float32', { shape: [2, 1] })).toMatchObject({ dtype: 'float32', shape: [2, 1] });
    expect(pcfSetFromNested([X], { dtype: 'float32' })).toMatchObject({ dtype: 'float32', shape: [1, 2] });
  });

  it('condensedIndex gives scipy squareform order, the same for (i, j) and (j, i)', () => {
    // scipy.spatial.distance.squareform keeps the pairs i < j row by row: (0,1) (0,2) (0,3) (0,4) (1,2) ...
    const n = 5;
    let k = 0;
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++, k++) {
        expect([condensedIndex(n, i, j), condensedIndex(n, j, i)]).toEqual([k, k]);
      }
    }
    expect(k).toBe(10);
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

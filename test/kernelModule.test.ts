import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArgumentError, createContext, KernelModule, KernelNotFoundError, ModuleLoadError, NDArray, OptionError, type Context } from '../src/index.js';

const fixtures = new URL('./fixtures/', import.meta.url);
const tsUrl = new URL('kernels.ts', fixtures);
const jsUrl = new URL('jsKernels.mjs', fixtures);

let ctx: Context;
let other: Context;

beforeAll(async () => {
  [ctx, other] = await Promise.all([
    createContext({ topology: { subs: 1, clustersPerSub: 2, coresPerCluster: 1 } }),
    createContext({ topology: { coresPerCluster: 1 } }),
  ]);
});

afterAll(async () => {
  await Promise.all([ctx?.destroy(), other?.destroy()]);
});

describe('Context.createModule', () => {
  it('loads a TypeScript module and registers its kernels by export name, sorted', async () => {
    const module = await ctx.createModule(tsUrl);
    expect(module).toBeInstanceOf(KernelModule);
    expect(module.url).toBe(tsUrl.href);
    expect(module.kernelNames).toEqual(expect.arrayContaining(['count_tasks', 'mark_thread', 'throw_at', 'triad']));
    expect(module.kernelNames).toEqual([...module.kernelNames].sort());
  });

  it('loads a plain JavaScript module and ignores exports that are not kernels', async () => {
    const module = await ctx.createModule(jsUrl);
    expect(module.kernelNames).toEqual(['js_batch_count', 'js_mark_rows']);
  });

  it('resolves a relative path against the working directory', async () => {
    const module = await ctx.createModule('test/fixtures/jsKernels.mjs');
    expect(module.url).toBe(pathToFileURL(resolve('test/fixtures/jsKernels.mjs')).href);
    expect(module.kernelNames).toEqual(['js_batch_count', 'js_mark_rows']);
  });

  it('loads the module into every MU core before it resolves', async () => {
    const module = await ctx.createModule(tsUrl);
    const job = ctx.createJob();
    job.load(module);
    const counts = ctx.memAlloc(4 * 2);
    const threads = ctx.memAlloc(4 * 2);
    // batchSize 1 over two cores: each core runs one task.
    const map = job.buildMap('mark_thread', 2).setBatchSize(1);
    await map.execute(counts, threads);
    await map.synchronize();
    expect([...ctx.hostView(counts, 'int32')]).toEqual([1, 1]);
    expect(new Set(ctx.hostView(threads, 'int32')).size).toBe(2);
    ctx.destroyJob(job);
    ctx.memFree(counts);
    ctx.memFree(threads);
  });

  it('runs the kernels of a JavaScript module, task and batch form', async () => {
    const job = ctx.createJob();
    job.load(await ctx.createModule(jsUrl));
    const rowsPtr = ctx.memAlloc(6 * 2 * 8);
    const counts = ctx.memAlloc(6 * 4);
    const marks = job.buildMap('js_mark_rows', 6).setBatchSize(1);
    await marks.execute(new NDArray(rowsPtr, 'float64', [6, 2]), 10);
    await marks.synchronize();
    expect([...ctx.hostView(rowsPtr, 'float64')]).toEqual([0, 0, 10, 0, 20, 0, 30, 0, 40, 0, 50, 0]);
    const batches = job.buildMap('js_batch_count', 6).setBatchSize(4);
    await batches.execute(counts);
    await batches.synchronize();
    expect([...ctx.hostView(counts, 'int32')]).toEqual([1, 1, 1, 1, 1, 1]);
    ctx.destroyJob(job);
    ctx.memFree(rowsPtr);
    ctx.memFree(counts);
  });

  it('rejects with ModuleLoadError carrying the import error when the module throws while loading', async () => {
    const url = new URL('brokenModule.ts', fixtures);
    const loading = ctx.createModule(url);
    await expect(loading).rejects.toThrow(ModuleLoadError);
    await expect(loading).rejects.toThrow(`cannot load kernel module ${url.href}: this fixture fails to import on purpose`);
    // The cause is the import error itself, with the core's stack naming the module that threw.
    const error = (await loading.then(() => undefined, (e: unknown) => e)) as ModuleLoadError;
    expect(error.cause).toBeInstanceOf(Error);
    expect((error.cause as Error).message).toBe('this fixture fails to import on purpose');
    expect((error.cause as Error).stack).toContain('brokenModule.ts');
  });

  it('rejects with ModuleLoadError naming the module when the file does not exist', async () => {
    const url = new URL('noSuchModule.ts', fixtures);
    const loading = ctx.createModule(url);
    await expect(loading).rejects.toThrow(ModuleLoadError);
    await expect(loading).rejects.toThrow(`cannot load kernel module ${url.href}: `);
  });

  it('rejects with ModuleLoadError naming the file and the SyntaxError for a module that does not parse', async () => {
    const url = new URL('syntaxError.mjs', fixtures);
    const loading = ctx.createModule(url);
    await expect(loading).rejects.toThrow(ModuleLoadError);
    await expect(loading).rejects.toThrow(`cannot load kernel module ${url.href}: SyntaxError: `);
  });

  it('rejects with ModuleLoadError naming the missing export for a module that imports a name that does not exist', async () => {
    const url = new URL('missingExport.mjs', fixtures);
    await expect(ctx.createModule(url)).rejects.toThrow(
      `cannot load kernel module ${url.href}: SyntaxError: The requested module './jsKernels.mjs' does not provide an export named 'no_such_kernel'`,
    );
  });

  it('rejects with ModuleLoadError, and respawns no core forever, when the module calls process.exit while it loads', async () => {
    const own = await createContext({ topology: { subs: 1, clustersPerSub: 1, coresPerCluster: 2 } });
    try {
      const url = new URL('exitAtImport.mjs', fixtures);
      const loading = own.createModule(url);
      await expect(loading).rejects.toThrow(ModuleLoadError);
      await expect(loading).rejects.toThrow(`cannot load kernel module ${url.href}: an MU core died while importing it: its worker thread exited with code 4`);
      // The replacements do not import the module again: they stay up, the same threads run every
      // later launch, and every core runs its task.
      const job = own.createJob();
      job.load(await own.createModule(tsUrl));
      const threads = async (): Promise<number[]> => {
        const counts = own.memAlloc(4 * 2);
        const out = own.memAlloc(4 * 2);
        const map = job.buildMap('mark_thread', 2).setBatchSize(1);
        await map.execute(counts, out);
        await map.synchronize();
        expect([...own.hostView(counts, 'int32')]).toEqual([1, 1]);
        const ids = [...own.hostView(out, 'int32')];
        own.memFree(counts);
        own.memFree(out);
        return ids;
      };
      const first = await threads();
      expect(new Set(first).size).toBe(2);
      await own.createModule(jsUrl);
      expect(await threads()).toEqual(first);
    } finally {
      await own.destroy();
    }
  });

  it('keeps every core working after a module failed to load', async () => {
    await expect(ctx.createModule(new URL('brokenModule.ts', fixtures))).rejects.toThrow(ModuleLoadError);
    const job = ctx.createJob();
    job.load(await ctx.createModule(tsUrl));
    const counts = ctx.memAlloc(4 * 2);
    const threads = ctx.memAlloc(4 * 2);
    // batchSize 1 over the Job's two cores: each core runs one task, so both must be alive.
    const map = job.buildMap('mark_thread', 2).setBatchSize(1);
    await map.execute(counts, threads);
    await map.synchronize();
    expect(job.coreCount).toBe(2);
    expect([...ctx.hostView(counts, 'int32')]).toEqual([1, 1]);
    expect(new Set(ctx.hostView(threads, 'int32')).size).toBe(2);
    ctx.destroyJob(job);
    ctx.memFree(counts);
    ctx.memFree(threads);
  });
});

describe('Job.load and buildMap', () => {
  it('fails with KernelNotFoundError listing no kernels before any module is loaded', () => {
    const job = ctx.createJob();
    const build = () => job.buildMap('js_mark_rows', 1);
    expect(build).toThrow(KernelNotFoundError);
    expect(build).toThrow("kernel 'js_mark_rows' is not exported by the loaded modules; available kernels: (none)");
    ctx.destroyJob(job);
  });

  it('fails with KernelNotFoundError listing the loaded kernels for a missing name', async () => {
    const job = ctx.createJob();
    job.load(await ctx.createModule(jsUrl));
    let caught: unknown;
    try {
      job.buildMap('js_mark_row', 1);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(KernelNotFoundError);
    const err = caught as KernelNotFoundError;
    expect(err.message).toBe("kernel 'js_mark_row' is not exported by the loaded modules; available kernels: 'js_batch_count', 'js_mark_rows'");
    expect(err.code).toBe('PXL_KERNEL_NOT_FOUND');
    expect(err.kernel).toBe('js_mark_row');
    expect(err.available).toEqual(['js_batch_count', 'js_mark_rows']);
    expect(job.buildMap('js_mark_rows', 1).kernelName).toBe('js_mark_rows');
    ctx.destroyJob(job);
  });

  it('lists the kernels of every loaded module together, sorted', async () => {
    const job = ctx.createJob();
    const ts = await ctx.createModule(tsUrl);
    job.load(ts);
    job.load(await ctx.createModule(jsUrl));
    expect(job.kernelNames).toEqual([...ts.kernelNames, 'js_batch_count', 'js_mark_rows'].sort());
    ctx.destroyJob(job);
  });

  it('refuses a second module that exports a kernel name already loaded', async () => {
    const job = ctx.createJob();
    const first = await ctx.createModule(jsUrl);
    const second = await ctx.createModule(jsUrl);
    job.load(first);
    job.load(first);
    expect(() => job.load(second)).toThrow(new OptionError(`load: kernel 'js_batch_count' is exported by both ${jsUrl.href} and ${jsUrl.href}; rename one of them`));
    ctx.destroyJob(job);
  });

  it('refuses a module created by another Context', async () => {
    const job = ctx.createJob();
    const foreign = await other.createModule(jsUrl);
    expect(() => job.load(foreign)).toThrow(new OptionError('load: the module was created by another Context'));
    ctx.destroyJob(job);
  });
});

describe('execute() checks the argument count a kernel declares, reported by the cores at load', () => {
  const TAKES = 'pass one argument per parameter of the kernel, in order';
  let job: ReturnType<Context['createJob']>;
  let out: ReturnType<Context['memAlloc']>;

  beforeAll(async () => {
    job = other.createJob();
    job.load(await other.createModule(new URL('arityKernels.ts', fixtures)));
    out = other.memAlloc(4 * 4);
  });

  afterAll(() => {
    other.destroyJob(job);
    other.memFree(out);
  });

  /** Runs `name` over one task with `args` and returns what it wrote at out[0]. */
  const run = async (name: string, ...args: unknown[]): Promise<number> => {
    other.hostView(out, 'int32').fill(-1);
    const map = job.buildMap(name, 1);
    await map.execute(...(args as never[]));
    await map.synchronize();
    return other.hostView(out, 'int32')[0]!;
  };

  // The last column is the error's argIndex: the first argument past those the kernel takes.
  it.each<[string, unknown[], string, number | undefined]>([
    ['two_params', [], "kernel 'two_params' takes 2 arguments, got 0", undefined],
    ['two_params', ['out'], "kernel 'two_params' takes 2 arguments, got 1", undefined],
    ['two_params', ['out', 1, 2], "kernel 'two_params' takes 2 arguments, got 3", 2],
    ['default_param', [], "kernel 'default_param' takes at least 1 argument, got 0", undefined],
    ['rest_params', [], "kernel 'rest_params' takes at least 1 argument, got 0", undefined],
    ['batch_three', ['out', 1], "kernel 'batch_three' takes 3 arguments, got 2", undefined],
  ])('refuses %s with %j', async (name, args, message, argIndex) => {
    const map = job.buildMap(name, 1);
    const given = args.map((a) => (a === 'out' ? out : a));
    await expect(map.execute(...(given as never[]))).rejects.toThrow(new ArgumentError(`${message}: ${TAKES}`, argIndex));
    // Refused before anything was queued: the Map is not failed and runs with the right count.
    expect(map.getExecuteStatus()).toBe('Idle');
  });

  it('names the arguments of a group kernel after local', async () => {
    const map = job.buildMap('group_two', { global: [1], local: [1] });
    await expect(map.execute(out)).rejects.toThrow(new ArgumentError(`kernel 'group_two' takes 2 arguments after local (which the core passes first), got 1: ${TAKES}`));
    await map.execute(out, 9);
    await map.synchronize();
    expect(other.hostView(out, 'int32')[0]).toBe(9);
  });

  it('runs kernels given the count they take, and allows more where a default or rest parameter or arguments takes them', async () => {
    expect(await run('two_params', out, 5)).toBe(5);
    expect(await run('batch_three', out, 2, 3)).toBe(5);
    expect(await run('default_param', out)).toBe(7);
    expect(await run('default_param', out, 3, 4)).toBe(3);
    expect(await run('rest_params', out, 1, 2, 3)).toBe(3);
    expect(await run('reads_arguments', out, 1, 2)).toBe(3);
  });
});

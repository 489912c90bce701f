import { afterEach, describe, expect, it, vi } from 'vitest';
import { acquireGpuDevice } from '../src/backends/webgpu/index.js';
import { dawnRoutes as pageRoutes, INSTALL_HINT as PAGE_HINT } from '../src/backends/webgpu/dawnRoutes.browser.js';
import { createContext, DeviceUnavailableError, MaxTaskCount, OptionError, type Context } from '../src/index.js';
import { gpu } from './fixtures/wgslGpu.js';

const INSTALL = 'apt-get install libegl1 libgles2 libegl-mesa0 libgl1-mesa-dri';

afterEach(() => {
  vi.unstubAllGlobals();
});

/** A navigator.gpu that never finds an adapter, as in a browser without WebGPU support. */
function stubNoAdapter(): void {
  vi.stubGlobal('navigator', { gpu: { requestAdapter: async () => null } });
}

describe('device acquisition without an adapter', () => {
  it('rejects with DeviceUnavailableError naming each route tried and what to install', async () => {
    stubNoAdapter();
    const err = await acquireGpuDevice().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeviceUnavailableError);
    const e = err as DeviceUnavailableError;
    expect(e.code).toBe('PXL_NO_DEVICE');
    expect(e.attempts).toEqual(['navigator.gpu: no adapter', 'navigator.gpu (compatibility): no adapter']);
    expect(e.message).toBe(
      'no WebGPU adapter found; tried navigator.gpu: no adapter; navigator.gpu (compatibility): no adapter. ' +
        'To get one, install a GPU driver with Vulkan support (or Metal/D3D12 on macOS/Windows), or, for a software GPU on Linux, ' +
        `Mesa: ${INSTALL}; or compute on the CPU cores (--device cpu on the command line; backend: 'cpu' for createContext, device: 'cpu' for pdist, cdist and l2Kernel)`,
    );
  });

  it("makes createContext({ backend: 'webgpu' }) reject with that error", async () => {
    stubNoAdapter();
    await expect(createContext({ backend: 'webgpu' })).rejects.toThrow(DeviceUnavailableError);
  });

  it("makes createContext({ backend: 'auto' }) fall back to CPU cores", async () => {
    stubNoAdapter();
    const ctx = await createContext({ backend: 'auto', topology: { coresPerCluster: 2 } });
    try {
      expect(ctx.getAttribute('backend')).toBe('cpu');
      expect(ctx.getAttribute('coreCount')).toBe(2);
    } finally {
      await ctx.destroy();
    }
  });
});

describe("the browser bundle's routes past navigator.gpu", () => {
  it('offer none, and say in the attempts why a page has no navigator.gpu', async () => {
    const attempts: string[] = [];
    expect(await pageRoutes(attempts)).toEqual([]);
    expect(attempts).toEqual(['navigator.gpu: absent (this browser offers no WebGPU, or not to this page: WebGPU needs a secure context, https or localhost)']);
  });

  it('advise a page on a browser with WebGPU, not on drivers and packages to install', () => {
    expect(PAGE_HINT).toBe("to get one, open the page in a browser that offers WebGPU on this machine's GPU; or create the Context with backend: 'cpu'");
  });
});

describe('options of the webgpu backend', () => {
  it.each([
    ['topology', { topology: { subs: 2 } }],
    ['coreHeapLimitMB', { coreHeapLimitMB: 64 }],
  ])('refuses %s, which only CPU cores have', async (name, options) => {
    await expect(createContext({ backend: 'webgpu', ...options })).rejects.toThrow(
      new OptionError(`${name} applies to the cpu backend only; the webgpu backend takes its shape from the GPU adapter`),
    );
  });

  it('checks memorySize like the cpu backend does', async () => {
    await expect(createContext({ backend: 'webgpu', memorySize: -1 })).rejects.toThrow(`memorySize must be an integer in [0, ${Number.MAX_SAFE_INTEGER}], got -1`);
  });
});

describe.runIf(gpu.run)('a webgpu Context', () => {
  let ctx: Context;

  it('reports the adapter and the GPU in PXL terms', async () => {
    ctx = await createContext({ backend: 'webgpu' });
    try {
      expect(ctx.getAttribute('backend')).toBe('webgpu');
      expect(ctx.getAttribute('device')).toContain(gpu.reason);
      const t = ctx.topology;
      expect(t.subs).toBe(1);
      expect(t.coresPerCluster).toBeGreaterThanOrEqual(1);
      expect(t.coresPerCluster).toBeLessThanOrEqual(64);
      // One invocation (MU core) per batch of the largest launch.
      expect(ctx.getAttribute('coreCount')).toBeGreaterThanOrEqual(MaxTaskCount);
      expect(ctx.getAttribute('availableSubCount')).toBe(1);
      expect(ctx.getAttribute('memorySize')).toBeGreaterThan(0);
    } finally {
      await ctx.destroy();
    }
  });

  it('takes memorySize as the budget of memAlloc', async () => {
    ctx = await createContext({ backend: 'webgpu', memorySize: 4096 });
    try {
      expect(ctx.getAttribute('memorySize')).toBe(4096);
      ctx.memAlloc(1000);
      expect(ctx.availableMemSize).toBe(3096);
    } finally {
      await ctx.destroy();
    }
  });

  it("is what 'auto' picks when the adapter is a hardware GPU, and CPU cores otherwise", async () => {
    ctx = await createContext({ backend: 'auto' });
    try {
      expect(ctx.getAttribute('backend')).toBe(gpu.hardware ? 'webgpu' : 'cpu');
    } finally {
      await ctx.destroy();
    }
  });

  it.runIf(!gpu.hardware)('says so when only a software adapter exists and a hardware one was asked for', async () => {
    const err = await acquireGpuDevice({ hardwareOnly: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeviceUnavailableError);
    expect((err as DeviceUnavailableError).message).toMatch(/^no hardware WebGPU adapter found; tried .*only a software adapter/);
    expect((err as DeviceUnavailableError).message).toContain(INSTALL);
  });

  it('works through navigator.gpu, as in a browser', async () => {
    const optional: string = 'webgpu';
    const { create } = (await import(optional)) as { create: (flags: string[]) => GPU };
    const native = await acquireGpuDevice();
    const flags = native.route.includes('OpenGL') ? ['backend=opengl'] : [];
    native.device.destroy();
    vi.stubGlobal('navigator', { gpu: create(flags) });
    const viaNavigator = await acquireGpuDevice();
    try {
      expect(viaNavigator.route).toMatch(/^navigator\.gpu/);
      expect(viaNavigator.description).toBe(gpu.reason);
    } finally {
      viaNavigator.device.destroy();
    }
  });
});

describe.runIf(gpu.run)("Dawn's own output", () => {
  // Dawn writes what it finds straight to fd 2 while it enumerates adapters (on llvmpipe at least
  // "maxDynamicUniformBuffersPerPipelineLayout artificially reduced ..."). A separate process whose
  // stderr is a pipe to \`cat\`, as in a terminal pipeline, shows what a user would see.
  const script = `
    import { acquireGpuDevice } from ${JSON.stringify(new URL('../src/backends/webgpu/index.ts', import.meta.url).href)};
    const d = await acquireGpuDevice();
    console.error(d.route);
    d.device.destroy();`;
  const tsx = new URL('../node_modules/tsx/dist/esm/index.mjs', import.meta.url).href;
  async function stderrOf(debug: string): Promise<string> {
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    const env = { ...process.env, PXL_DEBUG: debug, NODE: process.execPath, TSX: tsx, SCRIPT: script };
    const { stdout } = await promisify(execFile)('sh', ['-c', '"$NODE" --import "$TSX" --input-type=module -e "$SCRIPT" 2>&1 >/dev/null | cat'], { env, timeout: 60_000 });
    return stdout;
  }

  it('stays off the terminal, and PXL_DEBUG lets it through', async () => {
    const quiet = await stderrOf('');
    // Only the script's own line: the route that found the adapter.
    expect(quiet.trim().split('\n')).toHaveLength(1);
    const route = quiet.trim();
    const debug = await stderrOf('1');
    expect(debug).toContain(route);
    // Dawn's OpenGL backend always reports the limits it lowers; other backends may say nothing.
    if (route.includes('OpenGL')) expect(debug).toContain('artificially reduced');
  });
});

describe.runIf(gpu.run)('GPU Contexts opened at once', () => {
  // What this guards against is a native crash of the whole process (SIGSEGV, or SIGABRT from a
  // failed mutex assertion in Dawn's Vulkan backend) that came in about two runs of three: so
  // the fixture runs in child processes, three times.
  it('compute at once without crashing the process, and agree with the CPU cores', async () => {
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    const root = new URL('..', import.meta.url).pathname;
    for (let run = 0; run < 3; run++) {
      const { stdout } = await promisify(execFile)(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'test/fixtures/gpuCallsAtOnce.ts'], { cwd: root, timeout: 60_000 });
      expect(stdout.trim()).toBe('8 calls, worst relative difference below 5e-6');
    }
  }, 200_000);
});

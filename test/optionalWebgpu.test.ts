import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * `webgpu` is an optional dependency: an install without it (npm ci --omit=optional) must still
 * run everything on CPU cores, and asking for the GPU must say how to get it. A resolve hook hides
 * the package in a child process, so this runs whether or not it is installed here.
 */
describe('without the optional webgpu package', () => {
  it("runs on CPU cores, falls back from backend 'auto', and says how to install it when the GPU is asked for", () => {
    const out = execFileSync(process.execPath, ['--import', './test/fixtures/hideWebgpu.mjs', 'test/fixtures/withoutWebgpu.mjs'], { encoding: 'utf8', timeout: 60_000 });
    const result = JSON.parse(out) as { auto: string; explicit: { error?: { name: string; message: string } }; viaDevice: { error?: { name: string; message: string } }; cpuPairs: number };
    expect(result.auto).toBe('cpu');
    expect(result.cpuPairs).toBe(10);
    const expected = {
      name: 'DeviceUnavailableError',
      message: "WebGPU in Node needs the optional webgpu package (Dawn for Node), which is not installed: run npm install webgpu (npm ci --omit=optional leaves it out), or compute on the CPU cores (--device cpu on the command line; backend: 'cpu' for createContext, device: 'cpu' for pdist, cdist and l2Kernel)",
    };
    expect(result.explicit.error).toEqual(expected);
    expect(result.viaDevice.error).toEqual(expected);
  });
});

describe('pxl without the optional webgpu package', () => {
  const pxl = (args: string[]) => spawnSync(process.execPath, ['--import', './test/fixtures/hideWebgpu.mjs', 'bin/pxl.js', ...args], { encoding: 'utf8', timeout: 60_000 });
  const MESSAGE = "pxl: WebGPU in Node needs the optional webgpu package (Dawn for Node), which is not installed: run npm install webgpu (npm ci --omit=optional leaves it out), or compute on the CPU cores (--device cpu on the command line; backend: 'cpu' for createContext, device: 'cpu' for pdist, cdist and l2Kernel)\n";

  it('says how to install it for --device gpu or all (exit code 1, no stack), and computes with --device cpu; pxl info says why it found no GPU', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pxl-no-webgpu-'));
    const input = join(dir, 'pcfs.json');
    writeFileSync(input, JSON.stringify([[[0, 1], [2, 0]], [[0, 3], [1, 0]]]));
    try {
      for (const device of ['gpu', 'all']) {
        const r = pxl(['pdist', input, '-o', '-', '--format', 'json', '--device', device]);
        expect({ device, status: r.status, stderr: r.stderr, stdout: r.stdout }).toEqual({ device, status: 1, stderr: MESSAGE, stdout: '' });
      }
      const cpu = pxl(['pdist', input, '-o', '-', '--format', 'json', '-q']);
      expect({ status: cpu.status, stdout: JSON.parse(cpu.stdout) as unknown }).toEqual({ status: 0, stdout: [[0, 3], [3, 0]] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const info = pxl(['info', '--device', 'all', '--json']);
    expect(info.status).toBe(0);
    // (Its webgpu field comes from require.resolve, which the import hook does not hide.)
    const json = JSON.parse(info.stdout) as { gpu: unknown };
    expect(json.gpu).toEqual({ found: false, reason: MESSAGE.slice('pxl: '.length, -1) });
  }, 60_000);
});

describe('a CPU-only install (npm ci --omit=optional)', () => {
  // That flag also leaves out rolldown's platform binary, without which Vitest does not start; the
  // install's build step fetches it, and a failed fetch must not fail the install.
  it("fetches Vitest's platform binary in the install's build step, without failing the install", () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.prepare).toMatch(/&& node scripts\/test-tools\.mjs --optional$/);
    expect(readFileSync(new URL('../scripts/test-tools.mjs', import.meta.url), 'utf8')).toContain("if (!process.argv.includes('--optional')) throw error;");
  });
});

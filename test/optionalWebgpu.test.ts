import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
      message: "WebGPU in Node needs the optional webgpu package (Dawn for Node), which is not installed: run npm install webgpu (npm ci --omit=optional leaves it out), or run on the CPU cores (backend: 'cpu')",
    };
    expect(result.explicit.error).toEqual(expected);
    expect(result.viaDevice.error).toEqual(expected);
  });
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

// Makes sure the test runner can start after `npm ci --omit=optional` (a CPU-only install).
//
// npm cannot omit one optional dependency and keep another: `--omit=optional` leaves out the GPU's
// `webgpu` package, as intended, but also the platform binary of rolldown, the bundler inside
// Vitest, which then fails at start-up with "Cannot find native binding". When that binary is
// missing, this fetches the exact version rolldown pins for this platform from the npm registry
// (`npm pack`) and unpacks it where rolldown looks. With the binary present it does nothing.
//
// `npm ci` runs it too (package.json's prepare, with --optional), so that `npx vitest` works right
// after a CPU-only install; there a failed fetch (no network) only says so, since the install
// itself is complete, and `npm test` tries again.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

function rolldownDir() {
  // Vitest depends on Vite, Vite on rolldown; resolve along that chain, as rolldown is found at run time.
  const vite = dirname(createRequire(require.resolve('vitest/package.json')).resolve('vite/package.json'));
  return dirname(createRequire(join(vite, 'package.json')).resolve('rolldown/package.json'));
}

function bindingName() {
  const { platform, arch } = process;
  if (platform === 'linux') {
    const musl = !process.report?.getReport().header.glibcVersionRuntime;
    return `@rolldown/binding-linux-${arch}-${musl ? 'musl' : 'gnu'}`;
  }
  if (platform === 'win32') return `@rolldown/binding-win32-${arch}-msvc`;
  return `@rolldown/binding-${platform}-${arch}`;
}

const dir = rolldownDir();
const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
const name = bindingName();
const version = manifest.optionalDependencies?.[name];
const resolvable = (() => {
  try {
    createRequire(join(dir, 'package.json')).resolve(`${name}/package.json`);
    return true;
  } catch {
    return false;
  }
})();

if (version === undefined) {
  console.error(`test-tools: rolldown ${manifest.version} has no binary for ${process.platform}-${process.arch}; Vitest may not start here`);
} else if (!resolvable) {
  try {
    fetchBinding(dir, name, version);
  } catch (error) {
    if (!process.argv.includes('--optional')) throw error;
    console.error(`test-tools: could not fetch ${name}@${version} (${String(error?.message ?? error).split('\n')[0]}); npm test will try again`);
  }
}

function fetchBinding(dir, name, version) {
  const target = join(dirname(dir), ...name.split('/'));
  const scratch = mkdtempSync(join(tmpdir(), 'pxl-test-tools-'));
  try {
    console.log(`test-tools: ${name}@${version} (Vitest's bundler binary) is missing, as after npm ci --omit=optional; fetching it`);
    const tarball = execFileSync('npm', ['pack', `${name}@${version}`, '--silent', '--pack-destination', scratch], {
      encoding: 'utf8',
      shell: process.platform === 'win32',
    }).trim().split('\n').pop();
    mkdirSync(target, { recursive: true });
    execFileSync('tar', ['-xzf', join(scratch, tarball), '-C', target, '--strip-components=1']);
    if (!existsSync(join(target, 'package.json'))) throw new Error(`unpacking ${tarball} into ${target} left no package.json`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

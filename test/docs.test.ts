import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { transform } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { programOf, snippetsOf, type Snippet } from './helpers/snippets.js';
import { gpu } from './fixtures/wgslGpu.js';

/**
 * Every `ts` and `sh` block of README.md and docs/*.md runs as written (see helpers/snippets.ts for
 * how a page says which blocks are modules, setup, or skipped, and why): the TypeScript through
 * tsx, the same code stripped of its types by esbuild as plain JavaScript, both against the built
 * package (`npm test` builds it first), the TypeScript also through the project's type check, and
 * the README's shell commands against bin/pxl.js in a scratch directory.
 */
const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const tsx = join(root, 'node_modules/tsx/dist/cli.mjs');
// Every page, with no list of exceptions: a new page's blocks run (or say why not) from the start.
const PAGES = ['README.md', ...(await readdir(join(root, 'docs'))).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const snippets = (await Promise.all(PAGES.map(async (p) => snippetsOf(p, await readFile(join(root, p), 'utf8'))))).flat();

let scratch: string;

/** A program of a page: its blocks in order, and the modules it can load. */
interface Program {
  readonly page: string;
  readonly name: string;
  readonly blocks: Snippet[];
  readonly files: Snippet[];
}

const programs: Program[] = [];
for (const s of snippets) {
  if (s.lang !== 'ts' || s.skip !== undefined) continue;
  let p = programs.find((x) => x.page === s.page && x.name === s.program);
  if (p === undefined) programs.push((p = { page: s.page, name: s.program, blocks: [], files: [] }));
  (s.file !== undefined ? p.files : p.blocks).push(s);
}

const dirOf = (p: Program, lang: 'ts' | 'js'): string => join(scratch, lang, p.page.replace(/[/.]/g, '_'), p.name);
const asJs = (name: string): string => name.replace(/\.ts$/, '.mjs');
const jsSource = async (code: string): Promise<string> =>
  (await transform(code, { loader: 'ts', format: 'esm', target: 'node20' })).code.replace(/(['"])(\.\/[\w./-]+)\.ts\1/g, '$1$2.mjs$1');

beforeAll(async () => {
  if (!existsSync(join(root, 'dist/index.js'))) throw new Error('dist/ is missing: run npm run build (npm test does) before the docs test');
  scratch = await mkdtemp(join(tmpdir(), 'pxl-docs-'));
  // The snippets import 'pxl' as a user's project does: from node_modules, here the repository.
  await mkdir(join(scratch, 'node_modules'));
  await symlink(root, join(scratch, 'node_modules/pxl'), 'dir');
  await writeFile(join(scratch, 'package.json'), '{ "type": "module" }\n');
  for (const p of programs) {
    const ts = dirOf(p, 'ts'), js = dirOf(p, 'js');
    await mkdir(ts, { recursive: true });
    await mkdir(js, { recursive: true });
    // Blocks naming the same file make one module, in page order.
    const modules = new Map<string, string>();
    for (const f of p.files) modules.set(f.file!, `${modules.get(f.file!) ?? ''}${f.hidden}\n${f.code}\n`);
    for (const [name, code] of modules) {
      await writeFile(join(ts, name), code);
      await writeFile(join(js, asJs(name)), await jsSource(code));
    }
    // copy=<repository file>:<path from the program's directory>, for a module a page shows elsewhere.
    for (const b of p.blocks) {
      for (const c of b.copy) {
        const [from, to] = c.split(':') as [string, string];
        for (const dir of [ts, js]) {
          await mkdir(join(dir, to, '..'), { recursive: true });
          await writeFile(join(dir, to), await readFile(join(root, from)));
        }
      }
    }
    const main = programOf(p.blocks);
    await writeFile(join(ts, 'main.ts'), main);
    await writeFile(join(js, 'main.mjs'), await jsSource(main));
  }
});

afterAll(async () => {
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
});

/** Runs a program; a failure names the block that was running. */
async function runProgram(dir: string, args: string[]): Promise<void> {
  try {
    await run(process.execPath, args, { cwd: dir, timeout: 120_000, maxBuffer: 1 << 24 });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    const last = (e.stdout ?? '').split('\n').filter((l) => l.startsWith('#snippet ')).pop();
    throw new Error(`${last === undefined ? 'before the first block' : `in the block at ${last.slice(9)}`}: ${e.stderr || e.message}`);
  }
}

describe('docs that run', () => {
  it('has a reason for every block it skips, and runs all the others', () => {
    const skipped = snippets.filter((s) => s.skip !== undefined);
    for (const s of skipped) expect(s.skip!.length, `${s.page}:${s.line}`).toBeGreaterThan(10);
    expect(snippets.length - skipped.length).toBeGreaterThan(skipped.length * 4);
  });

  it('has no code block in a language it would not run (js, bash, ...), which would go unchecked', async () => {
    const unchecked: string[] = [];
    for (const page of PAGES) {
      const lines = (await readFile(join(root, page), 'utf8')).split('\n');
      let open = false;
      lines.forEach((line, i) => {
        if (!line.startsWith('```')) return;
        if (!open && /^```\s*(js|javascript|mjs|cjs|typescript|tsx|jsx|bash|shell|zsh|console)\s*$/i.test(line)) unchecked.push(`${page}:${i + 1} ${line}`);
        open = !open;
      });
    }
    expect(unchecked, 'write these blocks as ts or sh so that they run').toEqual([]);
  });

  it('runs every module a page shows: each program with a file block has blocks that run', () => {
    const unused = programs.filter((p) => p.blocks.length === 0).map((p) => `${p.page} (program ${p.name}): ${p.files.map((f) => `${f.file} at line ${f.line}`).join(', ')}`);
    expect(unused).toEqual([]);
  });

  for (const p of programs) {
    if (p.blocks.length === 0) continue;
    // Programs that open a WebGPU device (named gpu, or asking for the webgpu backend) run where the
    // GPU tests run (see the fixture): not in an install without the optional webgpu package.
    const runs = (p.name !== 'gpu' && !p.blocks.some((b) => b.code.includes("'webgpu'"))) || gpu.run;
    it.runIf(runs)(`runs ${p.page} (program ${p.name}) in TypeScript through tsx`, async () => {
      await runProgram(dirOf(p, 'ts'), [tsx, 'main.ts']);
    }, 150_000);

    it.runIf(runs)(`runs ${p.page} (program ${p.name}) in JavaScript`, async () => {
      await runProgram(dirOf(p, 'js'), ['main.mjs']);
    }, 150_000);
  }

  it('type-checks every TypeScript snippet with the project\'s compiler options', async () => {
    const tsconfig = JSON.parse(await readFile(join(root, 'tsconfig.json'), 'utf8')) as { compilerOptions: Record<string, unknown> };
    const options = { ...tsconfig.compilerOptions, noEmit: true, rootDir: undefined, outDir: undefined, typeRoots: [join(root, 'node_modules/@types')], noUnusedLocals: false };
    await writeFile(join(scratch, 'tsconfig.json'), JSON.stringify({ compilerOptions: options, include: ['ts/**/*.ts'] }));
    try {
      await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(scratch, 'tsconfig.json')], { cwd: scratch, timeout: 120_000 });
    } catch (err) {
      const out = (err as { stdout?: string }).stdout ?? String(err);
      throw new Error(`the snippets do not type-check:\n${out.replaceAll(`${scratch}/`, '')}`);
    }
  }, 150_000);

  // The README promises `npm run docs`; typedoc.json treats a warning (a public type that names an
  // unexported one, a broken link) as an error, so the reference must build clean.
  it('builds the API reference that npm run docs writes, without a warning', async () => {
    const typedoc = join(root, 'node_modules/typedoc/bin/typedoc');
    const { stdout, stderr } = await run(process.execPath, [typedoc, '--emit', 'none'], { cwd: root, timeout: 120_000 }).catch((err: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`typedoc failed: ${err.stdout ?? ''}${err.stderr || err.message}`);
    });
    expect(`${stdout}${stderr}`).not.toMatch(/warning|error\]/i);
  }, 150_000);

  for (const s of snippets.filter((x) => x.lang === 'sh' && x.skip === undefined)) {
    it(`runs the shell commands at ${s.page}:${s.line} against bin/pxl.js`, async () => {
      const dir = await mkdtemp(join(scratch, 'sh-'));
      const pxl = `"${process.execPath}" "${join(root, 'bin/pxl.js')}"`;
      for (const line of s.code.split('\n')) {
        const command = line.replace(/\s+#.*$/, '').trim();
        if (command === '' || command.startsWith('#')) continue;
        const { stderr } = await run('bash', ['-c', `set -e; ${command.replaceAll('npx pxl', pxl)}`], { cwd: dir, timeout: 120_000 }).catch((err: { stderr?: string; message: string }) => {
          throw new Error(`${command}: ${err.stderr || err.message}`);
        });
        expect(stderr, command).not.toMatch(/error/i);
      }
    }, 300_000);
  }
});

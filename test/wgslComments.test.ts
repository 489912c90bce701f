/**
 * scripts/wgslComments.mjs: the browser bundle's WGSL without comment lines and indentation, and
 * nothing else of the source touched.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stripWgslComments } from '../scripts/wgslComments.mjs';

const root = join(import.meta.dirname, '..');

describe('stripWgslComments', () => {
  it('empties the comment lines of a marked template literal and drops its indentation', () => {
    const source = 'const s = /* wgsl */ `\n// why\nfn f() -> f32 {\n  // how\n  return 1.0;\n}\n`;\n';
    expect(stripWgslComments(source)).toBe('const s = /* wgsl */ `\n\nfn f() -> f32 {\n\nreturn 1.0;\n}\n`;\n');
  });

  it('leaves unmarked template literals, code outside templates and substitutions as they are', () => {
    const source = [
      '// a comment of the TypeScript',
      'const plain = `\n  // kept\n`;',
      'const w = /* wgsl */ `\n  let a = ${f(`\n  // in a substitution\n`, "}", \'`\')};\n  // ${x} shares its line with a substitution\n  // gone\n  ${y}\n  // the closing backtick`;',
      'const after = `\n  // kept too\n`;',
    ].join('\n');
    expect(stripWgslComments(source)).toBe(
      [
        '// a comment of the TypeScript',
        'const plain = `\n  // kept\n`;',
        'const w = /* wgsl */ `\nlet a = ${f(`\n  // in a substitution\n`, "}", \'`\')};\n// ${x} shares its line with a substitution\n\n${y}\n// the closing backtick`;',
        'const after = `\n  // kept too\n`;',
      ].join('\n'),
    );
  });

  it('keeps the line count, so that source maps stay right', async () => {
    const source = await readFile(join(root, 'src/pcf/wgslLpRange.ts'), 'utf8');
    const stripped = stripWgslComments(source);
    expect(stripped.split('\n').length).toBe(source.split('\n').length);
    expect(stripped).not.toMatch(/^\s*\/\/ Whether the plain sum/m);
    expect(stripped.length).toBeLessThan(source.length - 1000);
  });

  it('refuses a marked template literal that never ends', () => {
    expect(() => stripWgslComments('const s = /* wgsl */ `\nfn f() {}\n')).toThrow('a /* wgsl */ template literal at offset 21 never ends');
  });
});

describe('the browser bundle', () => {
  it("ships the GPU Lp kernels' WGSL without its comments", async () => {
    const dir = join(root, 'dist/browser');
    const texts = await Promise.all((await readdir(dir)).filter((n) => n.endsWith('.js')).map((n) => readFile(join(dir, n), 'utf8')));
    const wgsl = texts.find((t) => t.includes('fn pcf_scaled_term('));
    expect(wgsl, 'no bundle file holds fn pcf_scaled_term').toBeDefined();
    expect(wgsl).not.toContain('// Whether the plain sum');
    expect(wgsl).toContain('\nfn pcf_scaled_term(');
  });
});

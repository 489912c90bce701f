/**
 * The webgpu backend's host-side import of kernel modules: Node's (moduleImport.ts) and the browser
 * bundle's (moduleImport.browser.ts) give the same namespace and the same failures.
 */
import { describe, expect, it } from 'vitest';
import { importModule as importInNode } from '../src/backends/webgpu/moduleImport.js';
import { importModule as importInPage } from '../src/backends/webgpu/moduleImport.browser.js';

const fixture = (name: string): string => new URL(`./fixtures/${name}`, import.meta.url).href;

describe.each([
  ['Node', importInNode],
  ['a browser', importInPage],
])('importModule in %s', (_where, importModule) => {
  it("gives the module's namespace", async () => {
    const ns = await importModule(fixture('jsKernels.mjs'));
    expect(ns.VERSION).toBe(1);
    expect(typeof ns.js_mark_rows).toBe('function');
  });

  it("rejects with import()'s own error for a module that does not exist", async () => {
    await expect(importModule(fixture('noSuchModule.mjs'))).rejects.toThrow(/noSuchModule\.mjs/);
  });
});

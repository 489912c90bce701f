#!/usr/bin/env node
// The `pxl` command: runs the CLI built into dist/ and exits with its code.
import { setFlagsFromString } from 'node:v8';

// Young generations of 1 MiB (V8's default grows them to 16 MiB per isolate): the worker threads
// created from here on, one per core, then keep a few MiB of garbage each rather than tens, which
// is most of the difference between pxl's peak memory and its data's (bench/cli.mjs). Their work
// is WebAssembly and typed arrays, which makes little garbage, so the smaller space costs no speed.
setFlagsFromString('--max-semi-space-size=1');

let cli;
try {
  cli = await import('../dist/cli/main.js');
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes('main.js')) throw error;
  process.stderr.write('pxl: the build is missing (dist/cli/main.js); run `npm run build` first\n');
  process.exit(1);
}
const code = await cli.run(process.argv.slice(2));
// 130 after a second Ctrl-C: the run is being abandoned (its partial files are already removed),
// so nothing is waited for.
if (code === 130) process.exit(code);
process.exitCode = code;

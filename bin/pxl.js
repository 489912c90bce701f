#!/usr/bin/env -S node --max-semi-space-size=1
// The `pxl` command: runs the CLI built into dist/ and exits with its code.
//
// The first line starts Node with V8 young generations of 1 MiB (V8's default grows them to 16 MiB
// per isolate), in this one process. `env -S` splits the rest of the line into words: GNU coreutils
// 8.30 and later (every glibc distribution that Node 20's binaries run on has it), macOS and the
// BSDs. npm's shims for Windows (cmd-shim's .cmd, .ps1 and sh files) read the line and pass the flag
// on. Where env has no -S (BusyBox builds without it, as on Alpine) the first line fails: run
// `node bin/pxl.js` there. Measured (`pxl pdist` of 2,000 PCFs, bench/cli.mjs, 2 vCPUs): peak RSS
// 112.9 MiB before, 109.1 MiB with only the two flags set below, 106.6 MiB with the first line too;
// the flag on node's command line costs about 8 ms of Node's start (`pxl --version` 90 ms against
// 82 ms), which the flags set below do not.
import { setFlagsFromString } from 'node:v8';

// Run as `node bin/pxl.js` the first line is only a comment: then the flag still reaches the worker
// threads created from here on (one per core; their work is WebAssembly and typed arrays, which makes
// little garbage), and the main thread's young generation stops growing at the size it has now.
setFlagsFromString('--max-semi-space-size=1');
setFlagsFromString('--semi-space-growth-factor=1');

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

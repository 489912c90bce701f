#!/usr/bin/env node
// The `pxl` command: runs the CLI built into dist/ and exits with its code.
//
// V8 grows a young generation to 16 MiB per isolate; the flags below hold it at 1 MiB for the worker
// threads created from here on (one per core; their work is WebAssembly and typed arrays, which makes
// little garbage) and stop the main thread's from growing past the size it has now. The same flag
// on node's command line (a first line of `env -S node --max-semi-space-size=1`) would save 2.5 MiB
// more of `pxl pdist`'s 2,000 PCFs (bench/cli.mjs) but cost 8 ms of start-up, and BusyBox's env
// (Alpine, a common base of worker containers) has no -S, so pxl would not start there at all.
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--max-semi-space-size=1');
setFlagsFromString('--semi-space-growth-factor=1');

// A Ctrl-C or SIGTERM while the CLI loads has nothing to stop or clean up yet: exit 130, the code
// of one during a run, rather than die by the signal. Once the CLI runs, its own handlers answer
// and this one stays, doing nothing, so that no signal finds the process without a handler.
let loading = true;
const whileLoading = () => {
  if (loading) process.exit(130);
};
process.on('SIGINT', whileLoading);
process.on('SIGTERM', whileLoading);

let cli;
try {
  cli = await import('../dist/cli/main.js');
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes('main.js')) throw error;
  process.stderr.write('pxl: the build is missing (dist/cli/main.js); run `npm run build` first\n');
  process.exit(1);
}
// A run whose promises all wait on each other leaves nothing for the event loop to do, and Node then
// ends the process with code 13 and no word: say so, with the exit code of a runtime error.
let settled = false;
process.once('exit', () => {
  if (settled || process.exitCode !== 13) return;
  process.stderr.write('pxl: internal error: the command stopped with its work unfinished and nothing left to wait for, so its output was not written; please report it with the command line\n');
  process.exitCode = 1;
});
loading = false;
const code = await cli.run(process.argv.slice(2));
settled = true;
// 130 after a second Ctrl-C: the run is being abandoned (its partial files are already removed),
// so nothing is waited for.
if (code === 130) process.exit(code);
process.exitCode = code;

#!/usr/bin/env node
// The `pxl` command: runs the CLI built into dist/ and exits with its code.
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

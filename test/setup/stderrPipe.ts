/**
 * Vitest runs each test file in a forked process whose stderr is a socket to the Vitest process.
 * pxl keeps Dawn's native adapter diagnostics off a user's terminal or pipe by pointing fd 2 at a
 * file while Dawn enumerates adapters (src/backends/webgpu/dawnOutput.ts), which needs fd 2 to be
 * reopenable through /dev/fd/2: a socket is not. So the test process gets what a user's shell
 * gives: fd 2 becomes a pipe (a FIFO), and a `cat` holding the original socket copies everything
 * written to it, unfiltered. Nothing is dropped here; Dawn's lines are kept off the log by pxl's
 * own capture, exactly as for users.
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, fstatSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const done = Symbol.for('pxl.test.stderrPipe');
const proc = process as unknown as Record<symbol, boolean>;

if (proc[done] !== true && process.platform === 'linux' && fstatSync(2).isSocket()) {
  proc[done] = true;
  const fifo = join(tmpdir(), `pxl-test-stderr-${process.pid}`);
  execFileSync('mkfifo', [fifo]);
  // Read-write: the open does not wait for a reader, and it is the writer that lets the read end
  // below open at once. The name goes as soon as both ends are open, so nothing is left behind.
  const both = openSync(fifo, 'r+');
  const readEnd = openSync(fifo, 'r');
  rmSync(fifo);
  // cat gets the socket as its stdout and stops at end of input, once this process has exited.
  spawn('cat', [], { stdio: [readEnd, 2, 2] }).unref();
  closeSync(readEnd);
  closeSync(2);
  const fd = openSync(`/dev/fd/${both}`, 'r+');
  closeSync(both);
  if (fd !== 2) throw new Error(`test setup: the stderr pipe opened as fd ${fd}, not 2`);
}

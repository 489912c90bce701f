/**
 * A `pxl` command run as its own process (bin/pxl.js, which needs `npm run build`), with its
 * stderr collected and a way to wait for a line. Tests end such processes by pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/pxl.js', import.meta.url));

export interface PxlProcess {
  readonly child: ChildProcess;
  /** stderr so far. */
  stderr(): string;
  /** Resolves with the first stderr line matching `pattern` (already seen or to come); rejects if the process ends first. */
  line(pattern: RegExp): Promise<string>;
  /** Resolves when the process ends. */
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL by pid, if still running; resolves once it has ended. */
  kill(): Promise<void>;
}

export function startPxl(args: readonly string[]): PxlProcess {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let text = '';
  const waiters: Array<() => void> = [];
  child.stderr!.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    for (const w of waiters.splice(0)) w();
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      resolve({ code, signal });
      for (const w of waiters.splice(0)) w();
    });
  });
  const line = async (pattern: RegExp): Promise<string> => {
    for (;;) {
      const found = text.split('\n').find((l) => pattern.test(l));
      if (found !== undefined) return found;
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`pxl ${args.join(' ')} ended before printing ${String(pattern)}; stderr:\n${text}`);
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  const kill = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    process.kill(child.pid!, 'SIGKILL');
    await exit;
  };
  return { child, stderr: () => text, line, exit, kill };
}

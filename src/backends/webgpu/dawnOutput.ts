/**
 * Dawn (the `webgpu` package) writes diagnostics straight to file descriptor 2 from native code
 * while it looks for adapters: "Couldn't load Vulkan: libvulkan.so.1 ..." on machines without
 * Vulkan, "maxDynamicUniformBuffersPerPipelineLayout artificially reduced ..." for OpenGL, and it
 * offers no option to turn them off. They are not pxl's user's business unless they ask, so adapter
 * discovery runs with fd 2 pointed at a temporary file, and what Dawn said is kept for the error
 * message when no adapter is found. `PXL_DEBUG` (any non-empty value) leaves fd 2 alone, as does
 * `showDawnOutput()` (the commands' `--verbose`).
 *
 * Node cannot dup2, but closing fd 2 and opening a file gives that file the lowest free number, 2;
 * the original is kept open through `/dev/fd/2` and put back the same way. That reopening makes a
 * new open file description, which for a pipe or a terminal is the same stream, but for a regular
 * file (`2> log`) has an offset of its own: writes through it and the shell's later writes would
 * overwrite each other. So stderr that is a regular file is left alone. Only synchronous work
 * may run inside: Dawn enumerates adapters synchronously within `create()` and `requestAdapter()`,
 * and no other JavaScript (and so no other write to stderr) can run until the capture ends.
 */

type Fs = typeof import('node:fs');
type Env = Record<string, string | undefined>;

let fs: Fs | undefined;
let captureFile: string | undefined;
let shown = false;

/** Leaves Dawn's output on stderr from now on, as `PXL_DEBUG` does: for a user who asked to see it. */
export function showDawnOutput(): void {
  shown = true;
}

/** Loads what the capture needs; on platforms without `/dev/fd` (Windows) capture stays off. */
export async function prepareDawnCapture(env: Env | undefined): Promise<void> {
  if (env === undefined || (env.PXL_DEBUG ?? '') !== '' || fs !== undefined) return;
  try {
    const [nodeFs, os, path] = await Promise.all([import('node:fs'), import('node:os'), import('node:path')]);
    if (!nodeFs.existsSync('/dev/fd/2')) return;
    captureFile = path.join(os.tmpdir(), `pxl-dawn-${process.pid}.log`);
    fs = nodeFs;
  } catch {
    fs = undefined;
  }
}

/**
 * Runs `fn` (synchronous) with Dawn's native output captured, and returns its value and what Dawn
 * wrote ('' when nothing, or when capture is off). A capture that cannot be set up runs `fn` as is.
 */
export function withDawnOutput<T>(fn: () => T): { value: T; said: string } {
  if (shown || fs === undefined || captureFile === undefined) return { value: fn(), said: '' };
  const f = fs;
  let saved: number;
  try {
    if (f.fstatSync(2).isFile()) return { value: fn(), said: '' };
    saved = f.openSync('/dev/fd/2', 'a');
  } catch {
    return { value: fn(), said: '' };
  }
  let redirected = false;
  try {
    f.closeSync(2);
    const fd = f.openSync(captureFile, 'w');
    redirected = fd === 2;
    if (!redirected) f.closeSync(fd);
  } catch {
    redirected = false;
  }
  try {
    return { value: fn(), said: redirected ? read(f, captureFile) : '' };
  } finally {
    restore(f, saved, redirected);
  }
}

function read(f: Fs, file: string): string {
  try {
    return f.readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}

/** Puts the original stderr back at fd 2 and removes the capture file. */
function restore(f: Fs, saved: number, redirected: boolean): void {
  try {
    if (redirected) f.closeSync(2);
    // fd 2 is free now (closed above, or never reopened), so the copy lands there.
    const back = f.openSync(`/dev/fd/${saved}`, 'a');
    if (back !== 2) f.closeSync(back);
  } finally {
    f.closeSync(saved);
    try {
      f.unlinkSync(captureFile!);
    } catch {
      // Already gone: nothing to clean.
    }
  }
}

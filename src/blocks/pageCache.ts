/**
 * Dropping a file's written pages from the page cache (`posix_fadvise(POSIX_FADV_DONTNEED)`), for
 * the file writers (fileWriter.ts): a result of gigabytes written through the page cache otherwise keeps
 * every page it touched, so each new write lands in memory the kernel has not used for a while.
 * Where that memory is expensive to touch again (a virtual machine whose host takes back free
 * memory: the development machine, where a fresh page costs about 1.5 ms per MB of system time
 * against 0.4 ms per MB for a page just freed), writing 4 GB took 6.3 s of system time keeping its
 * pages and 1.3 s dropping them every 256 MB; and a result larger than memory would push out
 * everything else cached.
 *
 * Node's `fs` has no `posix_fadvise`; its WASI implementation (uvwasi) has, as `fd_advise`. A WASI
 * instance over a tiny module that only exports a memory opens the file under a preopened
 * directory and advises on it. The advice also starts writeback of the range's dirty pages without
 * waiting for it (what `sync_file_range` would do), so the pages written since the last call are
 * dropped by the next one.
 *
 * Drop only bytes that no later write touches: a page dropped and then written in part is read
 * back from the disk first. Dropping the whole file after every 64 MB written, at N = 10,000 with
 * tiles still to come beside the dropped pages, tripled the writer thread's system time (0.7 to
 * 2.6 s); the writer drops only the start of the file that is complete (WriteTiles.completeBefore).
 *
 * Node marks WASI experimental and warns once per thread when it is loaded; that warning is
 * swallowed here (only `path_open`, `fd_advise` and `fd_close` are used, and any failure only
 * means that pages stay cached). Seen working: the 4 GB above kept the machine's `Cached` flat.
 * Only for Node threads; nothing here runs in a browser.
 */
import { basename, dirname } from 'node:path';

/**
 * Drops the clean pages wholly inside the `length` bytes from `offset` (the pages it shares with
 * bytes outside stay) and starts writeback of the dirty ones; false when the advice could not be given.
 */
export type PageCacheRelease = (offset: number, length: number) => boolean;

/** A module with one exported memory of one page: `(module (memory (export "memory") 1))`. */
const MEMORY_ONLY = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x05, 0x03, 0x01, 0x00, 0x01, 0x07, 0x0a, 0x01, 0x06, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 0x02, 0x00]);

/** WASI preview1 values: the first preopened directory's descriptor, the rights asked for, the advice. */
const PREOPEN_FD = 3;
const RIGHT_FD_ADVISE = 0x80n;
const ADVICE_DONTNEED = 4;
/** Where the file name and the opened descriptor go in the instance's memory. */
const FD_AT = 0;
const NAME_AT = 16;

/** The slice of the global WebAssembly API used here (the project's lib settings carry no wasm types). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { readonly exports: { readonly memory: { readonly buffer: ArrayBuffer } } };
}

interface WasiPreview1 {
  path_open(fd: number, dirflags: number, path: number, pathLength: number, oflags: number, rights: bigint, inheriting: bigint, fdflags: number, opened: number): number;
  fd_advise(fd: number, offset: bigint, length: bigint, advice: number): number;
  fd_close(fd: number): number;
}

async function loadWasi(): Promise<typeof import('node:wasi') | undefined> {
  const emit = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (/\bWASI\b/.test(text)) return;
    (emit as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return await import('node:wasi');
  } catch {
    return undefined;
  } finally {
    process.emitWarning = emit;
  }
}

/**
 * A function that drops `path`'s cached pages (each call opens the file anew and closes it, so no
 * descriptor outlives a call), or undefined where this runtime cannot give the advice.
 *
 * @example
 * const release = await pageCacheRelease('/data/.d.npy.123.ab.tmp');
 * release?.(0, 1 << 30); // the first GiB, written for good
 */
export async function pageCacheRelease(path: string): Promise<PageCacheRelease | undefined> {
  const wasiModule = await loadWasi();
  if (wasiModule === undefined) return undefined;
  try {
    const wasi = new wasiModule.WASI({ version: 'preview1', preopens: { '/d': dirname(path) }, returnOnExit: true });
    const wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;
    if (wasm === undefined) return undefined;
    const instance = new wasm.Instance(new wasm.Module(MEMORY_ONLY), {});
    wasi.initialize(instance);
    const memory = instance.exports.memory;
    const name = new TextEncoder().encode(basename(path));
    if (NAME_AT + name.length > memory.buffer.byteLength) return undefined;
    new Uint8Array(memory.buffer).set(name, NAME_AT);
    const calls = wasi.wasiImport as unknown as WasiPreview1;
    // Never throws: pages left cached cost time, never correctness.
    return (offset, length) => {
      try {
        if (calls.path_open(PREOPEN_FD, 0, NAME_AT, name.length, 0, RIGHT_FD_ADVISE, 0n, 0, FD_AT) !== 0) return false;
        const fd = new DataView(memory.buffer).getUint32(FD_AT, true);
        const advised = calls.fd_advise(fd, BigInt(offset), BigInt(length), ADVICE_DONTNEED) === 0;
        calls.fd_close(fd);
        return advised;
      } catch {
        return false;
      }
    };
  } catch {
    return undefined;
  }
}

/**
 * `pxl web`'s server, in-process on a folder of stand-in files (so it needs no build): the
 * isolation headers and content types, what it refuses to serve, a taken port, a missing build,
 * and stopping on the command's signal. test/webPage.test.ts runs the real command on the real
 * page in Chromium.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../src/cli/main.js';
import { webCommand, type WebOptions } from '../src/cli/webCommand.js';
import { StateError } from '../src/core/errors.js';
import { UsageError } from '../src/cli/terminal.js';

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'pxl-web-'));
  await mkdir(join(root, 'web'));
  await mkdir(join(root, 'browser'));
  await writeFile(join(root, 'web', 'index.html'), '<!doctype html><title>t</title>');
  await writeFile(join(root, 'web', 'app.js'), 'export {};');
  await writeFile(join(root, 'web', 'styles.css'), 'body {}');
  await writeFile(join(root, 'browser', 'pxl.js'), 'export const x = 1;');
  await writeFile(join(root, 'browser', 'kernels.wasm'), new Uint8Array([0, 97, 115, 109]));
  await writeFile(join(root, 'secret.txt'), 'outside the mounts');
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Runs webCommand until the returned stop() is called; resolves once it listens. */
async function serve(options: Partial<WebOptions> = {}): Promise<{ url: string; log: () => string; stop: () => Promise<void> }> {
  const controller = new AbortController();
  let log = '';
  let listening: (url: string) => void = () => undefined;
  const url = new Promise<string>((resolve) => (listening = resolve));
  const done = webCommand(
    { io: { stdout: { write: () => true }, stderr: { write: (text) => { log += String(text); const m = /(http:\/\/\S+\/)/.exec(log); if (m) listening(m[1]!); return true; } } }, signal: controller.signal },
    { port: 0, host: '127.0.0.1', root, ...options },
  );
  const first = await Promise.race([url, done.then(() => undefined)]);
  if (first === undefined) throw new Error(`webCommand ended before listening: ${log}`);
  return { url: first, log: () => log, stop: async () => { controller.abort(); await done; } };
}

describe('pxl web server', () => {
  it('serves the page at / and the bundle at /browser/ with both isolation headers and content types', async () => {
    const server = await serve();
    try {
      const cases: Array<[string, string]> = [
        ['', 'text/html; charset=utf-8'],
        ['index.html', 'text/html; charset=utf-8'],
        ['app.js', 'text/javascript; charset=utf-8'],
        ['styles.css', 'text/css; charset=utf-8'],
        ['browser/pxl.js', 'text/javascript; charset=utf-8'],
        ['browser/kernels.wasm', 'application/wasm'],
      ];
      for (const [path, type] of cases) {
        const res = await fetch(server.url + path);
        expect(res.status, path).toBe(200);
        expect(res.headers.get('cross-origin-opener-policy'), path).toBe('same-origin');
        expect(res.headers.get('cross-origin-embedder-policy'), path).toBe('require-corp');
        expect(res.headers.get('content-type'), path).toBe(type);
      }
      expect(await (await fetch(`${server.url}browser/pxl.js`)).text()).toBe('export const x = 1;');
      const head = await fetch(server.url, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-length')).toBe(String('<!doctype html><title>t</title>'.length));
    } finally {
      await server.stop();
    }
  });

  it('answers 404 for missing files and paths that climb out of the mounts, and 405 for other methods', async () => {
    const server = await serve();
    try {
      for (const path of ['missing.js', 'browser/', '..%2Fsecret.txt', 'browser/..%2F..%2Fsecret.txt', '%E0%A4%A']) {
        const res = await fetch(server.url + path);
        expect(res.status, path).toBe(404);
        expect(await res.text()).not.toContain('outside the mounts');
      }
      const post = await fetch(server.url, { method: 'POST', body: 'x' });
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toBe('GET, HEAD');
    } finally {
      await server.stop();
    }
  });

  it('prints the URL, and on its signal closes open connections and resolves (exit 0 from the CLI)', async () => {
    const server = await serve();
    // A keep-alive connection left open, as a browser leaves one: stopping must not wait for it.
    await (await fetch(server.url)).text();
    await server.stop();
    expect(server.log()).toMatch(/^pxl web: serving the page at http:\/\/127\.0\.0\.1:\d+\/ \(cross-origin isolated; Ctrl-C stops it\)\npxl web: stopped\n$/);
    await expect(fetch(server.url)).rejects.toThrow();
  });

  // http://0.0.0.0/ is no secure context (Chromium does not even open it), so it is not the URL to print.
  it('on --host 0.0.0.0 prints the loopback URL, isolated, and says other machines get one thread', async () => {
    const server = await serve({ host: '0.0.0.0' });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      expect((await fetch(server.url)).status).toBe(200);
      expect(server.log()).toBe(`pxl web: serving the page at ${server.url} (cross-origin isolated; Ctrl-C stops it); other machines open it at this machine's address, where over plain http it runs on one CPU thread\n`);
    } finally {
      await server.stop();
    }
  });

  it('refuses a taken port, saying which and what to pass instead', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as AddressInfo;
    try {
      const attempt = webCommand({ io: { stdout: { write: () => true }, stderr: { write: () => true } }, signal: new AbortController().signal }, { port, host: '127.0.0.1', root });
      await expect(attempt).rejects.toThrow(UsageError);
      await expect(attempt).rejects.toThrow(`--port ${port}: 127.0.0.1:${port} is already in use by another program; choose another port with --port, or --port 0 for a free one`);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  it('refuses to start without the built page, naming the missing file and npm run build', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'pxl-web-empty-'));
    try {
      const attempt = webCommand({ io: { stdout: { write: () => true }, stderr: { write: () => true } }, signal: new AbortController().signal }, { port: 0, host: '127.0.0.1', root: empty });
      await expect(attempt).rejects.toThrow(StateError);
      await expect(attempt).rejects.toThrow(`the page is not built: ${join(empty, 'web', 'index.html')} is missing; run \`npm run build\` (it builds dist/web and dist/browser), then pxl web again`);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it('refuses a bad --port or --host value as a usage error (exit 2)', async () => {
    let err = '';
    const io = { stdout: { write: () => true }, stderr: { write: (t: string | Uint8Array) => { err += String(t); return true; } }, interceptSigint: false };
    expect(await run(['web', '--port', '70000'], io)).toBe(2);
    expect(err).toContain("option '--port <port>' argument '70000' is invalid. expected a port number from 0 to 65535 (0 picks a free one).");
    err = '';
    expect(await run(['web', '--port', 'abc'], io)).toBe(2);
    expect(err).toContain('expected a port number from 0 to 65535');
  });

  it('refuses a host that is not an address of this machine', async () => {
    const attempt = webCommand({ io: { stdout: { write: () => true }, stderr: { write: () => true } }, signal: new AbortController().signal }, { port: 0, host: '192.0.2.1', root });
    await expect(attempt).rejects.toThrow('--host 192.0.2.1: not an address of this machine; use 127.0.0.1 (the default), localhost, or 0.0.0.0 for every interface');
  });

  it('has help text naming its options and defaults', async () => {
    let out = '';
    const io = { stdout: { write: (t: string | Uint8Array) => { out += String(t); return true; } }, stderr: { write: () => true }, interceptSigint: false };
    expect(await run(['web', '--help'], io)).toBe(0);
    expect(out).toContain('Usage: pxl web [options]');
    expect(out).toMatch(/--port <port>\s+TCP port to listen on; 0 picks a free one \(default: 8080\)/);
    expect(out).toContain('--host <host>');
    expect(out).toContain('(default: "127.0.0.1")');
  });
});

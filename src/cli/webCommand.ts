/**
 * `pxl web`: serves the page (dist/web) and the browser bundle it runs on (dist/browser, at
 * /browser/) over HTTP, with the two headers that make the page cross-origin isolated, which
 * SharedArrayBuffer (and so every core) needs in a browser:
 *   Cross-Origin-Opener-Policy: same-origin
 *   Cross-Origin-Embedder-Policy: require-corp
 * It runs until the command's signal (Ctrl-C, SIGTERM) aborts, which is a normal end (exit 0).
 */
import { stat } from 'node:fs/promises';
import { createReadStream, existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StateError } from '../core/errors.js';
import type { CommandEnv } from './commandOptions.js';
import { UsageError } from './terminal.js';

/** Options of `pxl web`. */
export interface WebOptions {
  port: number;
  host: string;
  /** The folder holding web/ and browser/; default this package's dist/ (no command-line flag). */
  root?: string;
}

/** The port `pxl web` listens on without --port. */
export const DEFAULT_WEB_PORT = 8080;

/** dist/, whether this module runs from dist/cli/ (built) or src/cli/ (tests through tsx). */
const DIST = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../../dist/' : '../', import.meta.url));

/** URL prefix -> folder, longest prefix first: the page at /, the bundle at /browser/. */
type Mounts = readonly (readonly [string, string])[];

function mountsOf(root: string): Mounts {
  return [
    ['/browser/', join(root, 'browser')],
    ['/', join(root, 'web')],
  ];
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
};

/** Headers on every response: isolation, and no guessing of content types. */
const BASE_HEADERS: Readonly<Record<string, string>> = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'X-Content-Type-Options': 'nosniff',
  // The files change with each build: the browser revalidates rather than keeping a stale bundle.
  'Cache-Control': 'no-cache',
};

/** The file a URL path names, or undefined when it is outside every mount. */
function fileForPath(mounts: Mounts, pathname: string): string | undefined {
  let path: string;
  try {
    path = decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
  if (path.includes('\0')) return undefined;
  for (const [prefix, dir] of mounts) {
    if (!path.startsWith(prefix)) continue;
    const rest = path.slice(prefix.length);
    const file = normalize(join(dir, rest === '' || rest.endsWith('/') ? `${rest}index.html` : rest));
    // A path with .. segments that climbs out of the folder is refused, not served.
    return file.startsWith(dir + sep) ? file : undefined;
  }
  return undefined;
}

async function respond(mounts: Mounts, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { ...BASE_HEADERS, Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('only GET and HEAD\n');
    return;
  }
  const file = fileForPath(mounts, new URL(req.url ?? '/', 'http://host').pathname);
  const info = file === undefined ? undefined : await stat(file).catch(() => undefined);
  if (file === undefined || info === undefined || !info.isFile()) {
    res.writeHead(404, { ...BASE_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('not found\n');
    return;
  }
  res.writeHead(200, { ...BASE_HEADERS, 'Content-Type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream', 'Content-Length': String(info.size) });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  createReadStream(file).on('error', () => res.destroy()).pipe(res);
}

/** Refuses to start without the built page and bundle: the server would only answer 404s. */
function checkBuilt(root: string): void {
  for (const needed of [join(root, 'web', 'index.html'), join(root, 'web', 'app.js'), join(root, 'browser', 'pxl.js')]) {
    if (!existsSync(needed)) throw new StateError(`the page is not built: ${needed} is missing; run \`npm run build\` (it builds dist/web and dist/browser), then pxl web again`);
  }
}

/** Listens on host:port, turning the usual failures into messages that say what to change. */
async function listen(server: Server, options: WebOptions): Promise<AddressInfo> {
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      const where = `${options.host}:${options.port}`;
      if (error.code === 'EADDRINUSE') reject(new UsageError(`--port ${options.port}: ${where} is already in use by another program; choose another port with --port, or --port 0 for a free one`));
      else if (error.code === 'EACCES') reject(new UsageError(`--port ${options.port}: not allowed to listen on ${where} (ports below 1024 need privileges); choose a port >= 1024, or --port 0 for a free one`));
      else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') reject(new UsageError(`--host ${options.host}: not an address of this machine; use 127.0.0.1 (the default), localhost, or 0.0.0.0 for every interface`));
      else reject(error);
    };
    server.once('error', onError);
    server.listen(options.port, options.host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  return server.address() as AddressInfo;
}

/**
 * The address to open, and what a browser gets there. A wildcard address is no URL a browser opens
 * as a secure context (Chromium does not open it at all), so it prints this machine's loopback; a
 * page from any other address over plain http is not a secure context, so not isolated.
 */
function announce(address: AddressInfo): string {
  const wildcard = address.address === '0.0.0.0' || address.address === '::';
  const ip = wildcard ? (address.family === 'IPv6' ? '::1' : '127.0.0.1') : address.address;
  const url = `http://${address.family === 'IPv6' ? `[${ip}]` : ip}:${address.port}/`;
  if (!wildcard && !isLoopback(ip)) return `pxl web: serving the page at ${url} (over plain http from this address a browser does not isolate it: it runs on one CPU thread; Ctrl-C stops it)\n`;
  const others = wildcard ? '; other machines open it at this machine\'s address, where over plain http it runs on one CPU thread' : '';
  return `pxl web: serving the page at ${url} (cross-origin isolated; Ctrl-C stops it)${others}\n`;
}

function isLoopback(ip: string): boolean {
  return ip === '::1' || ip.startsWith('127.') || ip.startsWith('::ffff:127.');
}

/** Serves until `env.signal` aborts, then closes every connection and resolves. */
export async function webCommand(env: CommandEnv, options: WebOptions): Promise<void> {
  const root = options.root ?? DIST;
  checkBuilt(root);
  if (env.signal.aborted) return;
  const mounts = mountsOf(root);
  const server = createServer((req, res) => {
    respond(mounts, req, res).catch(() => res.destroy());
  });
  const address = await listen(server, options);
  env.io.stderr.write(announce(address));
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      server.close(() => resolve());
      // Browsers keep idle connections open; without this, close() would wait for them.
      server.closeAllConnections();
    };
    if (env.signal.aborted) stop();
    else env.signal.addEventListener('abort', stop, { once: true });
  });
  env.io.stderr.write('pxl web: stopped\n');
}

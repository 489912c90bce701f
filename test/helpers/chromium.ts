/**
 * Headless Chromium for the browser tests: Debian's `chromium` package driven by playwright-core,
 * and a static file server on a free loopback port, with or without the cross-origin isolation
 * headers that SharedArrayBuffer needs.
 */
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

/** Where Debian's package puts the browser; `PXL_CHROMIUM` overrides it. */
export const CHROMIUM_PATH = process.env.PXL_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Why the browser tests cannot run here, or undefined when they can. Under CI a missing browser
 * is a failure, not a skip: `.ci/run` installs it.
 */
export function chromiumMissing(): string | undefined {
  if (existsSync(CHROMIUM_PATH)) return undefined;
  return `no Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium, or set PXL_CHROMIUM)`;
}

/**
 * Starts headless Chromium. `webgpu` turns on its (software, here) WebGPU adapter. The flags keep
 * it off the network: this machine refuses outside connections, and Chromium's background
 * services would otherwise try many of them at every start.
 */
export async function launchChromium(options: { webgpu?: boolean } = {}): Promise<Browser> {
  const args = [
    '--no-sandbox',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-dev-shm-usage',
  ];
  if (options.webgpu) args.push('--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-angle=swiftshader', '--use-webgpu-adapter=swiftshader');
  else args.push('--disable-gpu');
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args, timeout: 30_000 });
}

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.npy': 'application/octet-stream',
  '.npz': 'application/octet-stream',
};

export interface StaticServer {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves files on 127.0.0.1 at a free port. `mounts` maps a URL prefix (`/`, `/pxl/`) to a
 * folder; `isolated` adds `Cross-Origin-Opener-Policy: same-origin` and
 * `Cross-Origin-Embedder-Policy: require-corp`, so pages get `crossOriginIsolated` and
 * SharedArrayBuffer. `pages` serves in-memory files by exact path (test pages).
 */
export async function serveStatic(options: {
  mounts?: Readonly<Record<string, string>>;
  pages?: Readonly<Record<string, string>>;
  isolated: boolean;
}): Promise<StaticServer> {
  const mounts = Object.entries(options.mounts ?? {}).sort((a, b) => b[0].length - a[0].length);
  const server: Server = createServer((req, res) => {
    void (async () => {
      const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
      const headers: Record<string, string> = { 'Cache-Control': 'no-store' };
      if (options.isolated) {
        headers['Cross-Origin-Opener-Policy'] = 'same-origin';
        headers['Cross-Origin-Embedder-Policy'] = 'require-corp';
      }
      const page = options.pages?.[path];
      if (page !== undefined) {
        res.writeHead(200, { ...headers, 'Content-Type': TYPES[extname(path)] ?? 'text/html; charset=utf-8' });
        res.end(page);
        return;
      }
      for (const [prefix, dir] of mounts) {
        if (!path.startsWith(prefix)) continue;
        const file = normalize(join(dir, path.slice(prefix.length) || 'index.html'));
        if (!file.startsWith(normalize(dir) + sep) && file !== normalize(dir)) break;
        try {
          if (!(await stat(file)).isFile()) break;
          const body = await readFile(file);
          res.writeHead(200, { ...headers, 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' });
          res.end(body);
          return;
        } catch {
          break;
        }
      }
      res.writeHead(404, headers);
      res.end('not found');
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

import { registerTypeScript } from '../../platform/thread.js';

/**
 * The webgpu backend's import of a kernel module on the host, in Node: a TypeScript module loads
 * through tsx when plain Node refuses its extension. The browser bundle takes
 * moduleImport.browser.ts, a plain import(): a page loads what the server sends.
 */

/**
 * The namespace of the module at `url`.
 * @throws (rejects) what import() throws, for a TypeScript module after tsx is registered.
 */
export async function importModule(url: string): Promise<Record<string, unknown>> {
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    if (code !== 'ERR_UNKNOWN_FILE_EXTENSION' || !/\.[mc]?ts$/.test(new URL(url).pathname)) throw err;
  }
  await registerTypeScript();
  // Node remembers the failed import of this URL, so import it again under a query string; it never
  // evaluated, so no other instance of the module exists.
  const retry = new URL(url);
  retry.searchParams.set('pxl-ts', '1');
  return (await import(retry.href)) as Record<string, unknown>;
}

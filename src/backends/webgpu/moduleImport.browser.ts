/**
 * The webgpu backend's import of a kernel module on the host, in a browser: a plain import(), as a
 * page has no tsx and loads whatever the server sends. Same exports as moduleImport.ts, which Node
 * uses.
 */

/**
 * The namespace of the module at `url`.
 * @throws (rejects) what import() throws.
 */
export async function importModule(url: string): Promise<Record<string, unknown>> {
  return (await import(/* @vite-ignore */ url)) as Record<string, unknown>;
}

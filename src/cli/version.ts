/** pxl's version, as package.json states it. */
import { readFileSync } from 'node:fs';

/** The `version` field of pxl's package.json, or 'unknown'. */
export function packageVersion(): string {
  // ../../package.json from both src/cli/version.ts and dist/cli/version.js.
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}

/**
 * Files by path, in Node: what pxl reads (PCF files) and writes (traces) through the file system.
 * files.browser.ts has the same exports and refuses, since a page has no file paths.
 */
export { open, stat, writeFile } from 'node:fs/promises';

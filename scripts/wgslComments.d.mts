/** Types of wgslComments.mjs, for the tests that import it. */
import type { Plugin } from 'esbuild';

/**
 * `source` with the template literals marked `/* wgsl *\/` stripped of comment lines (emptied) and
 * indentation. @throws Error for a marked template literal that never ends.
 */
export function stripWgslComments(source: string): string;

/** The esbuild plugin that loads src/ files through {@link stripWgslComments}. */
export const wgslComments: Plugin;

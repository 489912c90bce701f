/**
 * What a page must serve when a file that pxl loads by URL relative to itself is missing: the core
 * worker, the block kernels and the chunks they import. A bundler that takes pxl in through the
 * "browser" export condition copies pxl's code into its own output but not these files, which pxl
 * then looks for beside that output.
 */
export const BUNDLE_FILES_ADVICE: string | undefined =
  "serve all .js files of pxl's dist/browser/ beside the script holding pxl (pxl.js, or your bundle)";

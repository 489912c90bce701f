/**
 * Node loads pxl's own kernel modules from the installed package, so a failure to load one has no
 * serving advice to add; the browser twin has it.
 */
export const BUNDLE_FILES_ADVICE: string | undefined = undefined;

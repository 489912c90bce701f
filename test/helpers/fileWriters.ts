/**
 * The file writers, for the tests that hold for each: the main thread's (small results), the
 * writer thread writing tiles as they complete (large ones) and the writer thread in file order
 * (those between, whose held blocks fit the staging budget). `startWriter` starts one directly;
 * `withFileWriter` makes every NpyFileSink (and so pdist's `out`) of a describe block use one,
 * through `PXL_FILE_WRITER`.
 */
import { afterAll, beforeAll } from 'vitest';
import type { FileWriter, FileWriterOptions } from '../../src/blocks/fileWriter.js';
import { MainThreadFileWriter } from '../../src/blocks/mainThreadFileWriter.js';
import { ThreadFileWriter } from '../../src/blocks/threadFileWriter.js';

/** The file writers, by their `PXL_FILE_WRITER` names. */
export const FILE_WRITERS = ['main', 'thread', 'file-order'] as const;
export type FileWriterKind = (typeof FILE_WRITERS)[number];

/** Starts the writer of `kind`. */
export function startWriter(kind: FileWriterKind, options: FileWriterOptions): FileWriter {
  if (kind === 'main') return new MainThreadFileWriter(options);
  return ThreadFileWriter.start(kind === 'file-order' ? { ...options, inFileOrder: options.inFileOrder ?? {} } : options);
}

/** Makes the sinks opened in the calling describe block write with `kind`, whatever the result's size. */
export function withFileWriter(kind: FileWriterKind): void {
  let before: string | undefined;
  beforeAll(() => {
    before = process.env.PXL_FILE_WRITER;
    process.env.PXL_FILE_WRITER = kind;
  });
  afterAll(() => {
    if (before === undefined) delete process.env.PXL_FILE_WRITER;
    else process.env.PXL_FILE_WRITER = before;
  });
}

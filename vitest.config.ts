import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Gives each test process a pipe for stderr, as a shell does; see the file.
    setupFiles: ['test/setup/stderrPipe.ts'],
    // Tests spawn their own worker threads (the MU cores); running many files at once on a
    // 2-core machine only adds contention, so files run in a small fork pool.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    // The JSON report lets .ci/run print a plain "N passed, N failed" line.
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-results.json' },
    hookTimeout: 30_000,
  },
});

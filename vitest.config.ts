import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Test files share one fresh database per run; each test creates its own merchants, so files run in parallel.
    maxWorkers: 2,
    reporters: ['default'],
  },
});

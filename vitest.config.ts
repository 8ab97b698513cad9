// Test runner configuration: unit tests for pure modules and integration tests against a real Postgres.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Each integration test file creates and drops its own database, so files can run in parallel.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});

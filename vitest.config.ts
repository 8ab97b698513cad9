// Test runner configuration: unit tests for pure modules and integration tests against a real Postgres.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // `svc-settlement/sdk` resolves to the SDK's sources here, not to the built dist/ a package user gets (package.json
  // `exports`; docs/sdk.md#installing-the-package). The rest is Vite's default list, which this setting replaces.
  ssr: { resolve: { conditions: ['svc-settlement-source', 'module', 'node', 'development|production'] } },
  test: {
    include: ['test/**/*.test.ts'],
    // Each integration test file creates and drops its own database, so files can run in parallel.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});

// Shared vitest settings: integration tests talk to real NATS, PostgreSQL, git and Kubernetes,
// so they get generous timeouts; timing goals live in bench/, never in tests.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'e2e/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    passWithNoTests: true,
    reporters: ['default', 'json'],
    // Per-package results; scripts/test-summary.mjs adds them up into one closing line.
    outputFile: { json: '.vitest/results.json' },
  },
});

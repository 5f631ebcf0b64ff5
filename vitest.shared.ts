// Shared vitest settings: integration tests talk to real NATS, PostgreSQL, git and Kubernetes,
// so they get generous timeouts; timing goals live in bench/, never in tests.
//
// Coverage (v8) is measured when vitest runs with --coverage, as each package's `test` script does
// (so `npm test` reports it): a text summary in the output and .vitest/coverage/coverage-summary.json.
// The package's coverage-floor.json holds its floor per metric; a run below it fails. Floors only
// rise: `npm run coverage:raise` after a green `npm test` lifts each floor to the coverage measured
// (less a point of slack for the integration tests' jitter) and never lowers one (docs/development.md).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

const floorFile = join(process.cwd(), 'coverage-floor.json');
const floor: Record<string, number> = existsSync(floorFile)
  ? JSON.parse(readFileSync(floorFile, 'utf8'))
  : {};

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'e2e/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: ['default', 'json'],
    // Per-package results; scripts/test-summary.mjs adds them up into one closing line.
    outputFile: { json: '.vitest/results.json' },
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      exclude: ['src/**/*.test.ts', 'src/**/test-support/**', 'src/gen/**'],
      reporter: ['text-summary', 'json-summary'],
      reportsDirectory: '.vitest/coverage',
      thresholds: floor,
    },
  },
});

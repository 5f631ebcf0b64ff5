#!/usr/bin/env node
// Adds up every package's vitest results into one closing line: "N passed, N failed, N skipped".
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const dirs = ['libs', 'services']
  .flatMap((d) => readdirSync(join(root, d)).map((p) => join(d, p)))
  .concat(['cli', 'test', 'bench']);
let passed = 0,
  failed = 0,
  skipped = 0;
for (const dir of dirs) {
  const file = join(root, dir, '.vitest', 'results.json');
  if (!existsSync(file)) continue;
  const r = JSON.parse(readFileSync(file, 'utf8'));
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  skipped += r.numPendingTests + r.numTodoTests;
  process.stdout.write(`${dir.padEnd(18)} ${r.numPassedTests} passed, ${r.numFailedTests} failed\n`);
}
process.stdout.write(`${passed} passed, ${failed} failed, ${skipped} skipped\n`);
if (failed > 0 || passed === 0) process.exitCode = 1;

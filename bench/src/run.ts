// `npm run bench`: runs every benchmark in this folder (each file but the harness), or those named:
// `npm run bench -- events-throughput`. A benchmark exports `main()` (or runs when imported).
import { readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const benches = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !['harness.ts', 'run.ts'].includes(f))
  .map((f) => f.replace(/(\.bench)?\.ts$/, ''))
  .filter((n) => wanted.length === 0 || wanted.includes(n));
for (const name of benches) {
  process.stdout.write(`\n== ${name} ==\n`);
  const file = readdirSync(here).find((f) => f === `${name}.bench.ts` || f === `${name}.ts`)!;
  const mod = (await import(`./${file}`)) as { main?: () => Promise<void> };
  await mod.main?.();
}

// `npm run bench`: runs every benchmark in this folder (`<name>.bench.ts`), or those named:
// `npm run bench -- events-throughput`. A benchmark exports `main()`.
import { readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const benches = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .map((f) => f.replace(/\.bench\.ts$/, ''))
  .filter((n) => wanted.length === 0 || wanted.includes(n));
for (const name of benches) {
  process.stdout.write(`\n== ${name} ==\n`);
  const mod = (await import(`./${name}.bench.ts`)) as { main: () => Promise<void> };
  await mod.main();
}

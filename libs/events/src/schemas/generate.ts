// Generates a JSON Schema file for the envelope and for every public event type, so other systems can
// validate what they publish. `--write` writes them; without it, prints the names of stale files and
// exits non-zero (the unit test does the same check).
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { envelopeSchema } from '../envelope/envelope.js';
import { allEventDefinitions } from '../catalog/index.js';

export const schemaDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'schemas');

export function renderSchemas(): Map<string, string> {
  const files = new Map<string, string>();
  const render = (id: string, schema: z.ZodType, description: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify(
      {
        $id: `https://capstan.dev/schemas/${id}.json`,
        description,
        ...z.toJSONSchema(schema, { io: 'input' }),
        ...extra,
      },
      null,
      2,
    ) + '\n';
  files.set(
    'envelope.json',
    render('envelope', envelopeSchema, 'CloudEvents 1.0 envelope with Capstan extensions'),
  );
  for (const d of allEventDefinitions) {
    if (!d.public) continue;
    const full = envelopeSchema.extend({ type: z.literal(d.type), data: d.data });
    files.set(
      `${d.type}.json`,
      render(d.type, full, d.description, {
        'x-capstan-subject': `<namespace>.${d.subject.replace('*', '<source>')}`,
      }),
    );
  }
  return files;
}

export function staleSchemaFiles(): string[] {
  const wanted = renderSchemas();
  const present = new Set(readdirSync(schemaDir).filter((f) => f.endsWith('.json')));
  const stale: string[] = [];
  for (const [name, content] of wanted) {
    if (!present.has(name) || readFileSync(join(schemaDir, name), 'utf8') !== content) stale.push(name);
    present.delete(name);
  }
  return [...stale, ...present];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--write')) {
    mkdirSync(schemaDir, { recursive: true });
    for (const f of readdirSync(schemaDir)) if (f.endsWith('.json')) rmSync(join(schemaDir, f));
    for (const [name, content] of renderSchemas()) writeFileSync(join(schemaDir, name), content);
    process.stdout.write(`wrote ${renderSchemas().size} schema files to ${schemaDir}\n`);
  } else {
    const stale = staleSchemaFiles();
    if (stale.length > 0) {
      process.stderr.write(
        `stale JSON Schemas: ${stale.join(', ')}; run npm run gen:schemas -w @capstan/events\n`,
      );
      process.exit(1);
    }
  }
}

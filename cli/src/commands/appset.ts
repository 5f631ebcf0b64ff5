// capstan appset: ApplicationSets (argocd appset). `generate --offline` renders a set locally with
// the same engine the appset service runs (@capstan/appset-engine: Argo's generators, Go
// text/template + sprig in-process), for sets whose generators need no server (list, and matrix or
// merge of lists). The server-side commands come with the api's ApplicationSet service.
import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { parseAllDocuments } from 'yaml';
import { AppSetEngine, AppSetError } from '@capstan/appset-engine';
import { formatIssue } from '@capstan/policy';
import { CliError } from '../errors.js';
import { printJsonOrYaml, type OutputFormat } from '../output/format.js';

/** Reads the one ApplicationSet of a YAML or JSON file. */
export function readApplicationSetFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${path}: ${(err as Error).message}`);
  }
  const docs = parseAllDocuments(text);
  const objects: unknown[] = [];
  for (const doc of Array.isArray(docs) ? docs : [docs]) {
    if (doc.errors.length > 0) throw new CliError(`${path}: ${doc.errors[0]!.message}`, 2);
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    if (value !== null && value !== undefined) objects.push(value);
  }
  if (objects.length !== 1)
    throw new CliError(`${path}: expected one ApplicationSet, found ${objects.length} documents`, 2);
  return objects[0];
}

/** Generates the Applications of a set locally; AppSetError becomes exit status 2 with each issue. */
export async function generateOffline(applicationSet: unknown): Promise<unknown[]> {
  const engine = await AppSetEngine.load();
  try {
    return (await engine.generate({ applicationSet })).applications;
  } catch (err) {
    if (err instanceof AppSetError) throw new CliError(err.issues.map(formatIssue).join('\n'), 2);
    throw err;
  } finally {
    await engine.close();
  }
}

export function appsetCommand(): Command {
  const appset = new Command('appset').description('manage ApplicationSets');
  appset
    .command('generate <file>')
    .description('print the Applications an ApplicationSet generates, without creating anything')
    .option('--offline', 'render locally, without a server (list, matrix and merge generators)')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['json', 'yaml']).default('json'))
    .action(async (file: string, opts: { offline?: boolean; output: OutputFormat }) => {
      if (!opts.offline)
        throw new CliError(
          'appset generate needs --offline for now: the api does not serve ApplicationSets yet',
          2,
        );
      const apps = await generateOffline(readApplicationSetFile(file));
      printJsonOrYaml(opts.output, apps);
    });
  return appset;
}

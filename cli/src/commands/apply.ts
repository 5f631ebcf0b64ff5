// capstan apply -f: Argo CD manifests from files, directories (their *.yaml, *.yml, *.json) or stdin.
import { Command } from 'commander';
import { apiv1 } from '@capstan/proto';
import { withConnection } from '../client/connection.js';
import { CliError } from '../errors.js';
import { manifestFiles, readManifestFile } from '../input/manifest-files.js';
import { outputOption, printList, type OutputFormat } from '../output/format.js';

export function readManifestSources(paths: string[], recursive: boolean): string {
  const docs = manifestFiles(paths, recursive).map(readManifestFile);
  if (docs.length === 0) throw new CliError('no manifests found');
  return docs.map((d) => d.replace(/\n?$/, '\n')).join('---\n');
}

export function applyCommand(): Command {
  return new Command('apply')
    .description(
      'apply Argo CD manifests (AppProject, Application, ApplicationSet, repository and cluster Secrets, ConfigMaps argocd-cm, argocd-rbac-cm, argocd-cmd-params-cm, argocd-notifications-cm, Secrets argocd-secret, argocd-notifications-secret); nothing is written when any is invalid',
    )
    .requiredOption(
      '-f, --filename <path>',
      'file, directory or - for stdin (repeatable)',
      (v: string, p: string[]) => [...p, v],
      [],
    )
    .option('-R, --recursive', 'read directories recursively')
    .option('--dry-run', 'validate and authorise without writing')
    .option('--strict <bool>', 'unknown fields are errors', 'true')
    .addOption(outputOption())
    .action(
      (
        o: {
          filename: string[];
          recursive?: boolean;
          dryRun?: boolean;
          strict: string;
          output: OutputFormat;
        },
        cmd: Command,
      ) =>
        withConnection(cmd, async (c) => {
          const manifests = readManifestSources(o.filename, !!o.recursive);
          const r = await c.call(c.apply.apply.bind(c.apply), {
            manifests,
            dryRun: !!o.dryRun,
            strict: o.strict !== 'false',
          });
          // Keys of Argo CD's settings that Capstan does not know or implement: never silent.
          for (const w of r.warnings) process.stderr.write(`warning: ${w}\n`);
          if (o.output === 'table') {
            for (const x of r.results)
              process.stdout.write(`${x.kind.toLowerCase()}/${x.name} ${x.action}\n`);
            return;
          }
          printList(
            o.output,
            r.results,
            [
              ['KIND', (x) => x.kind],
              ['NAME', (x) => x.name],
              ['ACTION', (x) => x.action],
            ],
            (x) => apiv1.ApplyResult.toJSON(x),
            (x) => `${x.kind.toLowerCase()}/${x.name}`,
          );
        }),
    );
}

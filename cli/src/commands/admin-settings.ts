// capstan admin settings [--show-source]: the settings in force (keys of the applied Argo CD objects,
// what each sets in which service, the api's own settings; secrets only as set/unset).
// capstan admin settings validate -f FILE: Argo CD's argocd-cm / argocd-rbac-cm / argocd-cmd-params-cm
// / argocd-secret files checked here, offline, with the rules the api and the services apply
// (@capstan/policy checkSettingsObject, as the api's apply): warnings for unknown and not implemented keys (refusals with
// --strict), errors naming the key for wrong values. Exit status 2 when anything is refused.
import { Command } from 'commander';
import { apiv1 } from '@capstan/proto';
import { argoObjectOf, checkSettingsObject, readYamlDocuments } from '@capstan/policy';
import { withConnection } from '../client/connection.js';
import { CliError } from '../errors.js';
import { manifestFiles, originOf, readManifestFile } from '../input/manifest-files.js';
import { outputOption, printList, type OutputFormat } from '../output/format.js';

export interface ValidationReport {
  warnings: string[];
  errors: string[];
  objects: string[];
}

/** Every Argo CD configuration object of the text, checked key by key. */
export function validateSettingsText(text: string, origin: string, strict: boolean): ValidationReport {
  const out: ValidationReport = { warnings: [], errors: [], objects: [] };
  for (const doc of readYamlDocuments(text, origin)) {
    if (doc.issues) {
      out.errors.push(...doc.issues.map((i) => `${origin}: document ${doc.index}: ${i.message}`));
      continue;
    }
    if (doc.value == null) continue;
    const got = argoObjectOf(doc.value);
    if (!got) {
      out.errors.push(`${origin}: document ${doc.index}: not a ConfigMap or Secret of Argo CD's settings`);
      continue;
    }
    if ('problem' in got) {
      out.errors.push(`${origin}: document ${doc.index}: ${got.problem}`);
      continue;
    }
    // The api's own check at apply (policy.csv parsed as the RBAC policy reads it included).
    const check = checkSettingsObject(got.object, got.data, { strict });
    out.objects.push(got.object);
    out.warnings.push(...check.warnings.map((w) => `${origin}: ${w}`));
    out.errors.push(...check.problems.map((p) => `${origin}: ${p.field}: ${p.description}`));
  }
  return out;
}

function validateCommand(): Command {
  return new Command('validate')
    .description(
      'check Argo CD settings files (argocd-cm, argocd-rbac-cm, argocd-cmd-params-cm, argocd-secret) offline: unknown or not implemented keys warn, wrong values fail',
    )
    .requiredOption(
      '-f, --filename <path>',
      'file, directory or - for stdin (repeatable)',
      (v: string, p: string[]) => [...p, v],
      [],
    )
    .option('--strict', 'unknown and not implemented keys fail too (as the settings.strict setting does)')
    .action((o: { filename: string[]; strict?: boolean }) => {
      const files = manifestFiles(o.filename);
      if (files.length === 0) throw new CliError('no files found');
      const all: ValidationReport = { warnings: [], errors: [], objects: [] };
      for (const f of files) {
        const r = validateSettingsText(readManifestFile(f), originOf(f), !!o.strict);
        all.warnings.push(...r.warnings);
        all.errors.push(...r.errors);
        all.objects.push(...r.objects);
      }
      for (const w of all.warnings) process.stderr.write(`warning: ${w}\n`);
      if (all.errors.length > 0) throw new CliError(all.errors.map((e) => `error: ${e}`).join('\n'), 2);
      process.stdout.write(`${all.objects.join(', ') || 'no settings objects'}: valid\n`);
    });
}

export function adminSettingsCommand(): Command {
  const settings = new Command('settings')
    .description('the settings in force and where they came from (secrets: set or unset only)')
    .option('--show-source', 'say in full where each value came from (file, variable, applied version)')
    .addOption(outputOption())
    .action((o: { showSource?: boolean; output: OutputFormat }, cmd: Command) =>
      withConnection(cmd, async (c) => {
        const r = await c.call(c.settings.get.bind(c.settings), { showSource: !!o.showSource });
        printList(
          o.output,
          r.settings,
          [
            ['SCOPE', (x) => x.scope],
            ['KEY', (x) => x.key],
            ['VALUE', (x) => (x.value.includes('\n') ? `${x.value.split('\n')[0]} …` : x.value)],
            ['SOURCE', (x) => x.source],
            ['EFFECT', (x) => x.effect],
          ],
          (x) => apiv1.SettingEntry.toJSON(x),
          (x) => `${x.scope}/${x.key}`,
        );
      }),
    );
  settings.addCommand(validateCommand());
  return settings;
}

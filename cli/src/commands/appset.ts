// capstan appset: ApplicationSets, with argocd appset's commands, flags and output (create, get, list,
// delete, generate), plus `apply` (create or update, reported as kubectl does) and the caller's RBAC
// verdict on each generated Application (Argo CD does not report one). Files are read and checked
// before the first call, so bad input never leaves half the sets created. `generate --offline`
// renders locally with the engine the appset service runs (@capstan/appset-engine: Argo's generators,
// Go text/template + sprig in-process), for sets whose generators need no server.
import { Command, Option } from 'commander';
import { AppSetEngine, AppSetError } from '@capstan/appset-engine';
import { formatIssue } from '@capstan/policy';
import { withConnection } from '../client/connection.js';
import { CliError } from '../errors.js';
import { askToProceed, mustAsk } from '../input/confirm.js';
import { outputOption, type OutputFormat } from '../output/format.js';
import { parseQualifiedName, readApplicationSets } from './appset-manifests.js';
import {
  printApplicationSet,
  printApplicationSets,
  printGenerated,
  printVerdicts,
  refused,
} from './appset-output.js';
import { writeApplicationSet } from './appset-write.js';

const collect = (v: string, prev: string[]) => [...prev, v];
const namespaceOption = (what: string) =>
  new Option('-N, --appset-namespace <ns>', `${what} (ignored when the name is namespace/name)`).default('');

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

interface CreateFlags {
  upsert?: boolean;
  dryRun?: boolean;
  output: OutputFormat;
}

function createCommand(): Command {
  return new Command('create')
    .description('create one or more ApplicationSets from files (every document of each, in order)')
    .argument('<files...>', 'YAML or JSON files, directories, or - for stdin')
    .option('--upsert', 'update an ApplicationSet of the same name even if its spec differs')
    .option('--dry-run', 'evaluate the ApplicationSet on the server without writing anything')
    .addOption(outputOption(['wide', 'json', 'yaml'], 'wide'))
    .action((files: string[], o: CreateFlags, cmd: Command) => {
      const docs = readApplicationSets(files);
      return withConnection(cmd, async (c) => {
        for (const [i, d] of docs.entries()) {
          const w = await writeApplicationSet(c, d, { upsert: !!o.upsert, dryRun: !!o.dryRun });
          // As argocd: the verdict on stderr, the set on stdout (yaml documents separated).
          process.stderr.write(
            `ApplicationSet '${w.applicationSet.metadata?.name}' ${w.action}${o.dryRun ? ' (dry-run)' : ''}\n`,
          );
          if (o.output === 'yaml' && i > 0) process.stdout.write('---\n');
          printApplicationSet(o.output, w.applicationSet);
        }
      });
    });
}

function applyCommand(): Command {
  return new Command('apply')
    .description('create or update ApplicationSets from files: created, configured or unchanged')
    .argument('<files...>', 'YAML or JSON files, directories, or - for stdin')
    .option('--dry-run', 'evaluate the ApplicationSets on the server without writing anything')
    .action((files: string[], o: { dryRun?: boolean }, cmd: Command) => {
      const docs = readApplicationSets(files);
      return withConnection(cmd, async (c) => {
        for (const d of docs) {
          const w = await writeApplicationSet(c, d, { upsert: true, dryRun: !!o.dryRun });
          const action = w.action === 'updated' ? 'configured' : w.action;
          process.stdout.write(
            `applicationset/${d.qualifiedName} ${action}${o.dryRun ? ' (dry run)' : ''}\n`,
          );
        }
      });
    });
}

function getCommand(): Command {
  return new Command('get')
    .description('show an ApplicationSet: its template summary and conditions')
    .argument('<name>', 'name, or namespace/name')
    .addOption(namespaceOption('namespace of the ApplicationSet'))
    .addOption(outputOption(['wide', 'json', 'yaml'], 'wide'))
    .action((arg: string, o: { appsetNamespace: string; output: OutputFormat }, cmd: Command) =>
      withConnection(cmd, async (c) => {
        const { name, namespace } = parseQualifiedName(arg, o.appsetNamespace);
        const s = await c.call(c.applicationSets.get.bind(c.applicationSets), {
          name,
          appsetNamespace: namespace,
        });
        printApplicationSet(o.output, s);
      }),
    );
}

interface ListFlags {
  project: string[];
  selector: string;
  appsetNamespace: string;
  output: OutputFormat;
}

function listCommand(): Command {
  return new Command('list')
    .description('list ApplicationSets')
    .option('-p, --project <name>', 'only sets with Applications in this project (repeatable)', collect, [])
    .option('-l, --selector <selector>', 'label selector', '')
    .addOption(new Option('-N, --appset-namespace <ns>', 'only sets in this namespace').default(''))
    .addOption(outputOption(['wide', 'table', 'name', 'json', 'yaml'], 'wide'))
    .action((o: ListFlags, cmd: Command) =>
      withConnection(cmd, async (c) => {
        const r = await c.call(c.applicationSets.list.bind(c.applicationSets), {
          projects: o.project,
          selector: o.selector,
          appsetNamespace: o.appsetNamespace,
        });
        printApplicationSets(o.output, r.items);
      }),
    );
}

function deleteCommand(): Command {
  return new Command('delete')
    .description('delete ApplicationSets and, unless preserved, their Applications')
    .argument('<names...>', 'name, or namespace/name')
    .addOption(namespaceOption('namespace of the ApplicationSets'))
    .option('-y, --yes', 'do not ask for confirmation (needed when stdin is not a terminal)')
    .action((names: string[], o: { appsetNamespace: string; yes?: boolean }, cmd: Command) => {
      const what = `delete ${names.map((n) => `'${n}'`).join(', ')} and ${names.length > 1 ? 'their' : 'its'} Applications`;
      let ask = mustAsk(what, !!o.yes, !!process.stdin.isTTY);
      return withConnection(cmd, async (c) => {
        for (const arg of names) {
          if (ask) {
            const several = names.length > 1;
            const answer = await askToProceed(
              `Are you sure you want to delete '${arg}' and all its Applications? ${several ? "[y/n/A] where 'A' is to delete all specified ApplicationSets and their Applications without prompting " : '[y/n] '}`,
              several,
            );
            if (answer === 'no') {
              process.stdout.write(`The command to delete '${arg}' was cancelled.\n`);
              continue;
            }
            if (answer === 'all') ask = false;
          }
          const { name, namespace } = parseQualifiedName(arg, o.appsetNamespace);
          const r = await c.call(c.applicationSets.delete.bind(c.applicationSets), {
            name,
            appsetNamespace: namespace,
          });
          process.stdout.write(`applicationset '${arg}' deleted\n`);
          if (r.applications.length > 0) printVerdicts('table', r.applications);
          const bad = refused(r.applications);
          if (bad.length > 0) throw new CliError(`${bad.length} of the set's Applications were refused`);
        }
      });
    });
}

function generateCommand(): Command {
  return new Command('generate')
    .description(
      'print the Applications an ApplicationSet generates and your RBAC verdict on each, without creating anything',
    )
    .argument('<file>', 'a YAML or JSON file holding one ApplicationSet, or - for stdin')
    .option('--offline', 'render locally, without a server (list, matrix and merge generators; no verdicts)')
    .addOption(
      new Option('-o, --output <format>', 'output format (default: wide; json with --offline)').choices([
        'wide',
        'table',
        'json',
        'yaml',
      ]),
    )
    .action(async (file: string, o: { offline?: boolean; output?: OutputFormat }, cmd: Command) => {
      const docs = readApplicationSets([file]);
      if (docs.length !== 1)
        throw new CliError(`${file}: expected one ApplicationSet, found ${docs.length} documents`, 2);
      const d = docs[0]!;
      if (o.offline) {
        printGenerated(o.output ?? 'json', await generateOffline(d.value));
        return;
      }
      await withConnection(cmd, async (c) => {
        const r = await c.call(c.applicationSets.generate.bind(c.applicationSets), {
          applicationset: d.applicationSet,
        });
        printGenerated(o.output ?? 'wide', r.applications, r.verdicts);
        const bad = refused(r.verdicts);
        if (bad.length > 0)
          throw new CliError(`${bad.length} of ${r.verdicts.length} Applications would be refused`);
      });
    });
}

export function appsetCommand(): Command {
  const appset = new Command('appset').description('manage ApplicationSets');
  appset.addCommand(createCommand());
  appset.addCommand(applyCommand());
  appset.addCommand(getCommand());
  appset.addCommand(listCommand());
  appset.addCommand(deleteCommand());
  appset.addCommand(generateCommand());
  return appset;
}

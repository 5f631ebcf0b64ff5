// capstan app: Applications, with argocd app's commands and flags. `app sync` follows the operation
// live (phase changes and each resource as the sync service reports it).
import { Command } from 'commander';
import { apiv1 } from '@capstan/proto';
import { withConnection, type Connection } from '../client/connection.js';
import { CliError } from '../errors.js';
import { syncWindowLine } from './proj-windows.js';
import { sourceRevisionFlags } from './app-sync-revisions.js';
import { selectedResources } from './app-sync-resources.js';
import { printApplication } from './app-status.js';
import { addHistoryCommand, addRollbackCommand } from './app-rollback.js';
import { readManifestObject } from '../input/manifest-files.js';
import { addDeleteCommand } from './app-delete.js';
import { addSetCommand } from './app-set.js';
import { addSourceFlags, applySourceFlags, sourceFlagsGiven, type SourceFlags } from './app-source-flags.js';
import { addDiffCommand } from './app-diff.js';
import { outputOption, printJsonOrYaml, printList, type OutputFormat } from '../output/format.js';

const TERMINAL = new Set(['Succeeded', 'Failed', 'Denied', 'Error']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function resourceLine(r: apiv1.ResourceResult): string {
  const id = `${r.group ? `${r.group}/` : ''}${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name}`;
  // A retried operation shows which attempt did what (an attempt that died left results behind).
  const attempt = r.attempt > 1 ? ` (attempt ${r.attempt})` : '';
  return `  ${r.verb.padEnd(7)} ${id.padEnd(48)} ${r.status.padEnd(12)} as ${r.identity}${attempt}${r.message ? `  ${r.message}` : ''}`;
}

/** Polls the operation, printing each phase change and each new resource result. */
export async function follow(
  c: Connection,
  name: string,
  appNamespace: string,
  id: string,
  timeoutMs: number,
  quiet: boolean,
): Promise<apiv1.SyncOperation> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  let phase = '';
  let seen = 0;
  let hinted = false;
  for (;;) {
    const op = await c.call(c.applications.getOperation.bind(c.applications), { name, appNamespace, id });
    if (!quiet && op.phase !== phase)
      process.stderr.write(
        `${new Date().toISOString()}  ${op.phase}${op.message ? `: ${op.message}` : ''}\n`,
      );
    phase = op.phase;
    if (!quiet) for (const r of op.resources.slice(seen)) process.stderr.write(`${resourceLine(r)}\n`);
    seen = op.resources.length;
    if (TERMINAL.has(op.phase)) return op;
    if (!quiet && !hinted && op.phase === 'Pending' && Date.now() - started > 15_000) {
      process.stderr.write(
        '  still pending after 15 s: is the sync service running and connected to the bus?\n',
      );
      hinted = true;
    }
    if (Date.now() > deadline)
      throw new CliError(`timed out waiting for operation ${id} (last phase ${op.phase})`);
    await sleep(500);
  }
}

function appFromFlags(name: string, o: AppFlags): apiv1.Application {
  if (!o.repo) throw new CliError('--repo is required (or -f)');
  if (!o.destServer && !o.destName) throw new CliError('--dest-server or --dest-name is required');
  return apiv1.Application.fromPartial({
    metadata: { name, namespace: o.appNamespace },
    spec: {
      project: o.project,
      source: {
        repoUrl: o.repo,
        // argocd: a chart source names the chart, its version is the revision, it has no path.
        ...(o.helmChart ? { chart: o.helmChart } : { path: o.path }),
        targetRevision: o.revision,
      },
      destination: { server: o.destServer, name: o.destName, namespace: o.destNamespace },
      syncPolicy:
        o.syncPolicy === 'automated'
          ? { automated: { prune: !!o.autoPrune, selfHeal: !!o.selfHeal } }
          : undefined,
      allowedParentProjects: o.allowedParentProject,
    },
  });
}

interface AppFlags extends SourceFlags {
  file?: string;
  repo?: string;
  path: string;
  helmChart?: string;
  revision: string;
  destServer: string;
  destName: string;
  destNamespace: string;
  project: string;
  appNamespace: string;
  syncPolicy?: string;
  autoPrune?: boolean;
  selfHeal?: boolean;
  allowedParentProject: string[];
  upsert?: boolean;
  output: OutputFormat;
}

/** `app sync` and `app diff`-style dry runs: request the sync, then follow it unless --async. */
const syncAction =
  (dryRunOnly: boolean) =>
  async (
    name: string,
    o: {
      appNamespace: string;
      revision: string;
      dryRun?: boolean;
      prune?: boolean;
      async?: boolean;
      timeout: string;
      output: OutputFormat;
      resource?: string[];
      revisions?: string[];
      sourcePositions?: string[];
    },
    cmd: Command,
  ) => {
    const perSource = sourceRevisionFlags(o.revisions ?? [], o.sourcePositions ?? []);
    return withConnection(cmd, async (c) => {
      const dryRun = dryRunOnly || !!o.dryRun;
      const patterns = o.resource ?? [];
      // As Argo CD's CLI: the patterns are matched against the Application's resources first.
      const resources =
        patterns.length === 0
          ? []
          : selectedResources(
              patterns,
              (
                await c.call(c.applications.get.bind(c.applications), {
                  name,
                  appNamespace: o.appNamespace,
                  project: '',
                })
              ).status?.resources ?? [],
            );
      const res = await c.call(c.applications.sync.bind(c.applications), {
        name,
        appNamespace: o.appNamespace,
        revision: o.revision,
        dryRun,
        prune: !!o.prune,
        resources,
        ...perSource,
      });
      if (o.async) {
        process.stdout.write(`${res.operationId}\n`);
        return;
      }
      const quiet = o.output === 'json' || o.output === 'yaml';
      const op = await follow(c, name, o.appNamespace, res.operationId, Number(o.timeout) * 1000, quiet);
      if (!printJsonOrYaml(o.output, apiv1.SyncOperation.toJSON(op))) {
        process.stdout.write(
          `Operation:   ${op.id}\nPhase:       ${op.phase}\nMessage:     ${op.message}\nRevision:    ${op.revision}\nSynced as:   ${op.identity || 'control-plane credentials'}${op.impersonated ? ' (impersonated)' : ''}\n`,
        );
        if (dryRunOnly) for (const r of op.resources) process.stdout.write(`${resourceLine(r)}\n`);
      }
      if (op.phase !== 'Succeeded') throw new CliError(`operation ${op.phase.toLowerCase()}: ${op.message}`);
    });
  };

export function appCommand(): Command {
  const app = new Command('app').description('manage Applications');
  app.addCommand(appCreateCommand());
  app.addCommand(appGetCommand());
  app.addCommand(appListCommand());

  addDeleteCommand(app);
  addSetCommand(app);

  app.addCommand(appSyncCommand());

  addDiffCommand(app);

  addHistoryCommand(app);
  addRollbackCommand(app, follow);
  return app;
}

function appCreateCommand(): Command {
  const cmd = new Command('create')
    .description('create an Application from flags or an Argo CD manifest (-f)')
    .argument('[name]')
    .option('-f, --file <path>', 'Application manifest (YAML or JSON; - for stdin)')
    .option('--repo <url>', 'repository URL')
    .option('--path <path>', 'path in the repository', '')
    .option('--helm-chart <chart>', 'Helm chart name (--repo is then a Helm repository or oci:// registry)')
    .option('--revision <rev>', 'target revision (the chart version with --helm-chart)', 'HEAD')
    .option('--dest-server <url>', 'destination cluster URL', '')
    .option('--dest-name <name>', 'destination cluster name', '')
    .option('--dest-namespace <ns>', 'destination namespace', '')
    .option('--project <name>', 'project', 'default')
    .option('-N, --app-namespace <ns>', 'namespace of the Application', 'argocd')
    .option('--sync-policy <policy>', 'manual or automated')
    .option('--auto-prune', 'with --sync-policy automated: prune')
    .option('--self-heal', 'with --sync-policy automated: self heal')
    .option(
      '--allowed-parent-project <name>',
      'parent projects the AppProjects it delivers may name (repeatable)',
      (v: string, p: string[]) => [...p, v],
      [],
    )
    .option('--upsert', 'update the Application if it exists')
    .addOption(outputOption());
  return addSourceFlags(cmd).action((name: string | undefined, o: AppFlags, cmd: Command) =>
    withConnection(cmd, async (c) => {
      let application: apiv1.Application;
      if (o.file) {
        application = apiv1.Application.fromJSON(readManifestObject(o.file));
        if (name && application.metadata) application.metadata.name = name;
      } else {
        if (!name) throw new CliError('an application name or -f is required');
        application = appFromFlags(name, o);
      }
      const spec = application.spec;
      // The flags edit one source; a multi-source manifest's sources are edited in the manifest.
      if (spec && spec.sources.length > 0) {
        if (sourceFlagsGiven(o))
          throw new CliError(
            'the source flags change spec.source, but this Application has spec.sources: set the options in the manifest',
          );
      } else if (spec?.source) spec.source = applySourceFlags(spec.source, o);
      const a = await c.call(c.applications.create.bind(c.applications), {
        application,
        upsert: !!o.upsert,
      });
      if (!printJsonOrYaml(o.output, apiv1.Application.toJSON(a)))
        process.stdout.write(`application '${a.metadata?.name}' created\n`);
    }),
  );
}

function appGetCommand(): Command {
  return new Command('get')
    .description('show an Application: its live sync and health status, last operation and resources')
    .argument('<name>')
    .option('-N, --app-namespace <ns>', '', '')
    .option('--project <name>', 'the application must be in this project', '')
    .addOption(outputOption())
    .action(
      (name: string, o: { appNamespace: string; project: string; output: OutputFormat }, cmd: Command) =>
        withConnection(cmd, async (c) => {
          const a = await c.call(c.applications.get.bind(c.applications), {
            name,
            appNamespace: o.appNamespace,
            project: o.project,
          });
          const table = o.output === 'table' || o.output === 'wide';
          printApplication(o.output, a, table ? await syncWindowLine(c, a) : undefined);
        }),
    );
}

function appListCommand(): Command {
  return new Command('list')
    .description('list Applications')
    .option(
      '-p, --project <name>',
      'only this project (repeatable)',
      (v: string, p: string[]) => [...p, v],
      [],
    )
    .option('-l, --selector <k=v>', 'label selector', '')
    .addOption(outputOption())
    .action((o: { project: string[]; selector: string; output: OutputFormat }, cmd: Command) =>
      withConnection(cmd, async (c) => {
        const items: apiv1.Application[] = [];
        let pageToken = '';
        do {
          const r = await c.call(c.applications.list.bind(c.applications), {
            projects: o.project,
            selector: o.selector,
            limit: 500,
            pageToken,
          });
          items.push(...r.items);
          pageToken = r.nextPageToken;
        } while (pageToken);
        printList(
          o.output,
          items,
          [
            ['NAME', (a) => `${a.metadata?.namespace}/${a.metadata?.name}`],
            ['CLUSTER', (a) => a.spec?.destination?.server || a.spec?.destination?.name],
            ['NAMESPACE', (a) => a.spec?.destination?.namespace],
            ['PROJECT', (a) => a.spec?.project],
            ['STATUS', (a) => a.status?.sync?.status],
            ['HEALTH', (a) => a.status?.health?.status],
            ['REPO', (a) => (a.spec?.sources[0] ?? a.spec?.source)?.repoUrl],
            ['PATH', (a) => (a.spec?.sources[0] ?? a.spec?.source)?.path],
          ],
          (a) => apiv1.Application.toJSON(a),
          (a) => a.metadata?.name ?? '',
        );
      }),
    );
}

function appSyncCommand(): Command {
  return new Command('sync')
    .description('sync an Application and follow the operation')
    .argument('<name>')
    .option('-N, --app-namespace <ns>', '', '')
    .option('--revision <rev>', 'sync to this revision', '')
    .option('--dry-run', 'resolve the identity and diff without changing anything')
    .option('--prune', 'delete resources the Application no longer declares')
    .option('--async', 'print the operation id and return')
    .option('--timeout <seconds>', 'give up waiting after this long', '300')
    .option(
      '--resource <GROUP:KIND:NAME>',
      "Sync only specific resources as GROUP:KIND:NAME or !GROUP:KIND:NAME. Fields may be blank and '*' can be used. This option may be specified repeatedly",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--revisions <rev>',
      'a multi-source Application: sync the source at the matching --source-positions to this revision; repeatable',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--source-positions <n>',
      'the position (from 1, in spec.sources order) of the source the matching --revisions is for; repeatable',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .addOption(outputOption())
    .action(syncAction(false));
}

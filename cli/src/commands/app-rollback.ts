// capstan app history and capstan app rollback, as argocd's: history lists the successful
// deployments of status.history (whoever started them: a user, another system, automation,
// self-heal, a retry, a rollback), --operations every operation with its outcome; rollback syncs to
// a history entry's revision (the one before the last when no id is given) and follows it.
import type { Command } from 'commander';
import { apiv1 } from '@capstan/proto';
import { withConnection, type Connection } from '../client/connection.js';
import { CliError } from '../errors.js';
import { outputOption, printJsonOrYaml, type OutputFormat } from '../output/format.js';
import { printOperations, printRevisionHistory, rollbackTarget } from './app-status.js';

type Follow = (
  c: Connection,
  name: string,
  appNamespace: string,
  id: string,
  timeoutMs: number,
  quiet: boolean,
) => Promise<apiv1.SyncOperation>;

export function addHistoryCommand(app: Command): void {
  app
    .command('history')
    .description(
      'the deployments of an Application (status.history: every successful sync, whatever started it); --operations: every operation',
    )
    .argument('<name>')
    .option('-N, --app-namespace <ns>', '', '')
    .option('--operations', 'every sync operation, failed and dry runs included, newest first')
    .addOption(outputOption())
    .action(
      (name: string, o: { appNamespace: string; operations?: boolean; output: OutputFormat }, cmd: Command) =>
        withConnection(cmd, async (c) => {
          const query = { name, appNamespace: o.appNamespace, project: '' };
          if (o.operations) {
            const r = await c.call(c.applications.history.bind(c.applications), query);
            printOperations(o.output, r.items);
            return;
          }
          const a = await c.call(c.applications.get.bind(c.applications), query);
          printRevisionHistory(o.output, a.status?.history ?? []);
        }),
    );
}

function parseId(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new CliError(`ID must be a history id (a number), got ${JSON.stringify(v)}`, 2);
  return Number(v);
}

export function addRollbackCommand(app: Command, follow: Follow): void {
  app
    .command('rollback')
    .description(
      'sync to the revision of an earlier deployment (history ID; omitted: the one before the last); refused while automated sync is on',
    )
    .argument('<name>')
    .argument('[id]')
    .option('-N, --app-namespace <ns>', '', '')
    .option('--dry-run', 'resolve the identity and diff without changing anything')
    .option('--prune', 'allow deleting unexpected resources')
    .option('--async', 'print the operation id and return')
    .option('--timeout <seconds>', 'give up waiting after this long', '300')
    .addOption(outputOption(['table', 'json', 'yaml']))
    .action(
      (
        name: string,
        idArg: string | undefined,
        o: {
          appNamespace: string;
          dryRun?: boolean;
          prune?: boolean;
          async?: boolean;
          timeout: string;
          output: OutputFormat;
        },
        cmd: Command,
      ) =>
        withConnection(cmd, async (c) => {
          const id = parseId(idArg);
          const a = await c.call(c.applications.get.bind(c.applications), {
            name,
            appNamespace: o.appNamespace,
            project: '',
          });
          const target = rollbackTarget(name, a.status?.history ?? [], id);
          const res = await c.call(c.applications.rollback.bind(c.applications), {
            name,
            appNamespace: o.appNamespace,
            id: target.id,
            dryRun: !!o.dryRun,
            prune: !!o.prune,
            project: '',
          });
          if (o.async) {
            process.stdout.write(`${res.operationId}\n`);
            return;
          }
          const quiet = o.output === 'json' || o.output === 'yaml';
          const op = await follow(c, name, o.appNamespace, res.operationId, Number(o.timeout) * 1000, quiet);
          if (!printJsonOrYaml(o.output, apiv1.SyncOperation.toJSON(op)))
            process.stdout.write(
              `Operation:     ${op.id}\nRollback to:   ${target.id} (${target.revision || target.revisions.join(', ')})\nPhase:         ${op.phase}\nMessage:       ${op.message}\n`,
            );
          if (op.phase !== 'Succeeded')
            throw new CliError(`operation ${op.phase.toLowerCase()}: ${op.message}`);
        }),
    );
}

// capstan app delete: Argo CD's `argocd app delete` — cascade by default (the resources are deleted
// first, as the Application's ServiceAccount, while it shows "Deleting"), --cascade=false to leave
// them, -p foreground|background, and a confirmation unless --yes.
import { status } from '@grpc/grpc-js';
import type { Command } from 'commander';
import { withConnection, type Connection } from '../client/connection.js';
import { CliError } from '../errors.js';
import { askToProceed, mustAsk } from '../input/confirm.js';

function parseBool(flag: string, v: string): boolean {
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new CliError(`${flag}: expected true or false, got ${JSON.stringify(v)}`, 2);
}

/** After a delete: gone at once (no cascade), or deleting its resources while the Application stays. */
async function deletionOutcome(c: Connection, name: string, appNamespace: string): Promise<string> {
  try {
    const a = await c.call(c.applications.get.bind(c.applications), { name, appNamespace, project: '' });
    if (a.metadata?.deletionTimestamp)
      return `application '${name}' is being deleted: its resources are deleted first (capstan app get ${name} shows progress)\n`;
  } catch (err) {
    if ((err as { code?: unknown }).code !== status.NOT_FOUND) throw err;
  }
  return `application '${name}' deleted\n`;
}

export function addDeleteCommand(app: Command): void {
  app
    .command('delete')
    .description(
      'delete Applications; with cascade (the default) their resources are deleted first, as their ServiceAccount',
    )
    .argument('<names...>')
    .option('-N, --app-namespace <ns>', '', '')
    .option(
      '--cascade [bool]',
      'delete the resources too (--cascade=false leaves them in place)',
      (v: string) => parseBool('--cascade', v),
      true,
    )
    .option(
      '-p, --propagation-policy <policy>',
      'how each resource is deleted with cascade: foreground or background (orphan: --cascade=false)',
      'foreground',
    )
    .option('-y, --yes', 'do not ask for confirmation (needed when stdin is not a terminal)')
    .action(
      (
        names: string[],
        o: { appNamespace: string; cascade: boolean; propagationPolicy: string; yes?: boolean },
        cmd: Command,
      ) => {
        const what = `delete ${names.map((n) => `'${n}'`).join(', ')}${o.cascade ? ` and ${names.length > 1 ? 'their' : 'its'} resources` : ''}`;
        let ask = mustAsk(what, !!o.yes, !!process.stdin.isTTY);
        return withConnection(cmd, async (c) => {
          for (const name of names) {
            if (ask) {
              const answer = await askToProceed(
                `Are you sure you want to delete '${name}'${o.cascade ? ' and all its resources' : ''}? ${names.length > 1 ? "[y/n/A] where 'A' is to delete all specified apps without prompting " : '[y/n] '}`,
                names.length > 1,
              );
              if (answer === 'no') {
                process.stdout.write(`The command to delete '${name}' was cancelled.\n`);
                continue;
              }
              if (answer === 'all') ask = false;
            }
            await c.call(c.applications.delete.bind(c.applications), {
              name,
              appNamespace: o.appNamespace,
              cascade: o.propagationPolicy === 'orphan' ? false : o.cascade,
              propagationPolicy: o.propagationPolicy === 'orphan' || !o.cascade ? '' : o.propagationPolicy,
            });
            process.stdout.write(await deletionOutcome(c, name, o.appNamespace));
          }
        });
      },
    );
}

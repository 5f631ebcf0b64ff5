// capstan proj windows: AppProject sync windows, as argocd proj windows (list, add, delete), and
// the sync-window line of `capstan app get` (Argo CD's "SyncWindow: Sync Allowed").
import { Command } from 'commander';
import { apiv1 } from '@capstan/proto';
import { syncWindowsVerdict, windowActive, type SyncWindow } from '@capstan/policy';
import { withConnection, type Connection } from '../client/connection.js';
import { CliError } from '../errors.js';
import { outputOption, printList, type OutputFormat } from '../output/format.js';
import { modify } from './project-edit.js';

const list = (v: string) => (v === '' ? [] : v.split(',').map((s) => s.trim()));

function asWindow(w: apiv1.SyncWindow): SyncWindow {
  return {
    kind: w.kind,
    schedule: w.schedule,
    duration: w.duration,
    applications: w.applications,
    namespaces: w.namespaces,
    clusters: w.clusters,
    manualSync: w.manualSync,
    timeZone: w.timeZone,
    andOperator: w.andOperator,
    description: w.description,
  };
}

function active(w: apiv1.SyncWindow, now: Date): string {
  try {
    return windowActive(asWindow(w), now) ? 'Active' : 'Inactive';
  } catch {
    return 'Invalid';
  }
}

export function projWindowsCommand(): Command {
  const windows = new Command('windows').description("manage a project's sync windows");
  windows.addCommand(projWindowsListCommand());
  windows.addCommand(projWindowsAddCommand());
  windows.addCommand(projWindowsDeleteCommand());
  return windows;
}

/**
 * Argo CD's SyncWindow line of `app get`: "Sync Allowed", "Manual Allowed" or "Sync Denied", through
 * the project chain, with the windows open now. A project the caller cannot read makes it unknown.
 */
export async function syncWindowLine(c: Connection, a: apiv1.Application): Promise<string> {
  const chain: { name: string; spec: { syncWindows: SyncWindow[] } }[] = [];
  try {
    for (let next = a.spec?.project; next && chain.length < 64 && !chain.some((p) => p.name === next);) {
      const p = await c.call(c.projects.get.bind(c.projects), { name: next });
      chain.push({ name: next, spec: { syncWindows: (p.spec?.syncWindows ?? []).map(asWindow) } });
      next = p.spec?.parentProject;
    }
  } catch (err) {
    return `unknown (${(err as { details?: string }).details ?? String(err)})`;
  }
  const d = a.spec?.destination;
  const target = {
    name: a.metadata?.name ?? '',
    namespace: d?.namespace ?? '',
    server: d?.server ?? '',
    clusterName: d?.name || undefined,
  };
  const now = new Date();
  const automated = syncWindowsVerdict(chain, target, false, now);
  const open = automated.active.map((w) => `${w.project}[${w.index}] ${w.kind}`).join(', ');
  const status = automated.allowed
    ? 'Sync Allowed'
    : syncWindowsVerdict(chain, target, true, now).allowed
      ? 'Manual Allowed'
      : 'Sync Denied';
  return `${status}${open ? ` (active: ${open})` : ''}`;
}

function projWindowsListCommand(): Command {
  return new Command('list')
    .description('list the sync windows of a project, with whether each is active now')
    .argument('<project>')
    .addOption(outputOption())
    .action((project: string, o: { output: OutputFormat }, cmd: Command) =>
      withConnection(cmd, async (c) => {
        const p = await c.call(c.projects.get.bind(c.projects), { name: project });
        const now = new Date();
        const rows = (p.spec?.syncWindows ?? []).map((w, id) => ({ id, w }));
        printList(
          o.output,
          rows,
          [
            ['ID', (r) => r.id],
            ['STATUS', (r) => active(r.w, now)],
            ['KIND', (r) => r.w.kind],
            ['SCHEDULE', (r) => r.w.schedule],
            ['DURATION', (r) => r.w.duration],
            ['APPLICATIONS', (r) => r.w.applications.join(',') || '-'],
            ['NAMESPACES', (r) => r.w.namespaces.join(',') || '-'],
            ['CLUSTERS', (r) => r.w.clusters.join(',') || '-'],
            ['MANUALSYNC', (r) => (r.w.manualSync ? 'Enabled' : 'Disabled')],
            ['TIMEZONE', (r) => r.w.timeZone || 'UTC'],
            ['USEANDOPERATOR', (r) => (r.w.andOperator ? 'Enabled' : 'Disabled')],
          ],
          (r) => apiv1.SyncWindow.toJSON(r.w),
          (r) => String(r.id),
        );
      }),
    );
}

function projWindowsAddCommand(): Command {
  return new Command('add')
    .description('add a sync window')
    .argument('<project>')
    .requiredOption('-k, --kind <kind>', 'allow or deny')
    .requiredOption('--schedule <cron>', 'when the window opens: 5-field cron, e.g. "0 22 * * *"')
    .requiredOption('--duration <duration>', 'how long it stays open, e.g. 1h')
    .option('--applications <globs>', 'applications, comma separated', '')
    .option('--namespaces <globs>', 'destination namespaces, comma separated', '')
    .option('--clusters <globs>', 'destination clusters (name or server), comma separated', '')
    .option('--manual-sync', 'let manual syncs through while the window blocks')
    .option('--time-zone <zone>', 'IANA time zone of the schedule', 'UTC')
    .option('--use-and-operator', 'select only Applications every non-empty list matches')
    .action(
      (
        project: string,
        o: {
          kind: string;
          schedule: string;
          duration: string;
          applications: string;
          namespaces: string;
          clusters: string;
          manualSync?: boolean;
          timeZone: string;
          useAndOperator?: boolean;
        },
        cmd: Command,
      ) =>
        withConnection(cmd, async (c) => {
          await modify(c, project, (s) =>
            s.syncWindows.push({
              kind: o.kind,
              schedule: o.schedule,
              duration: o.duration,
              applications: list(o.applications),
              namespaces: list(o.namespaces),
              clusters: list(o.clusters),
              manualSync: o.manualSync === true,
              timeZone: o.timeZone,
              andOperator: o.useAndOperator === true,
              description: '',
            }),
          );
          process.stdout.write(`sync window added to project '${project}'\n`);
        }),
    );
}

function projWindowsDeleteCommand(): Command {
  return new Command('delete')
    .description('delete a sync window by its ID (see windows list)')
    .argument('<project>')
    .argument('<id>')
    .action((project: string, id: string, _o: unknown, cmd: Command) =>
      withConnection(cmd, async (c) => {
        await modify(c, project, (s) => {
          const i = Number(id);
          if (!Number.isInteger(i) || i < 0 || i >= s.syncWindows.length)
            throw new CliError(`window with id '${id}' not found`);
          s.syncWindows.splice(i, 1);
        });
        process.stdout.write(`sync window ${id} deleted from project '${project}'\n`);
      }),
    );
}

// capstan audit: query the audit trail and verify its hash chains.
import { Command, Option } from 'commander';
import { apiv1 } from '@capstan/proto';
import { withConnection } from '../client/connection.js';
import { CliError } from '../errors.js';
import { outputOption, printList, type OutputFormat } from '../output/format.js';

const TABLES = [
  'sync_decisions',
  'resource_results',
  'credential_decisions',
  'access_decisions',
  'webhook_deliveries',
  'notification_deliveries',
];
const ALIASES: Record<string, string> = {
  sync: 'sync_decisions',
  resources: 'resource_results',
  credentials: 'credential_decisions',
  access: 'access_decisions',
  webhooks: 'webhook_deliveries',
  notifications: 'notification_deliveries',
};

/** "1h", "30m", "7d" ago, or an RFC 3339 time. */
export function parseTime(v: string): string {
  const m = /^(\d+)([smhd])$/.exec(v);
  if (!m) return v;
  const unit = { s: 1, m: 60, h: 3600, d: 86400 }[m[2] as 's' | 'm' | 'h' | 'd'];
  return new Date(Date.now() - Number(m[1]) * unit * 1000).toISOString();
}

function summary(table: string, f: Record<string, unknown>): string {
  switch (table) {
    case 'access_decisions':
      return `${f.subject} ${f.action} ${f.resource} ${f.object} -> ${f.decision}${f.policy_line ? ` (${f.policy_line})` : ` (${f.reason})`}`;
    case 'sync_decisions':
      return `${f.application} [${f.project}] -> ${f.decision} as ${f.username ?? 'control-plane'}: ${f.reason}`;
    case 'resource_results':
      return `${f.application} ${f.verb} ${f.kind} ${f.namespace ?? ''}/${f.name} as ${f.identity}${f.attempt ? ` [attempt ${f.attempt}]` : ''}: ${f.http_status ?? ''} ${f.message}`;
    case 'webhook_deliveries':
      return `${f.provider} ${f.event} ${f.repo_url ?? ''} ${f.revision ?? ''} -> ${f.outcome} ${f.http_status}: ${f.reason}`;
    case 'notification_deliveries':
      return `${f.application} ${f.trigger} -> ${f.service}${f.recipient ? ` ${f.recipient}` : ''} ${f.target} [attempt ${f.attempt}] ${f.outcome} ${f.http_status}: ${f.reason}`;
    default:
      return `${f.operation} ${f.repo_url} [${f.project ?? 'unscoped'}] -> ${f.outcome} (${f.reason}) by ${f.actor}`;
  }
}

export function auditCommand(): Command {
  const audit = new Command('audit').description('query and verify the audit trail');
  audit.addCommand(auditQueryCommand());
  audit.addCommand(auditVerifyCommand());
  return audit;
}

function auditQueryCommand(): Command {
  return new Command('query')
    .description('audit rows, newest first')
    .argument(
      '<table>',
      `${TABLES.join(', ')} (or sync, resources, credentials, access, webhooks, notifications)`,
    )
    .option('--app <name>', 'application', '')
    .option('--project <name>', 'project', '')
    .option('--user <name>', 'user or actor', '')
    .option('--since <time>', 'RFC 3339 or 1h/30m/7d ago', '')
    .option('--until <time>', 'RFC 3339 or 1h/30m/7d ago', '')
    .addOption(new Option('--outcome <outcome>', 'allow, deny, error (resource results: ok, error)'))
    .option('--limit <n>', 'rows per page', '100')
    .option('--page-token <token>', 'continue after a previous page', '')
    .addOption(outputOption())
    .action(
      (
        t: string,
        o: {
          app: string;
          project: string;
          user: string;
          since: string;
          until: string;
          outcome?: string;
          limit: string;
          pageToken: string;
          output: OutputFormat;
        },
        cmd: Command,
      ) =>
        withConnection(cmd, async (c) => {
          const table = ALIASES[t] ?? t;
          if (!TABLES.includes(table)) throw new CliError(`unknown audit table ${t}`);
          const r = await c.call(c.audit.query.bind(c.audit), {
            table,
            application: o.app,
            project: o.project,
            user: o.user,
            since: o.since ? parseTime(o.since) : '',
            until: o.until ? parseTime(o.until) : '',
            outcome: o.outcome ?? '',
            limit: Number(o.limit),
            pageToken: o.pageToken,
          });
          printList(
            o.output,
            r.rows,
            [
              ['ID', (x) => x.id],
              ['TIME', (x) => x.time],
              ['ROW', (x) => summary(table, x.fields ?? {})],
            ],
            (x) => apiv1.AuditRow.toJSON(x),
            (x) => String(x.id),
          );
          if (r.nextPageToken && (o.output === 'table' || o.output === 'wide'))
            process.stderr.write(`more rows: --page-token ${r.nextPageToken}\n`);
        }),
    );
}

function auditVerifyCommand(): Command {
  return new Command('verify')
    .description('recompute the hash chain of one audit table (default: all); exits 1 when a chain is broken')
    .argument('[table]')
    .addOption(outputOption())
    .action((t: string | undefined, o: { output: OutputFormat }, cmd: Command) =>
      withConnection(cmd, async (c) => {
        const r = await c.call(c.audit.verify.bind(c.audit), { table: t ? (ALIASES[t] ?? t) : '' });
        printList(
          o.output,
          r.tables,
          [
            ['TABLE', (x) => x.table],
            ['CHAIN', (x) => (x.ok ? 'ok' : 'BROKEN')],
            ['FIRST BROKEN ROW', (x) => (x.ok ? '' : x.firstBrokenId)],
            ['REASON', (x) => x.reason],
          ],
          (x) => apiv1.AuditTableVerification.toJSON(x),
          (x) => x.table,
        );
        const broken = r.tables.filter((x) => !x.ok);
        if (broken.length > 0)
          throw new CliError(`audit chain broken in ${broken.map((x) => x.table).join(', ')}`);
      }),
    );
}

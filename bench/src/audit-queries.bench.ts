// The operator's audit questions over a large trail (issue 17): the audit schema filled through the
// real writer (appendAuditBatch: chained hashes, one lock per batch) to 100k and then 1M rows, then
// the three questions docs/audit.md gives, each asked 200 times with random arguments from a client
// as `capstan audit` / psql would (client-side latency, p50/p99): every sync of app X last week with
// its failed resources (audit.sync_history), who used credential Y (audit.credential_usage), and every
// deny today (audit.denials); plus the full chain verification (capstan audit verify) per row.
//
// Sizes: AUDIT_BENCH_SIZES (default "100000,1000000"): each size adds rows to the same trail, so the
// figures show how each cost grows from one size to the next. The mix per 100 rows: 10 sync decisions
// (5% denied) with 8 resource results each (2% failed), 6 credential decisions (3% denied) and 4 access
// decisions (10% denied), over 2,000 Applications in 50 projects and 200 credentials, 30 days.
import { randomInt } from 'node:crypto';
import pg from 'pg';
import {
  appendAuditBatch,
  createDb,
  migrateAudit,
  verifyAuditChain,
  type AccessDecisionColumns,
  type AuditRow,
  type AuditTableName,
  type CredentialDecisionColumns,
  type Kysely,
  type ResourceResultColumns,
  type SyncDecisionColumns,
} from '@capstan/db';
import { createTestDatabase } from '@capstan/test/infra';
import { report, summarize, type Figure } from './harness.js';

const SIZES = (process.env.AUDIT_BENCH_SIZES ?? '100000,1000000').split(',').map(Number);
const ASKS = Number(process.env.AUDIT_BENCH_ASKS ?? 200);
const APPS = 2_000;
const PROJECTS = 50;
const CREDENTIALS = 200;
const DAYS = 30;
const DAY_MS = 86_400_000;

const appName = (i: number) => `argocd/app-${i}`;
const projectOf = (app: number) => `team-${app % PROJECTS}`;
const credentialId = (i: number) => `repo-${String(i).padStart(10, '0')}`;
/** Spread over the last DAYS days, the newest today. */
const when = (now: number) => new Date(now - randomInt(DAYS * DAY_MS));
const chance = (percent: number) => randomInt(10_000) < percent * 100;

/** One block of 100 rows in the mix, as the services would write them. */
function block(now: number, seq: number) {
  const decisions: AuditRow<'sync_decisions'>[] = [];
  const results: AuditRow<'resource_results'>[] = [];
  for (let i = 0; i < 10; i++) {
    const app = randomInt(APPS);
    const syncId = `op-${seq}-${i}`;
    const at = when(now);
    const deny = chance(5);
    const decision: SyncDecisionColumns = {
      sync_id: syncId,
      application: appName(app),
      project: projectOf(app),
      project_chain: [projectOf(app)],
      destination_server: 'https://kubernetes.default.svc',
      destination_namespace: `ns-${app}`,
      impersonation: true,
      strict_mode: false,
      rules_considered: [
        { index: 0, server: '*', namespace: `ns-${app}`, defaultServiceAccount: 'deployer', matched: !deny },
      ],
      matched_rule_index: deny ? null : 0,
      matched_rule_pattern: deny ? null : `*/ns-${app}`,
      service_account: deny ? null : 'deployer',
      username: deny ? null : `system:serviceaccount:ns-${app}:deployer`,
      fallback: null,
      decision: deny ? 'deny' : 'allow',
      reason: deny ? 'no destinationServiceAccounts rule matched' : 'rule 0 matched',
      revision: 'a'.repeat(40),
      trigger_event_id: null,
      actor: 'user:admin',
      attempt: 1,
    };
    decisions.push({ ...decision, occurred_at: at });
    for (let r = 0; r < 8; r++) {
      const result: ResourceResultColumns = {
        sync_id: syncId,
        application: appName(app),
        verb: 'apply',
        api_group: r % 2 ? 'apps' : '',
        kind: r % 2 ? 'Deployment' : 'ConfigMap',
        namespace: `ns-${app}`,
        name: `object-${r}`,
        identity: `system:serviceaccount:ns-${app}:deployer`,
        http_status: chance(2) ? 403 : 200,
        message: '',
        attempt: 1,
      };
      results.push({ ...result, occurred_at: at });
    }
  }
  const credentials: AuditRow<'credential_decisions'>[] = Array.from({ length: 6 }, () => {
    const app = randomInt(APPS);
    const cred = randomInt(CREDENTIALS);
    const deny = chance(3);
    const row: CredentialDecisionColumns = {
      operation: 'lookup',
      repo_url: `https://git.example.com/team/${cred}.git`,
      project: projectOf(app),
      application: appName(app),
      actor: 'service:sync',
      candidates: [
        { id: credentialId(cred), project: projectOf(app), url: `https://git.example.com/team/${cred}.git` },
      ],
      chosen_id: deny ? null : credentialId(cred),
      reason: deny ? 'none' : 'project-match',
      outcome: deny ? 'deny' : 'allow',
      message: null,
    };
    return { ...row, occurred_at: when(now) };
  });
  const access: AuditRow<'access_decisions'>[] = Array.from({ length: 4 }, () => {
    const deny = chance(10);
    const row: AccessDecisionColumns = {
      subject: `user-${randomInt(500)}`,
      resource: 'applications',
      action: 'sync',
      object: appName(randomInt(APPS)),
      decision: deny ? 'deny' : 'allow',
      policy_line: deny ? null : 'p, role:dev, applications, sync, */*, allow',
      reason: deny ? 'no policy line allows it' : 'allowed',
      via: 'grpc',
    };
    return { ...row, occurred_at: when(now) };
  });
  return { decisions, results, credentials, access };
}

/** Appends `rows` more rows through the real writer, in batches; returns rows per second. */
async function fill(db: Kysely<unknown>, client: pg.Client, rows: number): Promise<number> {
  const started = performance.now();
  const now = Date.now();
  const batches = Math.ceil(rows / 1_000);
  for (let b = 0; b < batches; b++) {
    const blocks = Array.from({ length: 10 }, (_, i) => block(now, b * 10 + i + Date.now()));
    const append = <T extends AuditTableName>(table: T, all: AuditRow<T>[]) =>
      appendAuditBatch(db, table, all);
    await append(
      'sync_decisions',
      blocks.flatMap((x) => x.decisions),
    );
    await append(
      'resource_results',
      blocks.flatMap((x) => x.results),
    );
    await append(
      'credential_decisions',
      blocks.flatMap((x) => x.credentials),
    );
    await append(
      'access_decisions',
      blocks.flatMap((x) => x.access),
    );
  }
  await client.query('analyze');
  return (batches * 1_000) / ((performance.now() - started) / 1000);
}

interface Question {
  name: string;
  text: string;
  args: () => unknown[];
}

const QUESTIONS: Question[] = [
  {
    name: 'syncs of app X last week, failed resources',
    text: `select * from audit.sync_history where application = $1 and occurred_at > now() - interval '7 days'
           order by occurred_at desc`,
    args: () => [appName(randomInt(APPS))],
  },
  {
    name: 'who used credential Y',
    text: 'select * from audit.credential_usage where credential_id = $1 order by occurred_at desc limit 100',
    args: () => [credentialId(randomInt(CREDENTIALS))],
  },
  {
    name: 'every deny today',
    text: `select * from audit.denials where occurred_at >= date_trunc('day', now()) order by occurred_at`,
    args: () => [],
  },
];

/** Asks each question ASKS times (after 10 warm-ups); client-side latency in ms. */
async function ask(client: pg.Client, q: Question): Promise<{ p50: number; p99: number; rows: number }> {
  for (let i = 0; i < 10; i++) await client.query(q.text, q.args());
  const samples: number[] = [];
  let rows = 0;
  for (let i = 0; i < ASKS; i++) {
    const t = performance.now();
    const res = await client.query(q.text, q.args());
    samples.push(performance.now() - t);
    rows += res.rowCount ?? 0;
  }
  const s = summarize(samples);
  return { p50: s.p50, p99: s.p99, rows: Math.round(rows / ASKS) };
}

async function totalRows(client: pg.Client): Promise<number> {
  const tables = ['sync_decisions', 'resource_results', 'credential_decisions', 'access_decisions'];
  let n = 0;
  for (const t of tables) n += Number((await client.query(`select count(*) from audit.${t}`)).rows[0].count);
  return n;
}

export async function main(): Promise<void> {
  const database = await createTestDatabase('capstan_bench_audit');
  const db = createDb<unknown>(database.url);
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const figures: Figure[] = [];
  const plans: Record<string, string[]> = {};
  try {
    await migrateAudit(db);
    let filled = 0;
    for (const size of SIZES) {
      const rate = await fill(db, client, size - filled);
      filled = await totalRows(client);
      const label = `${Math.round(filled / 1000)}k rows`;
      figures.push({
        name: `${label}: written through appendAuditBatch`,
        value: Math.round(rate),
        unit: 'rows/s',
      });
      for (const q of QUESTIONS) {
        const r = await ask(client, q);
        const goal = size >= 1_000_000 ? { goal: '≤ 50', met: r.p99 <= 50 } : {};
        figures.push({ name: `${label}: ${q.name}, p50`, value: r.p50, unit: 'ms' });
        figures.push({
          name: `${label}: ${q.name}, p99 (${r.rows} rows)`,
          value: r.p99,
          unit: 'ms',
          ...goal,
        });
        const plan = await client.query(`explain ${q.text}`, q.args());
        plans[`${label}: ${q.name}`] = plan.rows.map((row: Record<string, string>) => row['QUERY PLAN']!);
      }
      const t = performance.now();
      let checked = 0;
      for (const table of [
        'sync_decisions',
        'resource_results',
        'credential_decisions',
        'access_decisions',
      ] as const)
        checked += (await verifyAuditChain(db, table, { batchSize: 5_000 })).checked;
      const seconds = (performance.now() - t) / 1000;
      figures.push({ name: `${label}: audit verify (every chain)`, value: seconds, unit: 's' });
      figures.push({
        name: `${label}: audit verify rate`,
        value: Math.round(checked / seconds),
        unit: 'rows/s',
      });
    }
  } finally {
    await client.end();
    await db.destroy();
    await database.drop();
  }
  report('audit-queries', figures, {
    sizes: SIZES,
    asks: ASKS,
    mix: 'per 100 rows: 10 sync decisions (5% deny) + 80 resource results (2% failed) + 6 credential (3% deny) + 4 access (10% deny); 2,000 apps, 50 projects, 200 credentials, 30 days',
    plans,
  });
}

if (import.meta.url === `file://${process.argv[1]}`) await main();

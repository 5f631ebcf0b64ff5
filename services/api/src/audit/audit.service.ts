// Audit queries over the append-only trail (RBAC resource "audit"): filters by application, project,
// user, time range and outcome, newest first, paged by row id; and hash-chain verification.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { auditTableNames, verifyAuditChain, type AuditTableName } from '@capstan/db';
import type { Authorizer } from '../rbac/authorizer.js';
import type { RequestContext } from '../support/request.js';
import { invalid } from '../support/validation.js';

export interface AuditQueryInput {
  table: string;
  application: string;
  project: string;
  user: string;
  since: string;
  until: string;
  outcome: string;
  limit: number;
  pageToken: string;
}

export interface AuditRowView {
  id: number;
  table: AuditTableName;
  time: string;
  fields: Record<string, unknown>;
  prevHash: string;
  hash: string;
}

function table(name: string): AuditTableName {
  if (!(auditTableNames as readonly string[]).includes(name)) {
    throw invalid('table', `must be one of ${auditTableNames.join(', ')}`);
  }
  return name as AuditTableName;
}

function time(field: string, value: string): Date | undefined {
  if (!value) return undefined;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw invalid(field, 'must be an RFC 3339 time');
  return d;
}

const matchesApp = (col: string, app: string) =>
  sql<boolean>`(${sql.ref(col)} = ${app} or ${sql.ref(col)} like ${`%/${app}`})`;
const matchesActor = (col: string, user: string) =>
  sql<boolean>`(${sql.ref(col)} = ${user} or ${sql.ref(col)} = ${`user:${user}`} or ${sql.ref(col)} like ${`user:${user} via %`} or ${sql.ref(col)} like ${`${user} via %`})`;

/** Filter predicates per table: each audit table names application, project, user and outcome its own way. */
function predicates(t: AuditTableName, q: AuditQueryInput): RawBuilder<boolean>[] {
  const out: RawBuilder<boolean>[] = [];
  const outcome = q.outcome.toLowerCase();
  switch (t) {
    case 'sync_decisions':
      if (q.application) out.push(matchesApp('application', q.application));
      if (q.project) out.push(sql<boolean>`(project = ${q.project} or project_chain ? ${q.project})`);
      if (q.user) out.push(matchesActor('actor', q.user));
      if (outcome) out.push(sql<boolean>`decision = ${outcome}`);
      break;
    case 'resource_results':
      if (q.application) out.push(matchesApp('application', q.application));
      if (q.project)
        out.push(
          sql<boolean>`sync_id in (select sync_id from audit.sync_decisions where project = ${q.project})`,
        );
      if (q.user) out.push(sql<boolean>`identity = ${q.user}`);
      if (outcome === 'ok' || outcome === 'allow') out.push(sql<boolean>`http_status < 400`);
      else if (outcome === 'error' || outcome === 'deny')
        out.push(sql<boolean>`(http_status is null or http_status >= 400)`);
      break;
    case 'credential_decisions':
      if (q.application) out.push(matchesApp('application', q.application));
      if (q.project) out.push(sql<boolean>`project = ${q.project}`);
      if (q.user) out.push(matchesActor('actor', q.user));
      if (outcome) out.push(sql<boolean>`outcome = ${outcome}`);
      break;
    case 'access_decisions':
      if (q.application)
        out.push(sql<boolean>`(resource = 'applications' and object like ${`%/${q.application}`})`);
      if (q.project) out.push(sql<boolean>`(object = ${q.project} or object like ${`${q.project}/%`})`);
      if (q.user) out.push(matchesActor('subject', q.user));
      if (outcome) out.push(sql<boolean>`decision = ${outcome}`);
      break;
    case 'settings_changes':
      if (q.user) out.push(matchesActor('actor', q.user));
      break;
    case 'webhook_deliveries':
      if (q.application) out.push(sql<boolean>`applications ? ${q.application}`);
      if (outcome === 'allow') out.push(sql<boolean>`outcome = 'accepted'`);
      else if (outcome === 'deny') out.push(sql<boolean>`http_status >= 400`);
      break;
    case 'notification_deliveries':
      if (q.application) out.push(matchesApp('application', q.application));
      if (outcome === 'allow') out.push(sql<boolean>`outcome = 'sent'`);
      else if (outcome === 'deny' || outcome === 'error') out.push(sql<boolean>`outcome <> 'sent'`);
      break;
  }
  return out;
}

export class AuditService {
  constructor(private readonly deps: { db: Kysely<unknown>; authz: Authorizer }) {}

  async query(
    ctx: RequestContext,
    q: AuditQueryInput,
  ): Promise<{ rows: AuditRowView[]; nextPageToken: string }> {
    const t = table(q.table);
    await this.deps.authz.check(ctx.principal, 'audit', 'get', t, ctx.via);
    const outcomes =
      t === 'resource_results' ? ['', 'ok', 'error', 'allow', 'deny'] : ['', 'allow', 'deny', 'error'];
    if (!outcomes.includes(q.outcome.toLowerCase()))
      throw invalid('outcome', `must be one of ${outcomes.filter(Boolean).join(', ')}`);
    if (q.limit < 0) throw invalid('limit', 'must not be negative');
    const limit = Math.min(q.limit || 100, 1000);
    const since = time('since', q.since);
    const until = time('until', q.until);
    let before: number | undefined;
    if (q.pageToken) {
      before = Number(q.pageToken);
      if (!Number.isSafeInteger(before) || before <= 0)
        throw invalid('pageToken', 'is not a token this api issued');
    }
    const where = predicates(t, q);
    if (since) where.push(sql<boolean>`occurred_at >= ${since}`);
    if (until) where.push(sql<boolean>`occurred_at < ${until}`);
    if (before) where.push(sql<boolean>`id < ${before}`);
    const condition = where.length > 0 ? sql`where ${sql.join(where, sql` and `)}` : sql``;
    const result = await sql<Record<string, unknown>>`
      select * from ${sql.table(`audit.${t}`)} ${condition} order by id desc limit ${limit}`.execute(
      this.deps.db,
    );
    const rows = result.rows.map((r) => {
      const { id, occurred_at, prev_hash, hash, ...fields } = r;
      return {
        id: Number(id),
        table: t,
        time: (occurred_at as Date).toISOString(),
        fields,
        prevHash: String(prev_hash),
        hash: String(hash),
      };
    });
    const nextPageToken = rows.length === limit ? String(rows.at(-1)!.id) : '';
    return { rows, nextPageToken };
  }

  async verify(
    ctx: RequestContext,
    name: string,
  ): Promise<
    { table: AuditTableName; ok: boolean; firstBrokenId: number; reason: string; checked: number }[]
  > {
    const tables = name ? [table(name)] : [...auditTableNames];
    for (const t of tables) await this.deps.authz.check(ctx.principal, 'audit', 'get', t, ctx.via);
    // Pending allowed-read decisions are written first, so the verification covers them too.
    await this.deps.authz.flush();
    const out = [];
    for (const t of tables) {
      const v = await verifyAuditChain(this.deps.db, t);
      out.push({
        table: t,
        ok: v.ok,
        firstBrokenId: v.broken?.id ?? 0,
        reason: v.broken?.reason ?? '',
        checked: v.checked,
      });
    }
    return out;
  }
}

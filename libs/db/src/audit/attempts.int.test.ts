// The attempt column of sync decisions and resource results, against a real PostgreSQL: rows
// chained before the column existed still verify after the migration, rows written with it hash
// with it (changing it is detected), and the history view counts each decision's own attempt.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import { createTestDatabase, type TestDatabase } from '@capstan/test/infra';
import { createDb } from '../connection.js';
import { migrateToLatest } from '../migrate.js';
import { appendAudit, appendAuditBatch, migrateAudit, verifyAuditChain } from './audit.repository.js';
import { auditMigrations } from './migrations.js';
import type { AuditRow } from './audit.table.js';

const result = (name: string, attempt?: number): AuditRow<'resource_results'> => ({
  sync_id: 'op-1',
  application: 'argocd/guestbook',
  verb: 'apply',
  api_group: '',
  kind: 'ConfigMap',
  namespace: 'team-a',
  name,
  identity: 'system:serviceaccount:team-a:deployer',
  http_status: 200,
  message: 'configured',
  ...(attempt ? { attempt } : {}),
});

const decision = (attempt: number): AuditRow<'sync_decisions'> => ({
  sync_id: 'op-1',
  application: 'argocd/guestbook',
  project: 'team-a',
  project_chain: ['team-a'],
  destination_server: 'https://k.example',
  destination_namespace: 'team-a',
  impersonation: true,
  strict_mode: false,
  rules_considered: [],
  matched_rule_index: null,
  matched_rule_pattern: null,
  service_account: 'team-a/deployer',
  username: 'system:serviceaccount:team-a:deployer',
  fallback: null,
  decision: 'allow',
  reason: 'allowed',
  revision: null,
  trigger_event_id: null,
  actor: 'user:alice',
  attempt,
});

describe('attempts in the audit trail', () => {
  let tdb: TestDatabase;
  let db: Kysely<unknown>;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDb(tdb.url);
    // The trail as it was before attempts were recorded, with a row in it.
    const {
      '2026_11_26_0201_audit_attempts': _later,
      '2026_11_27_0201_audit_webhook_deliveries': _after,
      '2026_11_27_0501_audit_notification_deliveries': _notifications,
      ...before
    } = auditMigrations;
    await migrateToLatest(db, { schema: 'audit', migrations: before });
    await appendAudit(db, 'resource_results', result('old'));
    await migrateAudit(db);
  });
  afterAll(async () => {
    await db.destroy();
    await tdb.drop();
  });

  it('given rows chained before the migration and rows with attempts after, then every chain verifies and the view counts per attempt', async () => {
    // Attempt 1 wrote two results and died; attempt 2 wrote them again and a third.
    await appendAudit(db, 'sync_decisions', decision(1));
    await appendAuditBatch(db, 'resource_results', [result('a', 1), result('b', 1)]);
    await appendAudit(db, 'sync_decisions', decision(2));
    await appendAuditBatch(db, 'resource_results', [result('a', 2), result('b', 2), result('c', 2)]);
    expect((await verifyAuditChain(db, 'resource_results')).ok).toBe(true);
    expect((await verifyAuditChain(db, 'sync_decisions')).ok).toBe(true);
    const history = await sql<{ attempt: number; resources: string }>`
      select attempt, resources from audit.sync_history where sync_id = 'op-1' order by attempt`.execute(db);
    expect(history.rows.map((r) => [r.attempt, Number(r.resources)])).toEqual([
      [1, 2],
      [2, 3],
    ]);
    const old = await sql<{ attempt: number | null }>`
      select attempt from audit.resource_results where name = 'old'`.execute(db);
    expect(old.rows).toEqual([{ attempt: null }]);
  });

  it('given an attempt number altered afterwards, then the chain names the row', async () => {
    const row = await appendAudit(db, 'resource_results', result('d', 3));
    await sql`alter table audit.resource_results disable trigger refuse_update_delete`.execute(db);
    await sql`update audit.resource_results set attempt = 1 where id = ${row.id}`.execute(db);
    await sql`alter table audit.resource_results enable trigger refuse_update_delete`.execute(db);
    expect((await verifyAuditChain(db, 'resource_results')).broken?.id).toBe(row.id);
  });
});

// The audit trail against a real PostgreSQL: rows chain, UPDATE/DELETE/TRUNCATE are refused, and the
// verifier finds an altered or removed row (tampering done as a superuser with the trigger disabled).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import { createTestDatabase, type TestDatabase } from '@capstan/test/infra';
import { createDb } from '../connection.js';
import { appendAudit, appendAuditBatch, migrateAudit, verifyAuditChain } from './audit.repository.js';
import { GENESIS_HASH } from './hash-chain.js';
import type { AuditRow } from './audit.table.js';

const access = (subject: string, decision: 'allow' | 'deny'): AuditRow<'access_decisions'> => ({
  subject,
  resource: 'applications',
  action: 'sync',
  object: 'team-a/guestbook',
  decision,
  policy_line: decision === 'allow' ? 'p, role:team-a, applications, sync, team-a/*, allow' : null,
  reason: decision === 'allow' ? 'policy allows' : 'no policy line allows',
  via: 'grpc',
});

describe('audit trail', () => {
  let tdb: TestDatabase;
  let db: Kysely<unknown>;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDb(tdb.url);
    await migrateAudit(db);
  });
  afterAll(async () => {
    await db.destroy();
    await tdb.drop();
  });

  it('chains each row to the previous one', async () => {
    const first = await appendAudit(db, 'access_decisions', access('alice', 'allow'));
    const second = await appendAudit(db, 'access_decisions', access('bob', 'deny'));
    expect(first.prev_hash).toBe(GENESIS_HASH);
    expect(second.prev_hash).toBe(first.hash);
    expect(await verifyAuditChain(db, 'access_decisions')).toMatchObject({ ok: true, checked: 2 });
  });

  it('keeps the chain intact under concurrent writers', async () => {
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        appendAudit(db, 'sync_decisions', {
          sync_id: `s${i}`,
          application: 'argocd/guestbook',
          project: 'team-a',
          project_chain: ['team-a', 'tenants'],
          destination_server: 'https://kubernetes.default.svc',
          destination_namespace: 'team-a-prod',
          impersonation: true,
          strict_mode: false,
          rules_considered: [
            {
              index: 0,
              server: '*',
              namespace: 'team-a-*',
              defaultServiceAccount: 'deployer',
              matched: true,
            },
          ],
          matched_rule_index: 0,
          matched_rule_pattern: '*/team-a-*',
          service_account: 'team-a-prod/deployer',
          username: 'system:serviceaccount:team-a-prod:deployer',
          fallback: null,
          decision: 'allow',
          reason: 'matched destinationServiceAccounts[0]',
          revision: 'abc',
          trigger_event_id: null,
          actor: 'alice',
        }),
      ),
    );
    expect(await verifyAuditChain(db, 'sync_decisions', { batchSize: 7 })).toMatchObject({
      ok: true,
      checked: 40,
    });
  });

  it('commits an audit row with the caller transaction, or not at all', async () => {
    const before = await verifyAuditChain(db, 'access_decisions');
    await expect(
      db.transaction().execute(async (trx) => {
        await appendAudit(trx, 'access_decisions', access('carol', 'allow'));
        throw new Error('caller fails after auditing');
      }),
    ).rejects.toThrow('caller fails');
    expect((await verifyAuditChain(db, 'access_decisions')).checked).toBe(before.checked);
  });

  it('appends a batch in order with one statement, interleaving safely with single appends', async () => {
    const before = (await verifyAuditChain(db, 'access_decisions')).checked;
    const [batch] = await Promise.all([
      appendAuditBatch(
        db,
        'access_decisions',
        Array.from({ length: 25 }, (_, i) => access(`batch-${i}`, 'allow')),
      ),
      appendAudit(db, 'access_decisions', access('single', 'deny')),
    ]);
    expect(batch.map((r) => r.subject)).toEqual(Array.from({ length: 25 }, (_, i) => `batch-${i}`));
    for (let i = 1; i < batch.length; i++) {
      expect(batch[i]!.prev_hash).toBe(batch[i - 1]!.hash);
      expect(batch[i]!.id).toBeGreaterThan(batch[i - 1]!.id);
    }
    expect(await verifyAuditChain(db, 'access_decisions')).toMatchObject({ ok: true, checked: before + 26 });
  });

  it('refuses UPDATE, DELETE and TRUNCATE', async () => {
    await expect(sql`update audit.access_decisions set decision = 'allow'`.execute(db)).rejects.toThrow(
      /append-only: update refused/,
    );
    await expect(sql`delete from audit.access_decisions`.execute(db)).rejects.toThrow(
      /append-only: delete refused/,
    );
    await expect(sql`truncate audit.access_decisions`.execute(db)).rejects.toThrow(
      /append-only: truncate refused/,
    );
  });

  it('detects an altered row and a removed row', async () => {
    const rows = await Promise.all([
      appendAudit(db, 'credential_decisions', {
        operation: 'lookup',
        repo_url: 'https://git.example.com/a.git',
        project: 'team-a',
        application: null,
        actor: 'repo',
        candidates: [{ id: 'repo-1', project: 'team-a', url: 'https://git.example.com/a.git' }],
        chosen_id: 'repo-1',
        reason: 'project-match',
        outcome: 'allow',
        message: null,
      }),
    ]);
    const second = await appendAudit(db, 'credential_decisions', {
      operation: 'lookup',
      repo_url: 'https://git.example.com/a.git',
      project: 'team-b',
      application: null,
      actor: 'repo',
      candidates: [],
      chosen_id: null,
      reason: 'none',
      outcome: 'allow',
      message: null,
    });
    await appendAudit(db, 'credential_decisions', {
      operation: 'delete',
      repo_url: 'https://git.example.com/a.git',
      project: 'team-a',
      application: null,
      actor: 'admin',
      candidates: [],
      chosen_id: 'repo-1',
      reason: 'exact',
      outcome: 'allow',
      message: null,
    });
    expect((await verifyAuditChain(db, 'credential_decisions')).ok).toBe(true);

    // A superuser disables the guard and rewrites history: the chain still tells.
    await sql`alter table audit.credential_decisions disable trigger refuse_update_delete`.execute(db);
    await sql`update audit.credential_decisions set project = 'team-x' where id = ${second.id}`.execute(db);
    const altered = await verifyAuditChain(db, 'credential_decisions');
    expect(altered).toMatchObject({ ok: false, broken: { id: second.id } });
    expect(altered.broken?.reason).toMatch(/altered/);

    await sql`update audit.credential_decisions set project = 'team-b' where id = ${second.id}`.execute(db);
    expect((await verifyAuditChain(db, 'credential_decisions')).ok).toBe(true);
    await sql`delete from audit.credential_decisions where id = ${second.id}`.execute(db);
    await sql`alter table audit.credential_decisions enable trigger refuse_update_delete`.execute(db);
    const removed = await verifyAuditChain(db, 'credential_decisions');
    expect(removed.ok).toBe(false);
    expect(removed.broken?.id).toBeGreaterThan(rows[0]!.id);
    expect(removed.broken?.reason).toMatch(/removed/);
  });

  it('answers the operators questions through the documented views', async () => {
    const denials = await sql<{
      kind: string;
      subject: string;
    }>`select kind, subject from audit.denials`.execute(db);
    expect(denials.rows).toContainEqual({ kind: 'access', subject: 'bob' });
    const usage = await sql<{
      credential_id: string;
    }>`select credential_id from audit.credential_usage`.execute(db);
    expect(usage.rows.map((r) => r.credential_id)).toContain('repo-1');
  });

  it('migrates idempotently when replicas start together', async () => {
    await Promise.all([migrateAudit(db), migrateAudit(db), migrateAudit(db)]);
    expect((await verifyAuditChain(db, 'access_decisions')).ok).toBe(true);
  });
});

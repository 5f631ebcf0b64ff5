// Group-committed audit appends on real PostgreSQL: many concurrent syncs, one valid hash chain,
// every caller released only once its rows are committed, a failing batch failing its callers only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createDb, migrateAudit, verifyAuditChain, type Kysely } from '@capstan/db';
import { createTestDatabase, type TestDatabase } from '@capstan/test/infra';
import { AuditWriter } from './audit-writer.js';

let database: TestDatabase;
let db: Kysely<unknown>;

beforeAll(async () => {
  database = await createTestDatabase('capstan_sync_audit');
  db = createDb(database.url);
  await migrateAudit(db);
});

afterAll(async () => {
  await db?.destroy();
  await database?.drop();
});

const result = (syncId: string, name: string) => ({
  sync_id: syncId,
  application: 'argocd/app',
  verb: 'apply',
  api_group: '',
  kind: 'ConfigMap',
  namespace: 'ns',
  name,
  identity: 'system:serviceaccount:ns:sa',
  http_status: 200,
  message: 'applied',
});

describe('the audit writer', () => {
  it('given 40 concurrent appends, when each resolves, then its rows are committed, in order, on one valid chain', async () => {
    const writer = new AuditWriter(db);
    const committedWhenResolved: boolean[] = [];
    await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        await writer.append('resource_results', [result(`s${i}`, 'a'), result(`s${i}`, 'b')]);
        const rows = await sql<{
          n: number;
        }>`select count(*)::int as n from audit.resource_results where sync_id = ${`s${i}`}`.execute(db);
        committedWhenResolved.push(rows.rows[0]!.n === 2);
      }),
    );
    expect(committedWhenResolved).toEqual(Array(40).fill(true));
    const order = await sql<{
      sync_id: string;
      name: string;
    }>`select sync_id, name from audit.resource_results order by id`.execute(db);
    for (let i = 0; i < 40; i++) {
      const mine = order.rows.filter((r) => r.sync_id === `s${i}`).map((r) => r.name);
      expect(mine).toEqual(['a', 'b']);
    }
    expect(await verifyAuditChain(db, 'resource_results')).toMatchObject({ ok: true, checked: 80 });
  });

  it('given a batch whose row cannot be stored, when appended, then its callers fail and later appends still succeed', async () => {
    const writer = new AuditWriter(db);
    const bad = writer.append('resource_results', [
      { ...result('bad', 'x'), name: null as unknown as string },
    ]);
    await expect(bad).rejects.toThrow();
    await expect(writer.append('resource_results', [result('after', 'y')])).resolves.toBeUndefined();
    expect(await verifyAuditChain(db, 'resource_results')).toMatchObject({ ok: true });
  });
});

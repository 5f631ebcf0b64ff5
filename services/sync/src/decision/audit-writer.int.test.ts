// Group-committed audit appends on real PostgreSQL: many concurrent syncs, one valid hash chain,
// every caller released only once its rows (and its own work) are committed, a failing row or work
// failing its own caller only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createDb, migrateAudit, verifyAuditChain, type Kysely, type Transaction } from '@capstan/db';
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

  it('given appends with work of their own, when the work of one caller fails, then the rows and work of every other caller and work are committed and only that caller fails', async () => {
    await sql`create table if not exists public.work_log (sync_id text primary key)`.execute(db);
    const writer = new AuditWriter(db);
    const work = (syncId: string, fail: boolean) => async (trx: Transaction<unknown>) => {
      await sql`insert into public.work_log (sync_id) values (${syncId})`.execute(trx);
      if (fail) throw new Error(`work of ${syncId} failed`);
      return syncId.toUpperCase();
    };
    const outcomes = await Promise.allSettled(
      ['w0', 'w1', 'w2', 'w3', 'w4'].map((id) =>
        writer.append('resource_results', [result(id, 'r')], work(id, id === 'w3')),
      ),
    );
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message))).toEqual([
      'W0',
      'W1',
      'W2',
      'work of w3 failed',
      'W4',
    ]);
    const logged = await sql<{
      sync_id: string;
    }>`select sync_id from public.work_log order by sync_id`.execute(db);
    expect(logged.rows.map((r) => r.sync_id)).toEqual(['w0', 'w1', 'w2', 'w4']);
    const audited = await sql<{ sync_id: string }>`
      select sync_id from audit.resource_results where sync_id like 'w%' order by sync_id`.execute(db);
    expect(audited.rows.map((r) => r.sync_id)).toEqual(['w0', 'w1', 'w2', 'w4']);
    expect(await verifyAuditChain(db, 'resource_results')).toMatchObject({ ok: true });
  });
});

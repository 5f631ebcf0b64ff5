// The operation queue's guarantees on real PostgreSQL: one running operation per Application,
// takeover of a dead runner's operation after its lease, and exactly one terminal event even when
// the first runner comes back and tries to finish too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createDb, migrateAudit, migrateToLatest } from '@capstan/db';
import {
  eventStoreMigrations,
  newEvent,
  readStream,
  syncFailed,
  syncSucceeded,
  type Envelope,
} from '@capstan/events';
import { createTestDatabase, type TestDatabase } from '@capstan/test/infra';
import { syncMigrations } from '../migrations/index.js';
import type { SyncDb } from '../sync.table.js';
import {
  claimOperation,
  enqueueOperation,
  finishOperation,
  nextDueMs,
  operationStream,
  requeueOperation,
  type ClaimedOperation,
} from './operations.repository.js';

let database: TestDatabase;
let db: SyncDb;

beforeAll(async () => {
  database = await createTestDatabase('capstan_sync_ops');
  db = createDb(database.url) as unknown as SyncDb;
  await migrateAudit(db);
  await migrateToLatest(db, {
    schema: 'sync',
    migrations: { ...eventStoreMigrations('sync'), ...syncMigrations },
  });
});

afterAll(async () => {
  await db?.destroy();
  await database?.drop();
});

const app = { namespace: 'argocd', name: 'guestbook' };
const meta = { subject: 'applications/argocd/guestbook', actor: 'test', source: 'capstan/sync' };
const enqueue = (operationId: string, appName = app.name) =>
  enqueueOperation(db, {
    operationId,
    appNamespace: app.namespace,
    appName,
    request: { operationId },
    triggerEventId: `e-${operationId}`,
    actor: 'alice',
    correlationId: null,
  });
const terminal = (op: ClaimedOperation, ok: boolean): Envelope[] => [
  ok
    ? newEvent(
        syncSucceeded.type,
        {
          operationId: op.operationId,
          application: app,
          revision: null,
          dryRun: false,
          identity: { impersonation: true, username: 'u' },
          resources: 0,
          pruned: 0,
        },
        meta,
      )
    : newEvent(
        syncFailed.type,
        { operationId: op.operationId, application: app, phase: 'apply', reason: 'x', identity: null },
        meta,
      ),
];
const terminalsOf = async (operationId: string) =>
  (await readStream(db, 'sync', operationStream(operationId)))
    .map((e) => ({ type: e.envelope.type }))
    .filter((r) => /\.(succeeded|failed)\.v1$/.test(r.type));

describe('the sync operation queue', () => {
  it('given the same request twice, when enqueued, then it is queued once', async () => {
    expect(await enqueue('dup')).toBe(true);
    expect(await enqueue('dup')).toBe(false);
    const claimed = await claimOperation(db, 60_000);
    expect(claimed?.operationId).toBe('dup');
    await finishOperation(db, claimed!, 'succeeded', 'ok', terminal(claimed!, true));
  });

  it('given two operations of one Application, when claimed, then the second waits until the first is finished, in order', async () => {
    await enqueue('first');
    await enqueue('second');
    await enqueue('other-app', 'other');
    const a = await claimOperation(db, 60_000);
    const b = await claimOperation(db, 60_000);
    const c = await claimOperation(db, 60_000);
    expect([a?.operationId, b?.operationId, c?.operationId]).toEqual(['first', 'other-app', undefined]);
    await finishOperation(db, a!, 'succeeded', 'ok', terminal(a!, true));
    const d = await claimOperation(db, 60_000);
    expect(d?.operationId).toBe('second');
    await finishOperation(db, d!, 'succeeded', 'ok', terminal(d!, true));
    await finishOperation(db, b!, 'succeeded', 'ok', terminal(b!, true));
  });

  it('given a runner that died, when its lease expires, then another takes over and only one terminal event is ever written', async () => {
    await enqueue('crash');
    const dead = await claimOperation(db, 5_000);
    expect(dead?.attempt).toBe(1);
    // Nobody may take it while the lease holds.
    expect(await claimOperation(db, 5_000)).toBeUndefined();
    await sql`update sync.operations set lease_until = now() - interval '1 second' where operation_id = 'crash'`.execute(
      db,
    );
    const successor = await claimOperation(db, 60_000);
    expect(successor).toMatchObject({ operationId: 'crash', attempt: 2 });
    expect(await finishOperation(db, successor!, 'succeeded', 'ok', terminal(successor!, true))).toBe(true);
    // The first runner comes back and tries to finish: refused, nothing appended.
    expect(await finishOperation(db, dead!, 'failed', 'late', terminal(dead!, false))).toBe(false);
    expect(await terminalsOf('crash')).toEqual([{ type: 'io.capstan.sync.succeeded.v1' }]);
  });

  it('given a requeued operation, when its backoff has not passed, then it is not claimed', async () => {
    await enqueue('later');
    const op = await claimOperation(db, 60_000);
    await requeueOperation(db, op!, 60_000, 'unreachable');
    expect(await claimOperation(db, 60_000)).toBeUndefined();
    await sql`update sync.operations set not_before = now() where operation_id = 'later'`.execute(db);
    expect(await claimOperation(db, 60_000)).toMatchObject({ operationId: 'later', attempt: 2 });
  });

  it('given a retry and a running sync, when the workers are idle, then they are due at the nearer of its backoff and its lease, and at nothing once both are done', async () => {
    // Idle workers sleep until then (or until woken): a wake-up missed here is a retry or a
    // takeover that waits for the safety poll.
    await sql`delete from sync.operations`.execute(db);
    expect(await nextDueMs(db)).toBeUndefined();
    await enqueue('retry-later', 'retried');
    // Queued and claimable now: its claim is the wake-up, not a due time.
    expect(await nextDueMs(db)).toBeUndefined();
    const retried = await claimOperation(db, 60_000);
    await requeueOperation(db, retried!, 20_000, 'unreachable');
    expect(await nextDueMs(db)).toBeGreaterThan(15_000);
    expect(await nextDueMs(db)).toBeLessThanOrEqual(20_000);
    await enqueue('running', 'leased');
    const running = await claimOperation(db, 8_000);
    expect(running?.operationId).toBe('running');
    const due = await nextDueMs(db);
    expect(due).toBeGreaterThan(5_000);
    expect(due).toBeLessThanOrEqual(8_000);
    await finishOperation(db, running!, 'succeeded', 'ok', terminal(running!, true));
    await sql`update sync.operations set not_before = now() where operation_id = 'retry-later'`.execute(db);
    const again = await claimOperation(db, 60_000);
    await finishOperation(db, again!, 'succeeded', 'ok', terminal(again!, true));
    expect(await nextDueMs(db)).toBeUndefined();
  });
});

// Malformed messages on an external subject (`ext.<source>.git.push`, published by other systems)
// against the real NATS JetStream (with the services' permissions) and PostgreSQL: each is recorded
// once in the consumer's dead letters with its reason and terminated, never delivered again, and the
// consumer goes on with the good ones.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import { StringCodec } from 'nats';
import { createDb, migrateToLatest } from '@capstan/db';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import { connectBus, type Bus } from './bus.js';
import { streamName } from './streams.js';
import { eventStoreMigrations, type EventStoreDatabase } from '../outbox/event-store.table.js';
import { postgresDeadLetters } from '../consumers/dead-letters.js';
import { gitPush } from '../catalog/repository.js';
import { newEvent } from '../envelope/envelope.js';
import type { Envelope } from '../envelope/envelope.js';

const MALFORMED = 200;

const waitFor = async <T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> => {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

/** Malformed in every way a message can be: not JSON, not an envelope, unknown type, bad data. */
function malformed(i: number): string {
  const good = newEvent(
    gitPush.type,
    { repoURL: `https://git.example/r${i}.git` },
    { subject: `repositories/r${i}`, actor: 'ext:git', source: 'ext/git' },
  );
  switch (i % 5) {
    case 0:
      return `not json ${i}`;
    case 1:
      return JSON.stringify({ hello: i });
    case 2:
      return JSON.stringify({ ...good, type: 'io.capstan.ext.git.unknown.v1' });
    case 3:
      return JSON.stringify({ ...good, data: { repoURL: 42 } });
    default:
      return JSON.stringify({ ...good, data: { repoURL: 'https://u:secret@git.example/x.git' } });
  }
}

describe('malformed messages on an external subject', () => {
  let tbus: TestBus;
  let tdb: TestDatabase;
  let repo: Bus;
  let db: Kysely<EventStoreDatabase>;

  beforeAll(async () => {
    [tbus, tdb] = await Promise.all([createTestBus(), createTestDatabase()]);
    db = createDb<EventStoreDatabase>(tdb.url);
    await migrateToLatest(db, { schema: 'repo', migrations: eventStoreMigrations('repo') });
    // As startBackbone connects a service: the bus records every consumer's dead letters.
    repo = await connectBus({
      ...tbus.connection('repo'),
      service: 'repo',
      deadLetters: postgresDeadLetters(db, 'repo'),
    });
    await repo.provision();
  });
  afterAll(async () => {
    await repo?.close();
    await db?.destroy();
    await Promise.all([tbus?.cleanup(), tdb?.drop()]);
  });

  it('given 200 malformed git pushes among good ones, then 200 dead-letter rows, no redelivery, and every good one handled', async () => {
    const received: Envelope[] = [];
    const errors: number[] = [];
    const consumer = await repo.consume({
      durable: 'repo-git-push',
      events: [gitPush],
      // A short ack wait: a message that was not really terminated comes back within the test.
      ackWaitMs: 1_000,
      handle: async (e) => void received.push(e),
      onError: (_err, info) => void errors.push(info.action === 'dead-letter' ? 1 : 0),
    });
    // Published as another system does: its own ext user on its own ext subject.
    const ext = await tbus.connect('ext-git');
    const js = ext.jetstream();
    const sc = StringCodec();
    // `ext.git.push`: below the `git` source token, which only the ext-git user may publish.
    const subject = repo.subjectOf(gitPush.type);
    const goods: string[] = [];
    for (let i = 0; i < MALFORMED; i++) {
      await js.publish(subject, sc.encode(malformed(i)));
      if (i % 20 === 0) {
        const good = newEvent(
          gitPush.type,
          { repoURL: `https://git.example/good${i}.git` },
          { subject: `repositories/good${i}`, actor: 'ext:git', source: 'ext/git' },
        );
        goods.push(good.id);
        await js.publish(subject, sc.encode(JSON.stringify(good)));
      }
    }
    await waitFor('every good push', async () =>
      goods.every((id) => received.some((e) => e.id === id)) ? true : undefined,
    );
    const rows = await waitFor('200 dead letters', async () => {
      const r = await sql<{ n: string }>`select count(*) as n from repo.dead_letters`.execute(db);
      return Number(r.rows[0]!.n) >= MALFORMED ? Number(r.rows[0]!.n) : undefined;
    });
    // Three ack waits later nothing came back.
    await new Promise((r) => setTimeout(r, 3_500));
    const again = await sql<{ n: string }>`select count(*) as n from repo.dead_letters`.execute(db);
    expect([rows, Number(again.rows[0]!.n)]).toEqual([MALFORMED, MALFORMED]);
    const info = await repo.jsm.consumers.info(streamName(tbus.namespace, 'ext'), 'repo-git-push');
    expect({
      redelivered: info.num_redelivered,
      pending: info.num_ack_pending,
      waiting: info.num_pending,
    }).toEqual({ redelivered: 0, pending: 0, waiting: 0 });
    // Each malformed message was handled once: one dead-lettering each, no retry.
    expect([errors.length, errors.every((e) => e === 1)]).toEqual([MALFORMED, true]);
    const reasons = await sql<{ reason: string; deliveries: number; payload: string }>`
      select reason, deliveries, payload from repo.dead_letters order by stream_sequence`.execute(db);
    expect(new Set(reasons.rows.map((r) => r.deliveries))).toEqual(new Set([1]));
    expect(reasons.rows.slice(0, 5).map((r) => r.reason)).toEqual([
      'message is not json',
      expect.stringMatching(/^not a capstan cloudevent: /),
      'unknown event type io.capstan.ext.git.unknown.v1',
      expect.stringMatching(/fails its schema: data\.repoURL/),
      expect.stringMatching(/fails its schema: data\.repoURL: must not carry credentials/),
    ]);
    // The password a malformed push carried in its URL is not kept.
    expect(reasons.rows.filter((r) => r.payload.includes('secret'))).toEqual([]);
    expect(reasons.rows[4]!.payload).toContain('https://***@git.example/x.git');
    expect(received).toHaveLength(goods.length);
    await ext.close();
    await consumer.stop();
  }, 120_000);
});

// Replaying dead letters against the real NATS JetStream (each service as its own bus user) and
// PostgreSQL: the api lists every owner's dead letters through the library and commands a replay;
// the owning service hands the message to the consumer that gave up on it and records the outcome.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { StringCodec } from 'nats';
import { NotFoundError } from '@capstan/service';
import { createDb, migrateToLatest } from '@capstan/db';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@capstan/test/infra';
import { connectBus, type Bus } from '../bus/bus.js';
import { eventStoreMigrations, type EventStoreDatabase } from '../outbox/event-store.table.js';
import { postgresDeadLetters } from './dead-letters.js';
import { listDeadLetters, parseDeadLetterId, startDeadLetterReplay } from './dead-letter-replay.js';
import { gitPush } from '../catalog/repository.js';
import { deadLetterReplay } from '../catalog/dead-letters.js';
import { newEvent } from '../envelope/envelope.js';

const waitFor = async <T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> => {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

describe('dead-letter replay', () => {
  let tbus: TestBus;
  let tdb: TestDatabase;
  let repo: Bus;
  let api: Bus;
  let db: Kysely<EventStoreDatabase>;

  beforeAll(async () => {
    [tbus, tdb] = await Promise.all([createTestBus(), createTestDatabase()]);
    db = createDb<EventStoreDatabase>(tdb.url);
    for (const schema of ['repo', 'api'])
      await migrateToLatest(db, { schema, migrations: eventStoreMigrations(schema) });
    repo = await connectBus({
      ...tbus.connection('repo'),
      service: 'repo',
      deadLetters: postgresDeadLetters(db, 'repo'),
    });
    await repo.provision();
    api = await connectBus({ ...tbus.connection('api'), service: 'api' });
  });
  afterAll(async () => {
    await repo?.close();
    await api?.close();
    await db?.destroy();
    await Promise.all([tbus?.cleanup(), tdb?.drop()]);
  });

  it('given a push dead-lettered while its repository was unknown, when replayed after the fix, then the consumer handles it and the row says so; a malformed one fails again, recorded', async () => {
    const known = new Set<string>();
    const handled: string[] = [];
    await repo.consume({
      durable: 'repo-git-push',
      events: [gitPush],
      handle: async (e) => {
        if (!known.has(e.data.repoURL)) throw new NotFoundError(`no source watches ${e.data.repoURL}`);
        handled.push(e.id);
      },
    });
    await startDeadLetterReplay(repo, db, { service: 'repo', schema: 'repo' });
    const push = newEvent(
      gitPush.type,
      { repoURL: 'https://git.example/late.git' },
      { subject: 'repositories/late', actor: 'ext:git', source: 'ext/git' },
    );
    const ext = await tbus.connect('ext-git');
    await ext.jetstream().publish(repo.subjectOf(gitPush.type), StringCodec().encode(JSON.stringify(push)));
    await ext.jetstream().publish(repo.subjectOf(gitPush.type), StringCodec().encode('garbage'));
    await ext.close();

    const rows = await waitFor('two dead letters', async () => {
      const r = await listDeadLetters(db, { limit: 10 });
      return r.length === 2 ? r : undefined;
    });
    expect(rows.map((r) => [r.service, r.consumer, r.reason]).sort()).toEqual([
      ['repo', 'repo-git-push', 'message is not json'],
      ['repo', 'repo-git-push', 'no source watches https://git.example/late.git'],
    ]);
    expect(await listDeadLetters(db, { service: 'api', limit: 10 })).toEqual([]);

    // The fault is fixed; an operator (through the api) replays both.
    known.add('https://git.example/late.git');
    for (const r of rows)
      await api.publish(
        newEvent(
          deadLetterReplay.type,
          { service: r.service, id: r.id },
          { subject: `dead-letters/repo/${r.id}`, actor: 'user:admin', source: 'capstan/api' },
        ),
      );
    const replayed = await waitFor('both outcomes', async () => {
      const r = await listDeadLetters(db, { limit: 10 });
      return r.every((x) => x.replays === 1) ? r : undefined;
    });
    const outcome = Object.fromEntries(replayed.map((r) => [r.reason, [r.replayOutcome, r.replayedBy]]));
    expect(outcome).toEqual({
      'no source watches https://git.example/late.git': ['handled', 'user:admin'],
      'message is not json': ['failed: message is not json', 'user:admin'],
    });
    expect(handled).toEqual([push.id]);
    // A replay is not itself a dead letter: still two rows.
    expect(await listDeadLetters(db, { limit: 10 })).toHaveLength(2);
  }, 60_000);

  it('reads ids as operators write them', () => {
    expect(parseDeadLetterId('repo:17')).toEqual({ service: 'repo', id: 17 });
    for (const bad of ['', 'repo', 'repo:0', 'repo:-1', 'other:3', 'repo:1e3', 'repo:99999999999999999'])
      expect(parseDeadLetterId(bad)).toBeUndefined();
  });
});

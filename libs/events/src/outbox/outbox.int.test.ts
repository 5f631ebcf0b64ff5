// The write path against the real PostgreSQL and NATS JetStream: events and outbox rows commit with
// the state change, concurrent writers on one aggregate never both win, and a relay killed between
// publishing and deleting its rows loses nothing and publishes nothing twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sql, type Kysely } from 'kysely';
import { backboneFixture, type BackboneFixture } from '../test-support/backbone-fixture.js';
import type { Bus } from '../bus/bus.js';
import type { EventStoreDatabase } from './event-store.table.js';
import { appendToStream, readStream } from './event-store.repository.js';
import { handleCommand } from './command-handler.js';
import { startOutboxRelay } from './relay.js';
import { increment, testCatalog, type CounterIncremented } from '../test-support/counter.js';
import { ConcurrencyError } from '@capstan/service';

async function streamMessages(bus: Bus): Promise<{ ids: string[]; count: number }> {
  const info = await bus.jsm.streams.info(`${bus.namespace}_EVT`.toUpperCase());
  const ids: string[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const m = await bus.jsm.streams.getMessage(info.config.name, { seq });
    ids.push((m.json() as { id: string }).id);
  }
  return { ids, count: info.state.messages };
}

describe('outbox and event store', () => {
  let fx: BackboneFixture;
  let bus: Bus;
  let db: Kysely<EventStoreDatabase>;

  beforeAll(async () => {
    fx = await backboneFixture();
    ({ bus, db } = fx);
    await bus.provision(); // provisioning again changes nothing
  });
  afterAll(() => fx.close());

  it('refuses a stale expected version', async () => {
    await db.transaction().execute((trx) =>
      appendToStream(trx, {
        schema: 'svc',
        streamId: 'counters/x',
        expectedVersion: 0,
        events: [increment('counters/x')],
        catalog: testCatalog,
      }),
    );
    await expect(
      db.transaction().execute((trx) =>
        appendToStream(trx, {
          schema: 'svc',
          streamId: 'counters/x',
          expectedVersion: 0,
          events: [increment('counters/x')],
          catalog: testCatalog,
        }),
      ),
    ).rejects.toBeInstanceOf(ConcurrencyError);
    expect(await readStream(db, 'svc', 'counters/x')).toHaveLength(1);
  });

  it('serialises concurrent writers on one aggregate: every command applied exactly once', async () => {
    const writers = 12;
    await Promise.all(
      Array.from({ length: writers }, (_, i) =>
        handleCommand<number, CounterIncremented>(db, {
          schema: 'svc',
          streamId: 'counters/race',
          catalog: testCatalog,
          maxAttempts: writers + 2,
          initialState: () => 0,
          evolve: (sum, e) => sum + e.data.by,
          decide: () => [increment('counters/race', i + 1, `user:w${i}`)],
        }),
      ),
    );
    const history = await readStream(db, 'svc', 'counters/race');
    expect(history.map((h) => h.version)).toEqual(Array.from({ length: writers }, (_, i) => i + 1));
    expect(history.map((h) => h.envelope.sequence)).toEqual(history.map((h) => h.version));
    expect(new Set(history.map((h) => h.envelope.actor)).size).toBe(writers);
  });

  it('a refused command appends nothing', async () => {
    await expect(
      handleCommand<number, CounterIncremented>(db, {
        schema: 'svc',
        streamId: 'counters/refused',
        catalog: testCatalog,
        initialState: () => 0,
        evolve: (s) => s,
        decide: () => {
          throw new Error('counter is frozen');
        },
      }),
    ).rejects.toThrow('counter is frozen');
    expect(await readStream(db, 'svc', 'counters/refused')).toEqual([]);
  });

  it('survives a relay killed mid-batch: nothing lost, nothing published twice', async () => {
    const N = 300;
    for (let i = 0; i < N; i += 50) {
      await db.transaction().execute((trx) =>
        appendToStream(trx, {
          schema: 'svc',
          streamId: `counters/k${i}`,
          expectedVersion: 0,
          catalog: testCatalog,
          events: Array.from({ length: 50 }, () => increment(`counters/k${i}`)),
        }),
      );
    }
    const unsentBefore = await db
      .withSchema('svc')
      .selectFrom('outbox')
      .select('event_id')
      .orderBy('id')
      .execute();

    // 1. Killed in-process after publishing a batch and before deleting its rows.
    const crashing = await startOutboxRelay({
      db,
      databaseUrl: fx.tdb.url,
      schema: 'svc',
      bus,
      batchSize: 40,
      pollIntervalMs: 60_000,
      afterPublish: () => {
        throw new Error('killed between publish and delete');
      },
    });
    await expect(crashing.flush()).rejects.toThrow('killed');
    await crashing.stop();

    // 2. A real process SIGKILLed while it relays.
    const child = fork(
      fileURLToPath(new URL('../test-support/relay-process.ts', import.meta.url)),
      [fx.tdb.url, fx.tbus.url, fx.tbus.namespace],
      {
        execArgv: ['--import', 'tsx'],
        env: { ...process.env, ...fx.tbus.env('admin') },
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      },
    );
    await new Promise<void>((resolve) => child.once('message', () => resolve()));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));

    // 3. A healthy relay finishes the job.
    const relay = await startOutboxRelay({ db, databaseUrl: fx.tdb.url, schema: 'svc', bus, batchSize: 64 });
    await relay.flush();
    await relay.stop();

    const { ids, count } = await streamMessages(bus);
    const expected = unsentBefore.map((r) => r.event_id);
    const published = ids.filter((id) => expected.includes(id));
    expect(new Set(published).size).toBe(expected.length); // nothing lost
    expect(published).toHaveLength(expected.length); // nothing twice
    expect(published).toEqual(expected); // in commit order
    expect(count).toBe(ids.length);
    const unsent = await db.withSchema('svc').selectFrom('outbox').select('id').execute();
    expect(unsent).toEqual([]);
  });
  it('listens again after PostgreSQL drops its LISTEN connection: a commit still wakes the relay at once', async () => {
    // The poll is an hour: only a notification can deliver within the test.
    const errors: unknown[] = [];
    const relay = await startOutboxRelay({
      db,
      databaseUrl: fx.tdb.url,
      schema: 'svc',
      bus,
      pollIntervalMs: 3_600_000,
      onError: (err) => errors.push(err),
    });
    try {
      await relay.flush();
      const listeners = sql<{ pid: number }>`select pid from pg_stat_activity
        where datname = current_database() and query like 'listen %' and pid <> pg_backend_pid()`;
      const before = (await listeners.execute(db)).rows.map((r) => r.pid);
      expect(before.length).toBeGreaterThan(0);
      for (const pid of before) await sql`select pg_terminate_backend(${pid})`.execute(db);
      // A new LISTEN connection appears (a new backend), then a commit is published without a poll.
      await expect
        .poll(async () => (await listeners.execute(db)).rows.filter((r) => !before.includes(r.pid)).length, {
          timeout: 15_000,
        })
        .toBeGreaterThan(0);
      const { count: countBefore } = await streamMessages(bus);
      await db.transaction().execute((trx) =>
        appendToStream(trx, {
          schema: 'svc',
          streamId: 'counters/after-reconnect',
          expectedVersion: 0,
          catalog: testCatalog,
          events: [increment('counters/after-reconnect')],
        }),
      );
      await expect
        .poll(async () => (await streamMessages(bus)).count, { timeout: 15_000 })
        .toBe(countBefore + 1);
      expect(errors.length).toBeGreaterThan(0); // the dropped connection was reported, not swallowed
    } finally {
      await relay.stop();
    }
  });
});

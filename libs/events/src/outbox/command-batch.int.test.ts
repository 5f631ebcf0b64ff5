// handleCommands against the real PostgreSQL: many aggregates in one transaction get exactly the
// events, versions and outbox rows each would get alone; one refusal appends nothing anywhere; and
// batches racing single writers on the same streams apply every command exactly once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { backboneFixture, type BackboneFixture } from '../test-support/backbone-fixture.js';
import type { EventStoreDatabase } from './event-store.table.js';
import { readStream, readStreams } from './event-store.repository.js';
import { handleCommand, handleCommands } from './command-handler.js';
import { increment, testCatalog, type CounterIncremented } from '../test-support/counter.js';

const counter = {
  schema: 'svc',
  catalog: testCatalog,
  initialState: () => 0,
  evolve: (sum: number, e: CounterIncremented) => sum + e.data.by,
};

describe('handleCommands (many aggregates, one transaction)', () => {
  let fx: BackboneFixture;
  let db: Kysely<EventStoreDatabase>;

  beforeAll(async () => {
    fx = await backboneFixture();
    ({ db } = fx);
  });
  afterAll(() => fx.close());

  const outboxIds = async (eventIds: string[]) =>
    (
      await db
        .withSchema('svc')
        .selectFrom('outbox')
        .select('event_id')
        .where('event_id', 'in', eventIds)
        .execute()
    ).map((r) => r.event_id);

  it('appends each stream its own events at its own version, with outbox rows, and projects all', async () => {
    await handleCommand<number, CounterIncremented>(db, {
      ...counter,
      streamId: 'batch/a',
      decide: () => [increment('batch/a', 5)],
    });
    let projected: { streamId: string; state: number; version: number }[] = [];
    const results = await handleCommands<number, CounterIncremented>(db, {
      ...counter,
      commands: [
        { streamId: 'batch/a', decide: (sum, v) => [increment('batch/a', sum + v)] },
        { streamId: 'batch/b', decide: () => [increment('batch/b', 1), increment('batch/b', 2)] },
        { streamId: 'batch/c', decide: () => [] },
      ],
      project: async (_trx, written) => {
        projected = written.map((w) => ({ streamId: w.streamId, state: w.state, version: w.version }));
      },
    });
    expect(results.map((r) => [r.streamId, r.state, r.version, r.events.length])).toEqual([
      ['batch/a', 11, 2, 1],
      ['batch/b', 3, 2, 2],
      ['batch/c', 0, 0, 0],
    ]);
    expect(projected).toEqual(
      results.map((r) => ({ streamId: r.streamId, state: r.state, version: r.version })),
    );
    const a = await readStream(db, 'svc', 'batch/a');
    const b = await readStream(db, 'svc', 'batch/b');
    expect(a.map((e) => [e.version, e.envelope.sequence, e.envelope.subject])).toEqual([
      [1, 1, 'batch/a'],
      [2, 2, 'batch/a'],
    ]);
    expect(b.map((e) => [e.version, e.envelope.sequence])).toEqual([
      [1, 1],
      [2, 2],
    ]);
    const ids = results.flatMap((r) => r.events.map((e) => e.id));
    expect((await outboxIds(ids)).sort()).toEqual([...ids].sort());
    expect([...(await readStreams(db, 'svc', ['batch/a', 'batch/b', 'batch/c'])).keys()]).toEqual([
      'batch/a',
      'batch/b',
    ]);
  });

  it('a refusal of any command appends nothing to any stream and projects nothing', async () => {
    let projectedCalls = 0;
    await expect(
      handleCommands<number, CounterIncremented>(db, {
        ...counter,
        commands: [
          { streamId: 'refused/a', decide: () => [increment('refused/a')] },
          {
            streamId: 'refused/b',
            decide: () => {
              throw new Error('counter refused/b is frozen');
            },
          },
        ],
        project: async () => void projectedCalls++,
      }),
    ).rejects.toThrow('counter refused/b is frozen');
    expect(projectedCalls).toBe(0);
    expect((await readStreams(db, 'svc', ['refused/a', 'refused/b'])).size).toBe(0);
  });

  it('refuses two commands for one stream', async () => {
    await expect(
      handleCommands<number, CounterIncremented>(db, {
        ...counter,
        commands: [
          { streamId: 'dup/a', decide: () => [increment('dup/a')] },
          { streamId: 'dup/a', decide: () => [increment('dup/a')] },
        ],
      }),
    ).rejects.toThrow('one command per stream');
    expect(await readStream(db, 'svc', 'dup/a')).toEqual([]);
  });

  it('batches racing single writers on the same streams: every command applied exactly once', async () => {
    const streams = ['race/a', 'race/b', 'race/c'];
    const rounds = 6;
    await Promise.all([
      ...Array.from({ length: rounds }, (_, i) =>
        handleCommands<number, CounterIncremented>(db, {
          ...counter,
          maxAttempts: 4 * rounds,
          commands: streams.map((s) => ({ streamId: s, decide: () => [increment(s, 1, `user:batch${i}`)] })),
        }),
      ),
      ...Array.from({ length: rounds }, (_, i) =>
        handleCommand<number, CounterIncremented>(db, {
          ...counter,
          maxAttempts: 4 * rounds,
          streamId: 'race/b',
          decide: () => [increment('race/b', 1, `user:single${i}`)],
        }),
      ),
    ]);
    for (const s of streams) {
      const history = await readStream(db, 'svc', s);
      const expected = s === 'race/b' ? 2 * rounds : rounds;
      expect(history.map((h) => h.version)).toEqual(Array.from({ length: expected }, (_, i) => i + 1));
      expect(new Set(history.map((h) => h.envelope.actor)).size).toBe(expected);
    }
  });
});

// The consumer helper against the real NATS JetStream and PostgreSQL.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { Kysely } from 'kysely';
import { InvalidArgumentError, NotFoundError, UnavailableError, ValidationError } from '@capstan/service';
import { StringCodec } from 'nats';
import { backboneFixture, type BackboneFixture } from '../test-support/backbone-fixture.js';
import type { Bus } from './bus.js';
import { streamOfSubject } from './streams.js';
import type { EventStoreDatabase } from '../outbox/event-store.table.js';
import { postgresDeadLetters } from '../consumers/dead-letters.js';
import { applyOnce } from '../consumers/apply-once.js';
import { counterIncremented, counterReset, increment } from '../test-support/counter.js';
import type { Envelope } from '../envelope/envelope.js';

const waitFor = async <T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  ms = 15_000,
): Promise<T> => {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

describe('durable consumer', () => {
  let fx: BackboneFixture;
  let bus: Bus;
  let db: Kysely<EventStoreDatabase>;

  beforeAll(async () => {
    fx = await backboneFixture();
    ({ bus, db } = fx);
    await bus.provision(); // provisioning again changes nothing
  });
  afterAll(() => fx.close());

  it('dead-letters poison messages with the reason, records them, and keeps going', async () => {
    const received: Envelope[] = [];
    const consumer = await bus.consume({
      durable: 'poison-test',
      events: [counterIncremented],
      handle: async (e) => void received.push(e),
      deadLetters: postgresDeadLetters(db, 'svc'),
    });
    const subject = bus.subjectOf('io.capstan.counter.incremented.v1');
    const sc = StringCodec();
    await bus.js.publish(subject, sc.encode('this is not json'));
    await bus.js.publish(
      subject,
      sc.encode(JSON.stringify({ ...increment('counters/p'), type: 'io.capstan.counter.unknown.v1' })),
    );
    await bus.js.publish(
      subject,
      sc.encode(JSON.stringify({ ...increment('counters/p'), data: { by: 'lots' } })),
    );
    const good = increment('counters/p', 2);
    await bus.publish(good);

    await waitFor('the good event', () => received.find((e) => e.id === good.id));
    const dead = await waitFor('three dead letters', async () => {
      const rows = await db
        .withSchema('svc')
        .selectFrom('dead_letters')
        .selectAll()
        .orderBy('stream_sequence')
        .execute();
      return rows.length === 3 ? rows : undefined;
    });
    expect(dead.map((d) => d.reason)).toEqual([
      'message is not json',
      'unknown event type io.capstan.counter.unknown.v1',
      expect.stringMatching(/fails its schema: data\.by/),
    ]);
    expect(dead[0]!.payload).toBe('this is not json');

    // The same messages are on the dead-letter subject, with the reason in a header.
    const dlq = await bus.js.consumers.get(`${fx.tbus.namespace}_DLQ`.toUpperCase());
    const msgs = await dlq.fetch({ max_messages: 3, expires: 2000 });
    const reasons: string[] = [];
    for await (const m of msgs) {
      reasons.push(m.headers?.get('Capstan-Reason') ?? '');
      m.ack();
    }
    expect(reasons).toHaveLength(3);
    expect(reasons[1]).toBe('unknown event type io.capstan.counter.unknown.v1');
    await consumer.stop();
  });

  it('skips what its wildcard filter carries beyond its types without decoding it (no dead letter)', async () => {
    const received: Envelope[] = [];
    const recorded: string[] = [];
    const consumer = await bus.consume({
      durable: 'wildcard-test',
      events: [counterIncremented, counterReset],
      handle: async (e) => void received.push(e),
      deadLetters: {
        record: async (d) => void recorded.push(d.subject),
      },
    });
    const sc = StringCodec();
    // Under the consumer's filter (evt.counter.>), but no type of its: not even JSON.
    await bus.js.publish(`${fx.tbus.namespace}.evt.counter.other`, sc.encode('not for this consumer'));
    const good = increment('counters/w', 3);
    await bus.publish(good);
    // Delivered in stream order: the message before it was handled (and not dead-lettered).
    await waitFor('the good event', () => received.find((e) => e.id === good.id));
    expect(recorded.filter((subject) => subject.endsWith('.evt.counter.other'))).toEqual([]);
    const info = await bus.jsm.consumers.info(`${fx.tbus.namespace}_EVT`.toUpperCase(), 'wildcard-test');
    expect(info.config.filter_subject).toBe(`${fx.tbus.namespace}.evt.counter.>`);
    await consumer.stop();
  });

  it('retries a retryable failure with backoff, and dead-letters when deliveries run out', async () => {
    const attempts = new Map<string, number>();
    const flaky = increment('counters/r', 1);
    const doomed = increment('counters/r', 5);
    const terminal = increment('counters/r', 7);
    const done: string[] = [];
    const consumer = await bus.consume({
      durable: 'retry-test',
      events: [counterIncremented],
      maxDeliver: 3,
      backoff: { baseMs: 20, maxMs: 100 },
      deadLetters: postgresDeadLetters(db, 'svc'),
      handle: async (e, ctx) => {
        attempts.set(e.id, ctx.deliveryCount);
        if (e.id === flaky.id && ctx.deliveryCount < 2)
          throw new UnavailableError('target cluster unavailable');
        if (e.id === doomed.id) throw new Error('always broken');
        if (e.id === terminal.id) throw new NotFoundError('project does not exist');
        done.push(e.id);
      },
    });
    for (const e of [flaky, doomed, terminal]) await bus.publish(e);
    await waitFor('flaky event handled on its second delivery', () => done.includes(flaky.id));
    const rows = await waitFor('dead letters for doomed and terminal', async () => {
      // This consumer also sees the first test's poison messages; keep the two events of this test.
      const r = await db
        .withSchema('svc')
        .selectFrom('dead_letters')
        .selectAll()
        .where('consumer', '=', 'retry-test')
        .execute();
      const mine = r.filter((d) => [doomed.id, terminal.id].some((id) => d.payload.includes(id)));
      return mine.length === 2 ? mine : undefined;
    });
    expect(attempts.get(flaky.id)).toBe(2);
    expect(attempts.get(doomed.id)).toBe(3);
    expect(attempts.get(terminal.id)).toBe(1);
    expect(rows.map((r) => r.reason).sort()).toEqual([
      'gave up after 3 deliveries: always broken',
      'project does not exist',
    ]);
    await consumer.stop();
  });

  it('waits out a database outage far past maxDeliver, and still gives up on it in the end', async () => {
    // A real outage: node-postgres connecting to a loopback port nothing listens on.
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as net.AddressInfo;
    await new Promise((r) => server.close(r));
    const outage = async () => {
      const client = new pg.Client({ host: '127.0.0.1', port, connectionTimeoutMillis: 1_000 });
      await client.connect();
    };
    const waits = increment('counters/outage-waits', 1);
    const endless = increment('counters/outage-endless', 1);
    const deliveries = new Map<string, number>();
    let handled = false;
    const consumer = await bus.consume({
      durable: 'outage-test',
      events: [counterIncremented],
      maxDeliver: 3,
      outageMaxDeliver: 12,
      backoff: { baseMs: 10, maxMs: 20 },
      deadLetters: postgresDeadLetters(db, 'svc'),
      handle: async (e, ctx) => {
        if (e.id !== waits.id && e.id !== endless.id) return;
        deliveries.set(e.id, ctx.deliveryCount);
        // The database is back at the 8th delivery for one, never for the other.
        if (e.id === endless.id || ctx.deliveryCount < 8) await outage();
        handled = true;
      },
    });
    await bus.publish(waits);
    await bus.publish(endless);
    await waitFor('the event handled once the database is back', () => handled);
    const rows = await waitFor('the endless outage dead-lettered', async () => {
      // This consumer also sees the earlier tests' poison messages; keep the two events of this test.
      const r = (
        await db
          .withSchema('svc')
          .selectFrom('dead_letters')
          .selectAll()
          .where('consumer', '=', 'outage-test')
          .execute()
      ).filter((d) => [waits.id, endless.id].some((id) => d.payload.includes(id)));
      return r.length > 0 ? r : undefined;
    });
    expect(deliveries.get(waits.id)).toBe(8);
    expect(deliveries.get(endless.id)).toBe(12);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.payload).toContain(endless.id);
    expect(rows[0]!.reason).toMatch(/^gave up after 12 deliveries: .*ECONNREFUSED/);
    await consumer.stop();
  });

  it('dead-letters a validation error once and terms it: no retry, no second record', async () => {
    const invalid = increment('counters/v', 1);
    let handled = 0;
    const consumer = await bus.consume({
      durable: 'validation-test',
      events: [counterIncremented],
      maxDeliver: 5,
      backoff: { baseMs: 10, maxMs: 10 },
      ackWaitMs: 1_000,
      deadLetters: postgresDeadLetters(db, 'svc'),
      handle: async (e) => {
        if (e.id !== invalid.id) return;
        handled++;
        throw new ValidationError([{ field: 'data.by', description: 'must be positive' }]);
      },
    });
    await bus.publish(invalid);
    const mine = () =>
      db
        .withSchema('svc')
        .selectFrom('dead_letters')
        .selectAll()
        .where('consumer', '=', 'validation-test')
        .execute()
        .then((rows) => rows.filter((r) => r.payload.includes(invalid.id)));
    const rows = await waitFor('the dead letter', async () =>
      (await mine()).length > 0 ? mine() : undefined,
    );
    // Longer than the backoff and the ack wait together: a nak or a missing ack would have redelivered it.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(handled).toBe(1);
    expect(await mine()).toHaveLength(1);
    expect(rows[0]!.deliveries).toBe(1);
    expect(rows[0]!.reason).toBe('data.by: must be positive');
    const stream = streamOfSubject(bus.namespace, bus.subjectOf(invalid.type));
    const info = await bus.jsm.consumers.info(stream, 'validation-test');
    expect(info.num_ack_pending).toBe(0);
    expect(info.num_redelivered).toBe(0);
    await consumer.stop();
  });

  it('retries the dead-lettering itself when recording it fails, without calling the handler again', async () => {
    const e = increment('counters/dl', 1);
    let handled = 0;
    let recordAttempts = 0;
    const recorded: string[] = [];
    const consumer = await bus.consume({
      durable: 'dlq-retry-test',
      events: [counterIncremented],
      maxDeliver: 1,
      backoff: { baseMs: 20, maxMs: 20 },
      handle: async (event) => {
        if (event.id !== e.id) return;
        handled++;
        throw new NotFoundError('project does not exist');
      },
      deadLetters: {
        record: async (entry) => {
          if (!entry.payload.includes(e.id)) return;
          if (++recordAttempts === 1) throw new Error('database restarting');
          recorded.push(entry.reason);
        },
      },
    });
    await bus.publish(e);
    await waitFor('the dead letter recorded on the second try', () => recorded.length === 1);
    expect(handled).toBe(1);
    expect(recordAttempts).toBe(2);
    expect(recorded).toEqual(['project does not exist']);
    await consumer.stop();
  });

  it('leaves one effect when an event is redelivered after its effect committed', async () => {
    await db.schema
      .withSchema('svc')
      .createTable('effects')
      .ifNotExists()
      .addColumn('event_id', 'text')
      .execute();
    const e = increment('counters/once', 1);
    let deliveries = 0;
    const consumer = await bus.consume({
      durable: 'once-test',
      events: [counterIncremented],
      backoff: { baseMs: 10, maxMs: 10 },
      handle: async (event, ctx) => {
        if (event.id !== e.id) return;
        deliveries = ctx.deliveryCount;
        await applyOnce(db, { schema: 'svc', consumer: 'once-test', eventId: event.id }, async (trx) => {
          await trx
            .withSchema('svc')
            .insertInto('effects' as never)
            .values({ event_id: event.id } as never)
            .execute();
        });
        // The process "crashes" after the effect committed and before the ack: the broker redelivers.
        if (ctx.deliveryCount === 1) throw new UnavailableError('crashed before ack');
      },
    });
    await bus.publish(e);
    await waitFor('second delivery', () => deliveries >= 2);
    const rows = await db
      .withSchema('svc')
      .selectFrom('effects' as never)
      .selectAll()
      .execute();
    expect(rows).toHaveLength(1);
    await consumer.stop();
  });

  it('hands batches to a batch handler and isolates the event that fails', async () => {
    const seen: number[] = [];
    const bad = increment('counters/b', 99);
    const events = Array.from({ length: 50 }, (_, i) => increment('counters/b', i + 1));
    await Promise.all([...events, bad].map((e) => bus.publish(e)));
    const consumer = await bus.consume({
      durable: 'batch-test',
      events: [counterIncremented],
      maxDeliver: 1,
      deadLetters: postgresDeadLetters(db, 'svc'),
      handleBatch: async (batch) => {
        if (batch.some((e) => e.id === bad.id)) throw new InvalidArgumentError('bad counter');
        for (const e of batch) if (e.subject === 'counters/b') seen.push(e.data.by);
      },
    });
    await waitFor('all good events', () => seen.length >= 50);
    expect(new Set(seen).size).toBe(50);
    expect(seen).not.toContain(99);
    await consumer.stop();
  });
});
